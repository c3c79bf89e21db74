"""Webhook fan-out throughput: one signal change delivered to 500 endpoints on a local receiver.

Each round commits one ``signal.status_changed`` event and times the dispatcher from that commit until
all 500 deliveries are recorded as succeeded (fan-out, claims, signing, HTTP, attempt log).  The
baseline, in the same run and against the same receiver process, is plain httpx POSTs of the same
bodies at the same concurrency with no database and no signing.  Prints deliveries/s for both and the
ratio dispatcher / raw (goal >= 0.6).

    python benchmarks/webhooks.py [--endpoints 500] [--rounds 5] [--concurrency 64]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from datetime import UTC, date, datetime
from pathlib import Path
from types import SimpleNamespace

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import free_port, seeded_env, server, tempdir  # noqa: E402

RECEIVER_APP = '''
import sys
import uvicorn

async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    more = True
    while more:
        message = await receive()
        more = message.get("more_body", False)
    await send({"type": "http.response.start", "status": 204, "headers": []})
    await send({"type": "http.response.body", "body": b""})

uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", access_log=False)
'''


def sample_change() -> dict:
    """A realistic ``signal.status_changed`` payload with two pieces of deciding evidence."""
    from chipwatch.signals.events import status_changed_data

    now = datetime.now(UTC)
    signal = SimpleNamespace(question="Has an independent party reproduced Jalapeno's 104.3x figure?",
                             resolved_at=now)
    history = SimpleNamespace(signal_id="jalapeno-repro", version=1, from_status="open",
                              to_status="resolved", from_outcome=None, to_outcome="yes", cause="rule:0",
                              note=None, at=now, known_at=now)
    evidence = [
        SimpleNamespace(id=i, ref_kind="item", ref_id=str(1000 + i), side="yes", condition_index=0,
                        reason="mentions jalapeno and InferenceX", trust="independent", source_id="lab",
                        title="Independent lab reproduces the figure", url=f"https://example.com/{i}",
                        published_at=now, recorded_at=now)
        for i in range(2)
    ]
    return status_changed_data(signal, history, evidence)


def subscribe_all(receiver_port: int, n: int) -> None:
    from chipwatch.db import session_scope
    from chipwatch.signals.models import Signal
    from chipwatch.webhooks import endpoints
    from chipwatch.webhooks.schemas import WebhookCreate

    with session_scope() as session:
        if session.get(Signal, "jalapeno-repro") is None:
            session.add(Signal(id="jalapeno-repro", question="?", opened_on=date(2026, 8, 25)))
        for i in range(n):
            url = f"http://127.0.0.1:{receiver_port}/hooks/{i}"
            endpoints.create_endpoint(session=session, endpoint_in=WebhookCreate(url=url), allow_private=True)


async def dispatcher_round(dispatcher, data: dict, n: int) -> float:
    """Seconds from committing one event to all ``n`` deliveries recorded as succeeded."""
    from chipwatch.db import session_scope
    from chipwatch.outbox.emit import emit

    def commit() -> None:
        with session_scope() as session:
            emit(session, "signal.status_changed", data, signal_id="jalapeno-repro")

    await asyncio.to_thread(commit)
    started = time.perf_counter()
    stats = await dispatcher.drain()
    elapsed = time.perf_counter() - started
    if stats.succeeded != n:
        raise RuntimeError(f"expected {n} successful deliveries, got {stats}")
    return elapsed


async def raw_round(client: httpx.AsyncClient, urls: list[str], body: bytes, concurrency: int) -> float:
    """Seconds for plain POSTs of ``body`` to every URL, ``concurrency`` at a time."""
    sem = asyncio.Semaphore(concurrency)

    async def post(url: str) -> None:
        async with sem:
            r = await client.post(url, content=body, headers={"content-type": "application/json"})
            if r.status_code != 204:
                raise RuntimeError(f"receiver answered {r.status_code}")

    started = time.perf_counter()
    await asyncio.gather(*(post(u) for u in urls))
    return time.perf_counter() - started


async def measure(args, receiver_port: int) -> tuple[list[float], list[float]]:
    from chipwatch.config import get_settings
    from chipwatch.webhooks import signing
    from chipwatch.webhooks.dispatcher import Dispatcher

    settings = get_settings()
    data = sample_change()
    body = signing.event_body("signal.status_changed", datetime.now(UTC), data).encode()
    urls = [f"http://127.0.0.1:{receiver_port}/hooks/{i}" for i in range(args.endpoints)]
    limits = httpx.Limits(max_connections=args.concurrency, max_keepalive_connections=args.concurrency)
    ours, raw = [], []
    async with Dispatcher(settings) as dispatcher, httpx.AsyncClient(limits=limits, timeout=30) as client:
        await dispatcher_round(dispatcher, data, args.endpoints)  # warm-up: connections, caches
        await raw_round(client, urls, body, args.concurrency)
        for _ in range(args.rounds):
            ours.append(await dispatcher_round(dispatcher, data, args.endpoints))
            raw.append(await raw_round(client, urls, body, args.concurrency))
    return ours, raw


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--endpoints", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--concurrency", type=int, default=64, help="CHIPWATCH_WEBHOOK_CONCURRENCY and raw")
    args = ap.parse_args()
    with tempdir() as tmp:
        env = seeded_env(tmp)
        env["CHIPWATCH_WEBHOOK_CONCURRENCY"] = str(args.concurrency)
        env["CHIPWATCH_LOG_LEVEL"] = "WARNING"
        os.environ.update(env)
        from chipwatch.config import get_settings

        get_settings.cache_clear()
        port = free_port()
        with server([sys.executable, "-c", RECEIVER_APP, str(port)], env, port, "/"):
            subscribe_all(port, args.endpoints)
            ours, raw = asyncio.run(measure(args, port))
    n = args.endpoints
    ours_rate, raw_rate = n / statistics.median(ours), n / statistics.median(raw)
    print(f"endpoints {n}, concurrency {args.concurrency}, rounds {args.rounds} (median)")
    print(f"  chipwatch dispatcher: {ours_rate:8.0f} deliveries/s  ({statistics.median(ours) * 1000:.0f} ms "
          f"per fan-out, best {n / min(ours):.0f}/s)")
    print(f"  raw httpx POSTs:      {raw_rate:8.0f} requests/s    ({statistics.median(raw) * 1000:.0f} ms, "
          f"best {n / min(raw):.0f}/s)")
    print(f"  ratio dispatcher/raw: {ours_rate / raw_rate:.2f}  (goal >= 0.6)")


if __name__ == "__main__":
    main()
