"""The scheduled check: claims, leases, concurrent workers, per-host limits, and the job declaration."""

from __future__ import annotations

import asyncio
import re
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from pytest_httpserver import HTTPServer
from sqlalchemy import select, update
from werkzeug.wrappers import Request, Response

from chipwatch.db import session_scope
from chipwatch.scheduler import collect_jobs
from chipwatch.sources import check_pass
from chipwatch.sources.check_pass import check_due, check_sources, claim_due
from chipwatch.sources.jobs import JOBS
from chipwatch.sources.models import Source
from tests.fixtures.sources import Entry, add_source, health_events, rss, source_row

FEED = rss([Entry("Groq ships LPU v2", guid="lpu-2", body="Groq's second LPU.")])


@pytest.fixture
def threaded_server() -> Iterator[HTTPServer]:
    """A local server that answers requests concurrently, each in its own thread."""
    server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    server.start()
    try:
        yield server
    finally:
        server.clear()
        if server.is_running():
            server.stop()


def seeded_feeds() -> set[str]:
    """The seed data's real feeds (unreachable from the test machine): disable them for these tests."""
    with session_scope() as session:
        ids = set(session.scalars(select(Source.id).where(Source.enabled.is_(True))))
        session.execute(update(Source).where(Source.id.in_(ids)).values(enabled=False))
    return ids


def run_check_due(settings, **kwargs):
    return asyncio.run(check_due(settings, **kwargs))


def _check_due_job():
    (job,) = [j for j in JOBS if j.id == "sources.check_due"]
    return job


def test_the_job_is_declared_and_collected():
    job = _check_due_job()
    assert (job.id, job.interval_s, job.run_at_start) == ("sources.check_due", 30, True)
    assert "sources.check_due" in {j.id for j in collect_jobs()}


def test_only_due_enabled_feeds_are_checked(db, httpserver):
    seeded_feeds()
    httpserver.expect_request("/feed.xml").respond_with_data(FEED)
    url = httpserver.url_for("/feed.xml")
    now = datetime.now(UTC)
    add_source("never-checked", url)
    add_source("overdue", url + "?a", next_check_at=now - timedelta(minutes=5))
    add_source("later", url + "?b", next_check_at=now + timedelta(hours=1))
    add_source("switched-off", url + "?c", enabled=False)
    add_source("article", url + "?d", kind="article")
    outcomes = run_check_due(db)
    assert sorted(o.source_id for o in outcomes) == ["never-checked", "overdue"]
    assert all(o.status == "ok" and o.new_items == 1 for o in outcomes)
    for source_id in ("never-checked", "overdue"):
        source = source_row(source_id)
        assert (source.claimed_until, source.claimed_by) == (None, None)
        assert source.next_check_at > now
    assert source_row("later").last_checked_at is None
    assert run_check_due(db) == []  # nothing is due any more


def test_the_seeded_real_feeds_fail_politely(db, monkeypatch):
    """The seed's real feeds cannot be reached from a test machine: every check ends as an error in
    the source's health and a health event, never as an exception."""
    import chipwatch.netguard as netguard

    def no_dns(host, port):
        raise netguard.HostResolutionError(f"cannot resolve host {host!r}: no network in tests")

    monkeypatch.setattr(netguard, "resolve_host", no_dns)
    outcomes = run_check_due(db.model_copy(update={"allow_private_networks": False}))
    ids = {o.source_id for o in outcomes}
    assert {"nvidia-blog", "openai-news", "inferencex-releases", "36kr-feed", "mlcommons-news"} <= ids
    assert len(ids) >= 20
    for outcome in outcomes:
        assert outcome.status == "error"
        assert outcome.error.startswith("DNS lookup failed"), outcome.error
        source = source_row(outcome.source_id)
        assert source.last_error == outcome.error
        assert source.consecutive_failures == 1
        assert len(health_events(outcome.source_id)) == 1


def test_a_live_claim_is_respected_and_an_expired_one_is_not(db, httpserver):
    seeded_feeds()
    httpserver.expect_request("/feed.xml").respond_with_data(FEED)
    url = httpserver.url_for("/feed.xml")
    now = datetime.now(UTC)
    add_source("held", url + "?held", claimed_by="other-worker", claimed_until=now + timedelta(minutes=5))
    add_source(
        "abandoned", url + "?abandoned", claimed_by="crashed-worker", claimed_until=now - timedelta(seconds=1)
    )
    outcomes = run_check_due(db, worker_id="me")
    assert [o.source_id for o in outcomes] == ["abandoned"]
    assert source_row("held").claimed_by == "other-worker"


