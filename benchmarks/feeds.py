"""Feed checking throughput and scale: chipwatch's scheduled check against raw httpx GETs.

A local server process (uvicorn, raw ASGI) serves N feeds (default 2,000): 80% answer 304 to a
conditional GET, 15% answer 200 with the same bytes every time, 5% answer 200 with one new item on
every request. Each feed holds ``--entries`` items (default 5, so the first pass stores exactly 10k
items for 2,000 feeds) that name chips of the knowledge base, so mention linking and signal evaluation
run for new items as they would in production.

Measured in the same run, against the same server, at the same concurrency (``fetch_concurrency``):

1. throughput: source checks per second through ``check_due`` (claim, fetch, parse, decide, store,
   mentions, signal evaluation, health, schedule) vs raw httpx GETs of the same URLs with the same
   conditional headers (so the server does the same work). Goal (issue 12): ratio >= 0.8.
2. memory: peak RSS of this process, and the tracemalloc peak of one check pass.
3. scale: the time of a check pass over all feeds with 10k stored items and again after bulk-inserting
   filler items up to 1M (SQLite). Goal: ratio <= 1.5.

All feeds share one host here, so the per-host limit is set to the overall concurrency.

    python benchmarks/feeds.py [--sources 2000] [--rounds 3] [--concurrency 16] [--large 1000000]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import resource
import statistics
import sys
import time
import tracemalloc
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import free_port, seeded_env, server, tempdir  # noqa: E402

FEED_APP = r"""
import sys
import time
from email.utils import formatdate

import uvicorn

COUNT, ENTRIES = int(sys.argv[2]), int(sys.argv[3])
START = time.time() - 30 * 86400
SUMMARY = (
    "OpenAI's Jalapeño inference accelerator was compared with NVIDIA's GB300 NVL72 on InferenceX at "
    "several interactivity targets; the vendor-reported figures cover tokens per second per user, "
    "tokens per megawatt and cost per million tokens, with speculative decoding on and disaggregated "
    "prefill. Independent reproductions are pending, and analysts expect MLPerf submissions later."
)


def kind(i):
    r = i % 20  # 16 in 20 answer 304, 3 in 20 the same 200, 1 in 20 something new
    return "etag" if r < 16 else ("same" if r < 19 else "new")


def item(i, k):
    return (
        f"<item><title>Feed {i} post {k}: Jalapeño vs GB300 on InferenceX</title>"
        f"<link>https://bench.example/{i}/posts/{k}</link><guid isPermaLink=\"false\">bench-{i}-{k}</guid>"
        f"<pubDate>{formatdate(START + k * 3600, usegmt=True)}</pubDate>"
        f"<description>{SUMMARY}</description></item>"
    )


def feed(i, newest):
    items = "".join(item(i, k) for k in range(newest, newest - ENTRIES, -1))
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
        f"<title>Bench feed {i}</title><link>https://bench.example/{i}/</link>{items}</channel></rss>"
    ).encode()


STATIC = {i: feed(i, ENTRIES) for i in range(COUNT) if kind(i) != "new"}
newest = {}
RSS = (b"content-type", b"application/rss+xml; charset=utf-8")


async def app(scope, receive, send):
    path = scope["path"]
    status, headers, body = 200, [RSS], b""
    if path == "/health":
        body = b"ok"
    else:
        i = int(path.rsplit("/", 1)[1])
        if kind(i) == "etag":
            etag = f'"v1-{i}"'.encode()
            headers.append((b"etag", etag))
            if dict(scope["headers"]).get(b"if-none-match") == etag:
                status, headers = 304, [(b"etag", etag)]
            else:
                body = STATIC[i]
        elif kind(i) == "same":
            body = STATIC[i]
        else:
            newest[i] = newest.get(i, ENTRIES) + 1
            body = feed(i, newest[i])
    headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", access_log=False,
            lifespan="off", loop="uvloop", http="httptools")
