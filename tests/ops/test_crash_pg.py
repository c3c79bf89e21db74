"""Crash test on PostgreSQL: the API and two workers, workers killed with SIGKILL at random five times
while feeds and webhook deliveries run, and the database restarted once.

Everything is real: a PostgreSQL cluster of the test's own (``initdb``/``pg_ctl``, own port and
directory, so restarting it disturbs nothing else), ``chipwatch serve --no-scheduler`` and two
``chipwatch worker`` processes, feeds served over HTTP on 127.0.0.1 with new items appearing, and a
webhook receiver on 127.0.0.1. Afterwards: no event lost, none delivered twice under different ids,
no item lost or stored twice, no claim left stuck, and ``/readyz`` unready while the database was
down and ready after. The figures of the run are printed (``pytest -s``) and attached to failures.

It starts its own cluster, so it runs once per CI run: in the PostgreSQL run of the suite.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, text

from chipwatch.config import Settings
from chipwatch.db import dispose_engines, session_scope
from chipwatch.migrate import upgrade_to_head
from chipwatch.paths import PROJECT_ROOT
from chipwatch.seeds import load_seeds
from tests.fixtures.database import ADMIN_TOKEN, postgres_url
from tests.fixtures.pg_cluster import Cluster, free_port, pg_bin

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not postgres_url(),
        reason="runs once per CI run, in the PostgreSQL run (CHIPWATCH_TEST_DATABASE_URL set); "
        "it starts a PostgreSQL cluster of its own",
    ),
    pytest.mark.skipif(pg_bin() is None, reason="no PostgreSQL server binaries in /usr/lib/postgresql/*/bin"),
]

FEEDS = 30
LEASE_S = 6.0
RUN_S = 75.0  # feeds publish and test events are sent for this long, with the kills and the restart
SETTLE_S = 75.0  # then everything published must arrive within this
KILLS = 5
EVENT_TYPES = ["signal.status_changed", "signal.evidence_added", "signal.deadline_approaching",
               "source.health_changed", "webhook.test"]
HEADERS = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


# ------------------------------------------------------------------ feeds and the receiver
class Feeds(ThreadingHTTPServer):
    """``/feed/<n>``: an RSS feed holding every item published to it so far (newest first)."""

    daemon_threads = True

    def __init__(self) -> None:
        self.items: dict[int, list[tuple[str, str, float]]] = defaultdict(list)
        self.failing: set[int] = set()
        self.lock = threading.Lock()
        self.published: dict[tuple[str, str], float] = {}  # (source id, guid) -> publication time
        super().__init__(("127.0.0.1", 0), _FeedHandler)

    def url(self, n: int) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/feed/{n}"

    def publish(self, n: int, serial: int) -> None:
        guid = f"crash-item-{serial}"
        title = f"Jalapeno crashwatch bulletin {serial}"
        with self.lock:
            self.items[n].insert(0, (guid, title, time.time()))
            self.published[(f"crash-{n:02d}", guid)] = time.monotonic()

    def body(self, n: int) -> bytes:
        with self.lock:
            items = list(self.items[n])
        entries = "".join(
            f'<item><guid isPermaLink="false">{guid}</guid><title>{title}</title>'
            f"<link>http://crash.example/{guid}</link>"
            f"<description>{title}: a note from feed {n}.</description>"
            f"<pubDate>{formatdate(at, usegmt=True)}</pubDate></item>"
            for guid, title, at in items
        )
        return (f'<?xml version="1.0"?><rss version="2.0"><channel><title>Crash feed {n}</title>'
                f"<link>http://crash.example/{n}</link>{entries}</channel></rss>").encode()


class _FeedHandler(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        n = int(self.path.rsplit("/", 1)[1])
        time.sleep(0.2)  # keeps fetches in flight when a worker is killed
        if n in self.server.failing:
            self.send_response(500)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = self.server.body(n)
        self.send_response(200)
        self.send_header("Content-Type", "application/rss+xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Receiver(ThreadingHTTPServer):
    """Webhook receiver: records every delivery it accepts; answers 500 to about one in twenty."""

    daemon_threads = True

    def __init__(self) -> None:
        self.accepted: list[tuple[str, bytes]] = []  # (webhook-id, body)
        self.refused = 0
        self.lock = threading.Lock()
        self.rng = random.Random(7)
        super().__init__(("127.0.0.1", 0), _ReceiverHandler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/hook"


class _ReceiverHandler(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        time.sleep(0.02)  # keeps attempts in flight when a worker is killed
        with self.server.lock:
            refuse = self.server.rng.random() < 0.05
            if refuse:
                self.server.refused += 1
            else:
                self.server.accepted.append((self.headers.get("webhook-id", "?"), body))
        self.send_response(500 if refuse else 204)
        self.send_header("Content-Length", "0")
        self.end_headers()


def _serve(server: ThreadingHTTPServer) -> threading.Thread:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return thread


# ------------------------------------------------------------------ the run
class Run:
    """The processes, the traffic threads and the record of one crash run."""

    def __init__(self, cluster: Cluster, feeds: Feeds, receiver: Receiver, seed: int) -> None:
        self.cluster, self.feeds, self.receiver = cluster, feeds, receiver
        self.rng = random.Random(seed)
        self.logs = cluster.root.parent / f"{cluster.root.name}-logs"
        self.logs.mkdir()
        self.api_port = free_port()
        self.api_url = f"http://127.0.0.1:{self.api_port}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("CHIPWATCH_")}
        self.env = {
            **env, "CHIPWATCH_DATABASE_URL": cluster.url, "CHIPWATCH_DATA_DIR": str(self.logs / "data"),
            "CHIPWATCH_ADMIN_TOKEN": ADMIN_TOKEN, "CHIPWATCH_ALLOW_PRIVATE_NETWORKS": "1",
            "CHIPWATCH_CLAIM_LEASE_S": str(LEASE_S), "CHIPWATCH_FETCH_TIMEOUT_S": "5",
            "CHIPWATCH_FETCH_PER_HOST_LIMIT": "16", "CHIPWATCH_WEBHOOK_TIMEOUT_S": "5",
            "CHIPWATCH_WEBHOOK_RETRY_SCHEDULE_S": "0,1,1,1,2,2,2,2,2,2,2,2", "CHIPWATCH_LOG_LEVEL": "WARNING",
        }
        self.db = create_engine(cluster.url.replace("postgresql://", "postgresql+psycopg://"),
                                pool_pre_ping=True, pool_size=2)
        self.procs: list[subprocess.Popen] = []
        self.workers: list[subprocess.Popen] = []
        self.api: subprocess.Popen | None = None
        self.t0 = time.monotonic()
        self.traffic_on = threading.Event()
        self.finished = threading.Event()
        self.threads: list[threading.Thread] = []
        self.acked: dict[str, str] = {}  # msg_id -> message, for test events the API acknowledged
        self.unacked = 0
        self.readyz: list[tuple[float, int | str]] = []
        self.kills: list[dict[str, Any]] = []
        self.restart: dict[str, float] = {}
        self.endpoint_id = ""

    def now(self) -> float:
        return time.monotonic() - self.t0

    # -------------------------------------------------------------- processes
    def spawn(self, name: str, *args: str) -> subprocess.Popen:
        log = open(self.logs / f"{name}-{len(self.procs)}.log", "wb")  # noqa: SIM115 - kept for the process
        proc = subprocess.Popen([sys.executable, "-m", "chipwatch.cli", *args], env=self.env,
                                cwd=PROJECT_ROOT, stdout=log, stderr=subprocess.STDOUT)
        self.procs.append(proc)
        return proc

    def start_api(self) -> None:
        self.api = self.spawn("api", "serve", "--no-scheduler", "--host", "127.0.0.1",
                              "--port", str(self.api_port))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.api_url}/readyz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            assert self.api.poll() is None, f"the API exited: {self.tail('api')}"
            time.sleep(0.2)
        raise AssertionError(f"the API did not become ready: {self.tail('api')}")

    def tail(self, name: str, chars: int = 3000) -> str:
        logs = sorted(self.logs.glob(f"{name}-*.log"))
        return "\n".join(p.read_text(errors="replace")[-chars:] for p in logs)

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.db.dispose()

    # -------------------------------------------------------------- database reads (it may be down)
    def rows(self, sql: str, **params: Any) -> list[Any]:
        with self.db.connect() as conn:
            return list(conn.execute(text(sql), params))

    def held_by(self, pid: int) -> tuple[int, int]:
        """How many sources and deliveries the worker with ``pid`` holds claims on."""
        pattern = f"%:{pid}:%"
        sources = self.rows("SELECT count(*) FROM sources WHERE claimed_by LIKE :p", p=pattern)[0][0]
        deliveries = self.rows("SELECT count(*) FROM deliveries WHERE claimed_by LIKE :p", p=pattern)[0][0]
        return sources, deliveries

    # -------------------------------------------------------------- set-up through the API
    def prepare_database(self) -> None:
        """Migrate and seed, switch the seeded (unreachable) feeds off, add the crash feeds."""
        from chipwatch.sources.models import Source

        settings = Settings(database_url=self.cluster.url, data_dir=self.logs / "data",
                            admin_token=ADMIN_TOKEN)
        upgrade_to_head(settings)
        with session_scope(settings) as session:
            load_seeds(session=session)
        with session_scope(settings) as session:
            session.execute(text("UPDATE sources SET enabled = false"))
            for n in range(FEEDS):
                session.add(Source(id=f"crash-{n:02d}", name=f"Crash feed {n}", url=self.feeds.url(n),
                                   kind="rss", trust="press", check_interval_s=2))
        dispose_engines()

    def subscribe(self) -> None:
        """A signal the feeds' items resolve and keep adding evidence to, and the receiving endpoint."""
        definition = {
            "id": "crashwatch", "question": "Does the crash feed mention Jalapeno?",
            "opened_on": "2026-08-25",
            "review": "auto", "subjects": ["jalapeno"], "no_when": [],
            "yes_when": [{"item": {"mentions_all": ["jalapeno"], "terms_any": ["crashwatch"]}}],
        }
        r = httpx.post(f"{self.api_url}/v1/signals", json=definition, headers=HEADERS, timeout=30)
        assert r.status_code == 201, r.text
        r = httpx.post(f"{self.api_url}/v1/webhooks", headers=HEADERS, timeout=30,
                       json={"url": self.receiver.url, "event_types": EVENT_TYPES})
        assert r.status_code == 201, r.text
        self.endpoint_id = r.json()["id"]

    # -------------------------------------------------------------- traffic
    def _publish(self) -> None:
        serial = 0
        while self.traffic_on.is_set():
            serial += 1
            self.feeds.publish(self.rng.randrange(FEEDS), serial)
            # Feeds 0 and 1 fail for a while in the middle: health events, and items kept for later.
            self.feeds.failing = {0, 1} if 15 <= self.now() < 30 else set()
            time.sleep(0.2)

    def _send_tests(self) -> None:
        with httpx.Client(base_url=self.api_url, headers=HEADERS, timeout=10) as http:
            serial = 0
            while self.traffic_on.is_set():
                serial += 1
                message = f"crash test {serial}"
                try:
                    r = http.post(f"/v1/webhooks/{self.endpoint_id}/test", json={"message": message})
                    if r.status_code == 202:
                        self.acked[r.json()["msg_id"]] = message
                    else:
                        self.unacked += 1
                except httpx.HTTPError:
                    self.unacked += 1
                time.sleep(0.5)

    def _poll_readyz(self) -> None:
        with httpx.Client(base_url=self.api_url, timeout=5) as http:
            while not self.finished.is_set():
                try:
                    self.readyz.append((self.now(), http.get("/readyz").status_code))
                except httpx.HTTPError as exc:
                    self.readyz.append((self.now(), type(exc).__name__))
                time.sleep(0.2)

    def start_traffic(self) -> None:
        self.traffic_on.set()
        for target in (self._publish, self._send_tests, self._poll_readyz):
            thread = threading.Thread(target=target, daemon=True)
            thread.start()
            self.threads.append(thread)

    # -------------------------------------------------------------- chaos
    def schedule(self) -> tuple[list[float], float]:
        """Five kill times (at least 6 s apart) in the run and a database restart time 5 s from each."""
        while True:
            kills = sorted(self.rng.uniform(6, RUN_S - 6) for _ in range(KILLS))
            restart = self.rng.uniform(25, 50)
            if all(b - a >= 6 for a, b in zip(kills, kills[1:], strict=False)) and all(
                abs(k - restart) >= 5 for k in kills
            ):
                return kills, restart

    def _busy_worker(self, within_s: float) -> tuple[int, tuple[int, int]]:
        """A worker holding claims (looked for during ``within_s``), else one at random; and its claims."""
        deadline = time.monotonic() + within_s
        while True:
            order = self.rng.sample(range(len(self.workers)), len(self.workers))
            for index in order:
                try:
                    held = self.held_by(self.workers[index].pid)
                except Exception:  # noqa: BLE001 - the database may be coming back
                    held = (-1, -1)
                if max(held) > 0 or time.monotonic() >= deadline:
                    return index, held
            time.sleep(0.05)

    def kill_a_worker(self) -> None:
        """SIGKILL a worker (one in the middle of work if there is one within 4 s), watch its claims
        being taken over, start a new one."""
        index, held = self._busy_worker(4.0)
        victim = self.workers[index]
        victim.send_signal(signal.SIGKILL)
        victim.wait(10)
        record = {"at_s": round(self.now(), 1), "pid": victim.pid, "sources_held": held[0],
                  "deliveries_held": held[1], "taken_over_after_s": None}
        self.kills.append(record)
        watcher = threading.Thread(target=self._watch_takeover, args=(record, time.monotonic()), daemon=True)
        watcher.start()
        self.threads.append(watcher)
        time.sleep(1.0)
        self.workers[index] = self.spawn("worker", "worker")

    def _watch_takeover(self, record: dict[str, Any], killed_at: float) -> None:
        """Record when no row is claimed by the dead worker any more (its claims lapsed and were taken)."""
        while time.monotonic() - killed_at < 120 and not self.finished.is_set():
            try:
                if self.held_by(record["pid"]) == (0, 0):
                    record["taken_over_after_s"] = round(time.monotonic() - killed_at, 1)
                    return
            except Exception:  # noqa: BLE001 - database restarting: look again
                pass
            time.sleep(0.25)

    def restart_database(self) -> None:
        """Stop PostgreSQL, wait until /readyz says unready, keep it down 3 s, start it, wait for ready."""
        self.restart["stop_s"] = round(self.now(), 1)
        self.cluster.stop("fast")
        self.restart["stopped_s"] = round(self.now(), 1)
        self._await_readyz(lambda status: status != 200, 10, "unready while the database is down")
        self.restart["unready_seen_s"] = round(self.now(), 1)
        time.sleep(3)
        self.restart["start_s"] = round(self.now(), 1)
        self.cluster.start()
        self.restart["started_s"] = round(self.now(), 1)
        self._await_readyz(lambda status: status == 200, 30, "ready once the database is back")
        self.restart["ready_again_s"] = round(self.now(), 1)

    def _await_readyz(self, wanted, timeout_s: float, what: str) -> None:
        deadline = time.monotonic() + timeout_s
        seen = len(self.readyz)
        while time.monotonic() < deadline:
            if any(wanted(status) for _t, status in self.readyz[seen:]):
                return
            time.sleep(0.1)
        raise AssertionError(f"/readyz was not {what} within {timeout_s} s: {self.readyz[seen:][-10:]}")

    def chaos(self) -> None:
        kills, restart = self.schedule()
        self.restart["planned_s"] = round(restart, 1)
        plan = sorted([(t, "kill") for t in kills] + [(restart, "restart")])
        for at, what in plan:
            time.sleep(max(0.0, at - self.now()))
            self.kill_a_worker() if what == "kill" else self.restart_database()
        time.sleep(max(0.0, RUN_S - self.now()))
        self.traffic_on.clear()

    # -------------------------------------------------------------- the outcome
    def stored_items(self) -> list[tuple[str, str]]:
        rows = self.rows("SELECT source_id, guid FROM items WHERE source_id LIKE 'crash-%'")
        return [tuple(r) for r in rows]

    def expected_events(self) -> list[Any]:
        """Events the endpoint subscribed to, written after it subscribed: every one must arrive."""
        return self.rows(
            "SELECT e.id, e.msg_id, e.type, e.data FROM events e WHERE e.type = ANY(:types)"
            " AND e.created_at >= (SELECT created_at FROM webhooks WHERE id = :ep) ORDER BY e.id",
            types=list(EVENT_TYPES), ep=self.endpoint_id,
        )

    def stuck_claims(self) -> dict[str, int]:
        """Claims held by a killed worker, or lapsed without being taken over, per table."""
        dead = [f"%:{k['pid']}:%" for k in self.kills] or ["-"]
        out = {}
        for table in ("sources", "deliveries"):
            held_by_dead = " OR ".join(f"claimed_by LIKE :d{i}" for i in range(len(dead)))
            sql = (f"SELECT count(*) FROM {table} WHERE claimed_by IS NOT NULL"
                   f" AND (claimed_until < now() - interval '1 second' OR {held_by_dead})")
            out[table] = self.rows(sql, **{f"d{i}": p for i, p in enumerate(dead)})[0][0]
        return out

    def pending(self) -> dict[str, int]:
        """What is still on its way: items not stored, events not delivered, claims stuck."""
        published = set(self.feeds.published)
        accepted = {msg_id for msg_id, _body in self.receiver.accepted}
        expected = {r.msg_id for r in self.expected_events()}
        undelivered = self.rows(
            "SELECT count(*) FROM deliveries WHERE webhook_id = :ep AND status <> 'succeeded'",
            ep=self.endpoint_id,
        )[0][0]
        return {
            "items_missing": len(published - set(self.stored_items())),
            "events_not_fanned_out": self.rows("SELECT count(*) FROM events WHERE NOT dispatched")[0][0],
            "deliveries_not_succeeded": undelivered,
            "events_not_received": len(expected - accepted),
            **{f"stuck_{k}": v for k, v in self.stuck_claims().items()},
        }

    def settle(self) -> dict[str, int]:
        deadline = time.monotonic() + SETTLE_S
        left: dict[str, int] = {}
        while time.monotonic() < deadline:
            try:
                left = self.pending()
            except Exception as exc:  # noqa: BLE001 - report rather than hide a database failure
                left = {"database_error": 1, "error": str(exc)[:200]}  # type: ignore[dict-item]
            if not any(left.values()):
                return left
            time.sleep(1.0)
        return left