def test_claim_due_marks_rows_and_orders_the_longest_overdue_first(db):
    seeded_feeds()
    now = datetime.now(UTC)
    add_source("a", "http://127.0.0.1:9/a", next_check_at=now - timedelta(minutes=1))
    add_source("b", "http://127.0.0.1:9/b", next_check_at=now - timedelta(hours=1))
    add_source("c", "http://127.0.0.1:9/c")
    with session_scope() as session:
        snaps = claim_due(
            session=session, worker_id="w1", limit=2, lease_until=now + timedelta(minutes=1), now=now
        )
    assert sorted(s.id for s in snaps) == ["b", "c"]
    assert source_row("b").claimed_by == "w1"
    with session_scope() as session:
        rest = claim_due(
            session=session, worker_id="w2", limit=5, lease_until=now + timedelta(minutes=1), now=now
        )
    assert [s.id for s in rest] == ["a"]


def test_a_lapsed_claim_on_a_never_checked_source_is_claimed_in_id_order_with_the_others(db):
    """Never-checked sources tie on next_check_at (null); the id breaks the tie. A claim rewrites its
    rows, which PostgreSQL then returns last among equals unless the order says otherwise: without the
    tie-break a dead worker's first sources waited behind every never-checked one."""
    seeded_feeds()
    for n in range(12):
        add_source(f"never-{n:02d}", f"http://127.0.0.1:9/{n}")
    now = datetime.now(UTC)
    with session_scope() as session:
        dead = claim_due(session=session, worker_id="dead", limit=3, lease_until=now + timedelta(seconds=1),
                         now=now)
    assert [s.id for s in dead] == ["never-00", "never-01", "never-02"]
    later = now + timedelta(seconds=2)  # the dead worker's lease has lapsed
    with session_scope() as session:
        taken = claim_due(session=session, worker_id="survivor", limit=4,
                          lease_until=later + timedelta(seconds=30), now=later)
    assert [s.id for s in taken] == ["never-00", "never-01", "never-02", "never-03"]


def test_concurrent_workers_never_check_a_source_twice(db, threaded_server):
    """Two check_due passes at once (separate threads, event loops and connections) share the due
    sources: every feed is fetched exactly once. On PostgreSQL this exercises FOR UPDATE SKIP LOCKED."""
    seeded_feeds()
    hits: Counter[str] = Counter()
    lock = threading.Lock()

    def handler(request: Request) -> Response:
        with lock:
            hits[request.path] += 1
        time.sleep(0.02)  # keep both workers busy at the same time
        return Response(FEED, content_type="application/rss+xml")

    threaded_server.expect_request(re.compile(r"^/feed/\d+$")).respond_with_handler(handler)
    count = 60
    with session_scope() as session:
        for i in range(count):
            session.add(Source(id=f"feed-{i}", name=f"Feed {i}", url=threaded_server.url_for(f"/feed/{i}")))
    settings = db.model_copy(
        update={"check_batch_size": 7, "fetch_concurrency": 4, "fetch_per_host_limit": 4}
    )
    results: dict[str, list] = {}
    barrier = threading.Barrier(2)

    def worker(name: str) -> None:
        barrier.wait()
        results[name] = run_check_due(settings, worker_id=name)

    threads = [threading.Thread(target=worker, args=(name,)) for name in ("w1", "w2")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert set(results) == {"w1", "w2"}
    assert sum(hits.values()) == count
    assert set(hits.values()) == {1}, [p for p, n in hits.items() if n > 1]
    checked = [o.source_id for r in results.values() for o in r]
    assert len(checked) == len(set(checked)) == count
    assert all(o.status == "ok" for r in results.values() for o in r)
    assert results["w1"] and results["w2"], "both workers took part"


def test_the_per_host_limit_holds(db, threaded_server):
    seeded_feeds()
    state = {"now": 0, "peak": 0}
    lock = threading.Lock()

    def handler(request: Request) -> Response:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.05)
        with lock:
            state["now"] -= 1
        return Response(FEED, content_type="application/rss+xml")

    threaded_server.expect_request(re.compile(r"^/h/\d+$")).respond_with_handler(handler)
    with session_scope() as session:
        for i in range(12):
            session.add(Source(id=f"h-{i}", name=f"H {i}", url=threaded_server.url_for(f"/h/{i}")))
    settings = db.model_copy(update={"fetch_concurrency": 8, "fetch_per_host_limit": 2})
    outcomes = run_check_due(settings)
    assert len(outcomes) == 12
    assert state["peak"] == 2


def test_check_sources_checks_named_sources_now(db, httpserver):
    httpserver.expect_request("/feed.xml").respond_with_data(FEED)
    add_source("later", httpserver.url_for("/feed.xml"), next_check_at=datetime.now(UTC) + timedelta(days=1))
    seen = []
    outcomes = asyncio.run(
        check_sources(["later", "nope", "36kr"], settings=db, on_outcome=lambda o: seen.append(o.source_id))
    )
    by_id = {o.source_id: o for o in outcomes}
    assert by_id["later"].new_items == 1
    assert by_id["nope"].error == "no source with id 'nope'"
    assert "is not a polled feed" in by_id["36kr"].error
    assert sorted(seen) == ["36kr", "later", "nope"]


def _claimed_now() -> dict[str, object]:
    with session_scope(write=False) as session:
        rows = session.execute(select(Source.id, Source.claimed_until).where(Source.claimed_by.is_not(None)))
        return dict(rows.all())