"""

FILLER_CHUNK = 20_000


def setup_sources(count: int, base_url: str) -> list[str]:
    """Disable the seeded (real, unreachable) feeds and add ``count`` local ones; returns their URLs."""
    from sqlalchemy import update

    from chipwatch.db import session_scope
    from chipwatch.sources.models import Source

    urls = [f"{base_url}/feeds/{i}" for i in range(count)]
    with session_scope() as session:
        session.execute(update(Source).values(enabled=False))
        session.add_all(
            Source(id=f"bench-{i}", name=f"Bench feed {i}", url=url, trust="press")
            for i, url in enumerate(urls)
        )
    return urls


def make_due() -> None:
    from sqlalchemy import update

    from chipwatch.db import session_scope
    from chipwatch.sources.models import Source

    with session_scope() as session:
        session.execute(update(Source).where(Source.id.like("bench-%")).values(next_check_at=None))


def stored_items() -> int:
    from sqlalchemy import func, select

    from chipwatch.db import session_scope
    from chipwatch.sources.models import Item

    with session_scope(write=False) as session:
        return session.scalar(select(func.count()).select_from(Item))


def conditional_headers(urls: list[str]) -> list[tuple[str, dict[str, str]]]:
    """Each URL with the validators chipwatch stored for it, as the raw baseline's request headers."""
    from sqlalchemy import select

    from chipwatch.db import session_scope
    from chipwatch.sources.models import Source

    with session_scope(write=False) as session:
        rows = dict(session.execute(select(Source.url, Source.etag).where(Source.id.like("bench-%"))).all())
    return [(url, {"If-None-Match": rows[url]} if rows.get(url) else {}) for url in urls]


async def raw_pass(requests: list[tuple[str, dict[str, str]]], concurrency: int) -> tuple[float, Counter]:
    """Seconds to GET every URL (bodies read) with plain httpx at ``concurrency``; status counts."""
    limits = httpx.Limits(
        max_connections=concurrency, max_keepalive_connections=concurrency, keepalive_expiry=30.0
    )
    statuses: Counter = Counter()
    async with httpx.AsyncClient(
        limits=limits, timeout=20.0, follow_redirects=False, trust_env=False
    ) as client:
        semaphore = asyncio.Semaphore(concurrency)

        async def one(url: str, headers: dict[str, str]) -> None:
            async with semaphore:
                response = await client.get(url, headers=headers)
                await response.aread()
                statuses[response.status_code] += 1

        started = time.perf_counter()
        await asyncio.gather(*(one(u, h) for u, h in requests))
        return time.perf_counter() - started, statuses


def check_pass(settings) -> tuple[float, Counter, int]:
    """Seconds for one ``check_due`` pass over every (due) bench feed; statuses; new items."""
    from chipwatch.sources.check_pass import check_due

    make_due()
    started = time.perf_counter()
    outcomes = asyncio.run(check_due(settings, worker_id="bench"))
    elapsed = time.perf_counter() - started
    errors = [o for o in outcomes if o.status == "error"]
    if errors:
        raise SystemExit(f"{len(errors)} checks failed, e.g. {errors[0].source_id}: {errors[0].error}")
    return elapsed, Counter(o.status for o in outcomes), sum(o.new_items for o in outcomes)


def add_filler_items(target: int, count: int) -> float:
    """Bulk-insert old items (executemany, in chunks) until ``target`` items are stored; seconds taken."""
    from sqlalchemy import insert, update

    from chipwatch.db import get_engine, session_scope
    from chipwatch.sources.models import Item, Source

    missing = target - stored_items()
    if missing <= 0:
        return 0.0
    started = time.perf_counter()
    engine = get_engine()
    old = datetime(2024, 1, 1, tzinfo=UTC)
    per_source = missing // count + 1
    made = 0
    with engine.begin() as conn:
        while made < missing:
            rows = []
            for n in range(made, min(made + FILLER_CHUNK, missing)):
                i, k = n % count, n // count
                guid = f"old-{i}-{k}"
                when = old + timedelta(hours=k + i % 24)
                rows.append(
                    {
                        "source_id": f"bench-{i}",
                        "guid": guid,
                        "link": f"https://bench.example/{i}/archive/{k}",
                        "link_norm": f"https://bench.example/{i}/archive/{k}",
                        "content_hash": hashlib.sha256(guid.encode()).hexdigest(),
                        "title": f"Archived post {k} of feed {i}",
                        "summary": "An older post about inference hardware.",
                        "content": "An older post about inference hardware.",
                        "author": None,
                        "published_at": when,
                        "published_is_estimated": False,
                        "first_seen_at": when,
                        "updated_at": None,
                        "sort_at": when,
                    }
                )
            conn.execute(insert(Item.__table__), rows)  # one executemany per chunk
            made += len(rows)
    with session_scope() as session:
        session.execute(
            update(Source)
            .where(Source.id.like("bench-%"))
            .values(items_count=Source.items_count + per_source)
        )
    return time.perf_counter() - started


