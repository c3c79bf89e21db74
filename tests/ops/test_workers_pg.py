"""Several worker processes share the work through PostgreSQL row claims: nothing runs twice.

Real `chipwatch worker` processes, a real PostgreSQL server and real HTTP servers on 127.0.0.1.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from sqlalchemy import update

from chipwatch.db import session_scope
from chipwatch.outbox.emit import emit
from chipwatch.paths import PROJECT_ROOT
from chipwatch.sources.models import Source
from chipwatch.webhooks.endpoints import create_endpoint
from chipwatch.webhooks.schemas import WebhookCreate
from tests.fixtures.database import postgres_url

pytestmark = pytest.mark.skipif(
    not postgres_url(), reason="row claims are a PostgreSQL feature: set CHIPWATCH_TEST_DATABASE_URL"
)

RSS = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><link>http://x/</link>
<item><guid>item-1</guid><title>Quarterly accelerator roundup</title><link>http://x/1</link>
<pubDate>Mon, 23 Nov 2026 10:00:00 GMT</pubDate></item></channel></rss>"""


class Recorder(ThreadingHTTPServer):
    daemon_threads = True
    # Three workers open a dozen connections at once; socketserver's backlog of 5 would drop some.
    request_queue_size = 64

    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:  # keep test output clean
        pass

    def _count(self, key: str) -> None:
        with self.server.lock:
            self.server.hits[key] += 1

    def do_GET(self) -> None:
        self._count(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "application/rss+xml")
        self.send_header("Content-Length", str(len(RSS)))
        self.end_headers()
        self.wfile.write(RSS)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self._count(self.headers.get("webhook-id", "?"))
        self.send_response(204)
        self.end_headers()


@pytest.fixture
def recorder():
    server = Recorder()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _start_workers(n: int) -> list[subprocess.Popen]:
    env = {**os.environ, "CHIPWATCH_FETCH_TIMEOUT_S": "5", "CHIPWATCH_CHECK_BATCH_SIZE": "20",
           "CHIPWATCH_LOG_LEVEL": "WARNING"}
    return [
        subprocess.Popen([sys.executable, "-m", "chipwatch.cli", "worker"], env=env, cwd=PROJECT_ROOT,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for _ in range(n)
    ]


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def _wait_until(predicate, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.25)
    return predicate()


def test_three_workers_fetch_each_due_source_once(db, recorder):
    with session_scope() as session:
        session.execute(update(Source).values(enabled=False))  # the seeded real feeds are unreachable here
        for i in range(300):
            session.add(Source(id=f"feed-{i:03d}", name=f"Feed {i}", url=f"{recorder.base}/feed/{i}",
                               trust="press", check_interval_s=3600))
    procs = _start_workers(3)
    try:
        done = _wait_until(lambda: len(recorder.hits) >= 300, 90)
        time.sleep(3)  # a second claim round must not fetch anything again
    finally:
        _stop(procs)
    errors = [p.stderr.read().decode()[-1500:] for p in procs]
    assert done, f"only {len(recorder.hits)} of 300 sources fetched; worker stderr: {errors}"
    assert set(recorder.hits) == {f"/feed/{i}" for i in range(300)}
    assert max(recorder.hits.values()) == 1, (recorder.hits.most_common(3), errors)


def test_two_workers_deliver_each_event_once(db, recorder):
    with session_scope() as session:
        session.execute(update(Source).values(enabled=False))
        endpoint_in = WebhookCreate(url=f"{recorder.base}/hook", event_types=["webhook.test"])
        hook = create_endpoint(session=session, allow_private=True, endpoint_in=endpoint_in)
    procs = _start_workers(2)
    try:
        with session_scope() as session:
            msg_ids = [emit(session, "webhook.test", {"webhook_id": hook.id, "message": f"m{i}"}).msg_id
                       for i in range(200)]
        done = _wait_until(lambda: len(recorder.hits) >= 200, 90)
        time.sleep(3)
    finally:
        _stop(procs)
    assert done, f"only {len(recorder.hits)} of 200 events delivered"
    assert set(recorder.hits) == set(msg_ids)
    assert max(recorder.hits.values()) == 1, recorder.hits.most_common(3)