def _logical_key(kind: str, data: dict[str, Any]) -> tuple:
    """What makes two events the same announcement, whatever their ids."""
    if kind == "signal.evidence_added":
        evidence = data["evidence"]
        return kind, data["signal_id"], evidence["ref_kind"], evidence["ref_id"], evidence["side"]
    if kind in ("signal.status_changed", "signal.deadline_approaching"):
        return kind, data["signal_id"], data["version"], data.get("days_left")
    if kind == "source.health_changed":
        return kind, data["source_id"], data["healthy"], data["last_checked_at"]
    return kind, data.get("message")


def _verify(run: Run, left: dict[str, int]) -> dict[str, Any]:
    """Check the end state; returns the figures of the run."""
    stored = run.stored_items()
    events = run.expected_events()
    accepted = Counter(msg_id for msg_id, _body in run.receiver.accepted)
    bodies: dict[str, set[bytes]] = defaultdict(set)
    for msg_id, body in run.receiver.accepted:
        bodies[msg_id].add(body)
    keys = defaultdict(set)
    for e in events:
        keys[_logical_key(e.type, e.data)].add(e.msg_id)
    deliveries = Counter(r[0] for r in run.rows("SELECT event_id FROM deliveries WHERE webhook_id = :ep",
                                                  ep=run.endpoint_id))
    figures = {
        "items": {"published": len(run.feeds.published), "stored": len(stored),
                  "stored_twice": sum(n > 1 for n in Counter(stored).values())},
        "events": dict(Counter(e.type for e in events)),
        "deliveries": {"received": sum(accepted.values()), "distinct_ids": len(accepted),
                       "same_id_repeats": sum(n - 1 for n in accepted.values()),
                       "refused_by_receiver_500": run.receiver.refused},
        "test_events": {"acknowledged": len(run.acked), "not_acknowledged": run.unacked},
        "kills": run.kills, "database_restart": run.restart,
        "readyz_unready_samples": sum(1 for _t, s in run.readyz if s != 200), "left_at_end": left,
    }
    assert not any(left.values()), f"not settled within {SETTLE_S} s: {left}"
    assert set(run.feeds.published) == set(stored), "items lost or unexpected"
    assert figures["items"]["stored_twice"] == 0, "an item was stored twice"
    assert set(run.acked) <= {e.msg_id for e in events}, "an acknowledged test event is not in the outbox"
    assert {e.msg_id for e in events} <= set(accepted), "an event was never delivered"
    assert all(deliveries[e.id] == 1 for e in events), "an event was fanned out more than once"
    assert all(len(b) == 1 for b in bodies.values()), "one webhook-id carried different bodies"
    twice = {k: ids for k, ids in keys.items() if len(ids) > 1}
    assert not twice, f"announced twice under different ids: {list(twice.items())[:3]}"
    assert figures["events"].get("signal.evidence_added", 0) > 0, "the feeds' items never reached the signal"
    return figures