def median_pass(settings, passes: int) -> float:
    return statistics.median(check_pass(settings)[0] for _ in range(passes))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sources", type=int, default=2000)
    ap.add_argument("--entries", type=int, default=5, help="items per feed")
    ap.add_argument("--rounds", type=int, default=5, help="raw/check rounds for the throughput ratio")
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--small", type=int, default=10_000, help="stored items for the first scale point")
    ap.add_argument("--large", type=int, default=1_000_000, help="stored items for the second scale point")
    ap.add_argument("--scale-passes", type=int, default=3)
    args = ap.parse_args()

    with tempdir() as tmp:
        env = seeded_env(tmp)
        os.environ.update(env)
        from chipwatch.config import get_settings
        from chipwatch.wiring import wire

        get_settings.cache_clear()
        wire()  # stored items go on to signal evaluation, as in the service and the worker
        settings = get_settings().model_copy(
            update={"fetch_concurrency": args.concurrency, "fetch_per_host_limit": args.concurrency}
        )
        port = free_port()
        app = [sys.executable, "-c", FEED_APP, str(port), str(args.sources), str(args.entries)]
        with server(app, env, port, "/health"):
            urls = setup_sources(args.sources, f"http://127.0.0.1:{port}")
            first, statuses, new = check_pass(settings)
            print(f"first pass: {args.sources} feeds in {first:.2f} s ({dict(statuses)}, {new} new items)")
            requests = conditional_headers(urls)

            raw_rates, check_rates = [], []
            for n in range(args.rounds):
                raw_s, raw_statuses = asyncio.run(raw_pass(requests, args.concurrency))
                check_s, statuses, new = check_pass(settings)
                raw_rates.append(args.sources / raw_s)
                check_rates.append(args.sources / check_s)
                print(
                    f"round {n + 1}: raw {args.sources / raw_s:7.0f} GET/s {dict(raw_statuses)}   "
                    f"chipwatch {args.sources / check_s:7.0f} checks/s {dict(statuses)}, {new} new items"
                )
            peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            tracemalloc.start()
            check_pass(settings)
            _, traced_peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()

            small = stored_items()
            if small < args.small:
                add_filler_items(args.small, args.sources)
                small = stored_items()
            small_s = median_pass(settings, args.scale_passes)
            fill_s = add_filler_items(args.large, args.sources)
            large = stored_items()
            large_s = median_pass(settings, args.scale_passes)

    raw_rate, check_rate = statistics.median(raw_rates), statistics.median(check_rates)
    # The ratio of each round (raw and check back to back) is steadier on a shared machine than the
    # ratio of medians taken from different moments.
    ratio = statistics.median(c / r for c, r in zip(check_rates, raw_rates, strict=True))
    print()
    print(f"feeds: {args.sources} (80% 304, 15% unchanged 200, 5% new items), concurrency {args.concurrency}")
    print(
        f"throughput: chipwatch {check_rate:.0f} checks/s, raw httpx {raw_rate:.0f} GET/s, "
        f"median ratio per round {ratio:.2f} (goal >= 0.8)"
    )
    print(
        f"memory: peak RSS {peak_rss_mb:.0f} MB; "
        f"tracemalloc peak of one check pass {traced_peak / 2**20:.1f} MB"
    )
    print(
        f"scale: check pass {small_s:.2f} s with {small} items, {large_s:.2f} s with {large} items "
        f"(bulk insert {fill_s:.0f} s); ratio {large_s / small_s:.2f} (goal <= 1.50)"
    )


if __name__ == "__main__":
    main()