def test_a_pass_claims_only_what_it_is_about_to_fetch(db, threaded_server):
    """With four fetch slots, a pass over 30 slow feeds never holds more than the slots it fetches with
    (and the few results waiting for the writer), instead of a whole batch ahead."""
    seeded_feeds()

    def handler(request: Request) -> Response:
        time.sleep(0.3)
        return Response(FEED, content_type="application/rss+xml")

    threaded_server.expect_request(re.compile(r"^/slow/\d+$")).respond_with_handler(handler)
    with session_scope() as session:
        for i in range(30):
            url = threaded_server.url_for(f"/slow/{i}")
            session.add(Source(id=f"slow-{i:02d}", name=f"Slow {i}", url=url))
    limits = {"fetch_concurrency": 4, "fetch_per_host_limit": 4, "check_batch_size": 50}
    settings = db.model_copy(update=limits)
    peak, stop = [0], threading.Event()

    def watch() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], len(_claimed_now()))
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        outcomes = run_check_due(settings, worker_id="me")
    finally:
        stop.set()
        watcher.join()
    assert sorted(o.source_id for o in outcomes) == [f"slow-{i:02d}" for i in range(30)]
    assert all(o.status == "ok" for o in outcomes)
    # Four fetching, plus at most four finished fetches whose results wait for the group commit.
    assert 4 <= peak[0] <= 8, peak[0]
    assert _claimed_now() == {}


def test_a_claim_is_renewed_while_its_source_is_fetched(db, threaded_server):
    """A fetch longer than the lease keeps its claim (the heartbeat renews it): another worker
    claiming meanwhile gets nothing, and the feed is fetched once."""
    seeded_feeds()
    hits: Counter[str] = Counter()

    def handler(request: Request) -> Response:
        hits[request.path] += 1
        time.sleep(3.0)
        return Response(FEED, content_type="application/rss+xml")

    threaded_server.expect_request("/long").respond_with_handler(handler)
    add_source("long", threaded_server.url_for("/long"))
    lease_s = 0.9
    settings = db.model_copy(update={"claim_lease_s": lease_s})
    result: list = []
    worker = threading.Thread(target=lambda: result.append(run_check_due(settings, worker_id="holder")))
    worker.start()
    first_until = None
    stolen = []
    deadline = time.monotonic() + 2.7
    while time.monotonic() < deadline:
        row = source_row("long")
        if row.claimed_by == "holder":
            first_until = first_until or row.claimed_until
            now = datetime.now(UTC)
            with session_scope() as session:
                stolen += claim_due(session=session, worker_id="thief", limit=5,
                                    lease_until=now + timedelta(seconds=lease_s), now=now)
        time.sleep(0.1)
    renewed_until = source_row("long").claimed_until
    worker.join(timeout=30)
    assert first_until is not None, "the pass never claimed the source"
    assert stolen == []
    assert renewed_until > first_until + timedelta(seconds=1), (first_until, renewed_until)
    [outcomes] = result
    assert [(o.source_id, o.status) for o in outcomes] == [("long", "ok")]
    assert hits["/long"] == 1
    assert (source_row("long").claimed_by, source_row("long").claimed_until) == (None, None)


def test_by_default_a_dead_workers_sources_are_picked_up_within_a_minute():
    """The lease lapses at most ``claim_lease_s`` after the last renewal, and an idle worker polls every
    job interval; together they stay within the minute the issue asks for."""
    from chipwatch.config import Settings

    job = _check_due_job()
    settings = Settings(_env_file=None)
    assert settings.claim_lease_s + job.interval_s <= 60
    assert settings.claim_lease_s / 3 >= 5, "renewals are no busier than one every few seconds"


def test_a_pass_switches_threads_quickly_while_it_runs_and_restores_the_interval(db, httpserver):
    """While a pass runs, the interpreter's switch interval is PASS_SWITCH_INTERVAL_S (the event loop
    does not wait 5 ms for the writer thread after each socket call); afterwards it is what it was."""
    seeded_feeds()
    httpserver.expect_request("/feed.xml").respond_with_data(FEED)
    add_source("quick", httpserver.url_for("/feed.xml"))
    before = sys.getswitchinterval()
    seen: list[float] = []
    outcomes = run_check_due(db, on_outcome=lambda o: seen.append(sys.getswitchinterval()))
    assert [o.status for o in outcomes] == ["ok"]
    assert seen == [check_pass.PASS_SWITCH_INTERVAL_S]
    assert sys.getswitchinterval() == before


def test_overlapping_passes_restore_the_switch_interval_when_the_last_ends():
    before = sys.getswitchinterval()
    first, second = check_pass._quick_thread_switches(), check_pass._quick_thread_switches()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert sys.getswitchinterval() == check_pass.PASS_SWITCH_INTERVAL_S
    second.__exit__(None, None, None)
    assert sys.getswitchinterval() == before