def test_sigkilled_workers_and_a_database_restart_lose_and_duplicate_nothing():
    seed = int(os.environ.get("CHIPWATCH_CRASH_SEED", time.time()))
    cluster, feeds, receiver = Cluster(), Feeds(), Receiver()
    _serve(feeds)
    _serve(receiver)
    run: Run | None = None
    try:
        cluster.init()
        run = Run(cluster, feeds, receiver, seed)
        run.prepare_database()
        run.start_api()
        run.subscribe()
        run.workers = [run.spawn("worker", "worker") for _ in range(2)]
        run.t0 = time.monotonic()
        run.start_traffic()
        run.chaos()
        run.figures_at_end_of_traffic = round(run.now(), 1)
        left = run.settle()
        run.finished.set()
        settled_s = round(run.now(), 1)
        ready_at_end = httpx.get(f"{run.api_url}/readyz", timeout=5).status_code
        try:
            figures = _verify(run, left)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\nseed {seed}; logs in {run.logs}\nworker log tail:\n"
                                 f"{run.tail('worker', 1500)}") from exc
        figures.update(seed=seed, traffic_s=RUN_S, settled_at_s=settled_s, lease_s=LEASE_S)
        print("\ncrash test figures:", json.dumps(figures, indent=1, default=str))
        assert ready_at_end == 200
    finally:
        if run is not None:
            run.finished.set()
            run.traffic_on.clear()
            run.stop_all()
        feeds.shutdown()
        receiver.shutdown()
        cluster.remove()
    shutil.rmtree(run.logs, ignore_errors=True)
