"""A worker killed mid-pass: another worker running its own pass takes the dead one's sources over
within the lease. Real ``chipwatch worker`` processes, a real database (SQLite file or PostgreSQL)
and a real feed server on 127.0.0.1 whose answers take 1.5 s, so every pass is still under way when
the kill comes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from sqlalchemy import func, select, text, update

from chipwatch.db import session_scope
from chipwatch.paths import PROJECT_ROOT
from chipwatch.sources.models import Item, Source

pytestmark = pytest.mark.slow

SOURCES = 40
HANG_S = 1.5
LEASE_S = 4.0
FETCH_SLOTS = 4


class SlowFeeds(ThreadingHTTPServer):
    """``/feed/<n>``: one item of its own, answered after ``HANG_S``; every request's start is logged."""

    daemon_threads = True
    # Two workers open eight connections at once; socketserver's backlog of 5 would drop some.
    request_queue_size = 64

    def __init__(self) -> None:
        self.requests: list[tuple[str, float]] = []  # (path, time.monotonic() when it arrived)
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    def url(self, n: int) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/feed/{n}"

    def first_after(self, path: str, moment: float) -> float | None:
        with self.lock:
            return min((at for p, at in self.requests if p == path and at >= moment), default=None)


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        with self.server.lock:
            self.server.requests.append((self.path, time.monotonic()))
        time.sleep(HANG_S)
        n = self.path.rsplit("/", 1)[1]
        body = (f'<?xml version="1.0"?><rss version="2.0"><channel><title>Slow {n}</title>'
                f'<item><guid isPermaLink="false">slow-item-{n}</guid><title>Slow item {n}</title>'
                f"<link>http://slow.example/{n}</link></item></channel></rss>").encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/rss+xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def feeds():
    server = SlowFeeds()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _worker() -> subprocess.Popen:
    env = {**os.environ, "CHIPWATCH_FETCH_CONCURRENCY": str(FETCH_SLOTS), "CHIPWATCH_LOG_LEVEL": "WARNING",
           "CHIPWATCH_FETCH_PER_HOST_LIMIT": str(FETCH_SLOTS), "CHIPWATCH_CLAIM_LEASE_S": str(LEASE_S),
           "CHIPWATCH_FETCH_TIMEOUT_S": "10"}
    return subprocess.Popen([sys.executable, "-m", "chipwatch.cli", "worker"], env=env, cwd=PROJECT_ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _held(pid: int) -> set[str]:
    with session_scope(write=False) as session:
        return set(session.scalars(select(Source.id).where(Source.claimed_by.like(f"%:{pid}:%"))))


def _unchecked() -> int:
    with session_scope(write=False) as session:
        stmt = select(func.count()).where(Source.id.like("slow-%"), Source.last_checked_at.is_(None))
        return session.scalar(stmt)


def _wait(predicate, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def test_a_killed_workers_sources_are_taken_over_within_the_lease(db, feeds):
    with session_scope() as session:
        session.execute(update(Source).values(enabled=False))  # the seeded feeds are unreachable here
        for n in range(SOURCES):
            session.add(Source(id=f"slow-{n:02d}", name=f"Slow {n}", url=feeds.url(n), kind="rss",
                               trust="press", check_interval_s=3600))
    doomed, survivor = _worker(), _worker()
    try:
        assert _wait(lambda: _held(doomed.pid) and _held(survivor.pid), 60), "both workers should be mid-pass"
        doomed.send_signal(signal.SIGKILL)
        killed_at = time.monotonic()
        doomed.wait(10)
        # Read after the kill: what it held when it died (a lease outlives it by up to LEASE_S).
        held = _held(doomed.pid)
        assert _wait(lambda: _unchecked() == 0, 60), f"{_unchecked()} sources never checked"
    finally:
        for proc in (doomed, survivor):
            if proc.poll() is None:
                proc.terminate()
                proc.wait(15)
    # It held only what its fetch slots could take at once (plus results waiting for the writer),
    # not a batch ahead.
    assert 1 <= len(held) <= 2 * FETCH_SLOTS, held
    taken_after = {s: feeds.first_after(f"/feed/{int(s.split('-')[1])}", killed_at) for s in held}
    assert all(t is not None for t in taken_after.values()), taken_after
    delays = sorted(round(t - killed_at, 2) for t in taken_after.values())
    # Lapse within one lease, then the survivor's pass takes them as soon as two of its slots free up.
    assert delays[-1] <= LEASE_S + 2 * HANG_S + 1.0, delays
    with session_scope(write=False) as session:
        per_source = dict(session.execute(
            select(Item.source_id, func.count()).where(Item.source_id.like("slow-%")).group_by(Item.source_id)
        ).all())
        claims = session.scalar(text("SELECT count(*) FROM sources WHERE claimed_by IS NOT NULL"))
    assert per_source == {f"slow-{n:02d}": 1 for n in range(SOURCES)}
    assert claims == 0
