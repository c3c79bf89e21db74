"""A large feed is stored in several short write transactions (check.STORE_CHUNK_ITEMS entries each), so
other writers wait for one of them, never for the whole feed; and a batching writer bounds the entries
one transaction of a pass stores (writers.BatchWriter max_weight)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import event, text

from chipwatch.db import get_engine
from chipwatch.sources import check
from chipwatch.sources.hooks import on_items_stored
from chipwatch.sources.writers import BatchWriter, work_weight
from tests.fixtures.sources import Entry, add_source, items_of, rss, run_check, source_row

DAY = datetime(2026, 11, 20, tzinfo=UTC)
RSS = "application/rss+xml"


def _feed(n: int) -> list[Entry]:
    return [
        Entry(f"Story {i}", guid=f"g{i}", body=f"Body of story {i}", date=DAY - timedelta(hours=i))
        for i in range(n)
    ]


@pytest.fixture
def commits(db):
    """Write commits of the test's database, counted."""
    seen = []
    engine = get_engine(db)
    listener = lambda _conn: seen.append(1)  # noqa: E731
    event.listen(engine, "commit", listener)
    yield seen
    event.remove(engine, "commit", listener)


@pytest.fixture
def stored_batches():
    """The item ids each items-stored notification carried, in order."""
    batches: list[list[int]] = []

    def listener(*, session, item_ids):
        batches.append(list(item_ids))

    remove = on_items_stored(listener)
    yield batches
    remove()


def test_a_large_feed_is_stored_in_chunks_each_item_notified_once(
    db, httpserver, monkeypatch, commits, stored_batches
):
    monkeypatch.setattr(check, "STORE_CHUNK_ITEMS", 4)
    httpserver.expect_request("/big.xml").respond_with_data(rss(_feed(10)), content_type=RSS)
    add_source("big-news", httpserver.url_for("/big.xml"))
    commits.clear()

    outcome = run_check("big-news")

    assert outcome.status == "ok" and outcome.new_items == 10
    stored = items_of("big-news")
    assert sorted(i.title for i in stored) == sorted(f"Story {i}" for i in range(10))
    assert sorted(outcome.new_item_ids) == sorted(i.id for i in stored)
    # Entries 0-3 and 4-5 in transactions of their own, then the last 4 with the check's health.
    assert [len(b) for b in stored_batches] == [4, 2, 4]
    assert sorted(i for b in stored_batches for i in b) == sorted(i.id for i in stored)
    assert len(commits) >= 3
    source = source_row("big-news")
    assert source.items_count == 10 and source.last_status == "ok" and source.last_body_sha256

    # The same document again: nothing new, and nothing notified.
    stored_batches.clear()
    again = run_check("big-news")
    assert again.status == "ok" and again.new_items == 0 and again.updated_items == 0
    assert stored_batches == []
    assert len(items_of("big-news")) == 10


def test_a_failed_chunk_keeps_the_chunks_before_it_and_the_next_check_stores_the_rest(
    db, httpserver, monkeypatch, stored_batches
):
    monkeypatch.setattr(check, "STORE_CHUNK_ITEMS", 4)
    httpserver.expect_request("/big.xml").respond_with_data(rss(_feed(10)), content_type=RSS)
    add_source("flaky-news", httpserver.url_for("/big.xml"))
    calls = {"n": 0}

    def fail_second(*, session, item_ids):
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("listener failed")

    remove = on_items_stored(fail_second)
    try:
        failed = run_check("flaky-news")
    finally:
        remove()

    assert failed.status == "error" and "listener failed" in failed.error
    kept = items_of("flaky-news")
    assert sorted(i.title for i in kept) == [f"Story {i}" for i in range(4)]
    source = source_row("flaky-news")
    assert source.last_status == "error" and source.consecutive_failures == 1
    assert source.last_body_sha256 is None  # the body is read again next time

    ok = run_check("flaky-news")
    assert ok.status == "ok" and ok.new_items == 6
    assert sorted(i.title for i in items_of("flaky-news")) == sorted(f"Story {i}" for i in range(10))
    assert source_row("flaky-news").items_count == 10


def test_a_batching_writer_bounds_the_entries_one_transaction_stores(db, commits):
    def work(weight: int):
        def fn(session):
            session.execute(text("SELECT 1"))  # opens the transaction
            return weight

        fn.weight = weight
        return fn

    assert work_weight(lambda session: None) == 1

    async def go() -> tuple[list[int], int]:
        async with BatchWriter(db, max_weight=10, linger_s=0.2) as writer:
            results = await asyncio.gather(*(writer.run(work(w)) for w in (6, 3, 4, 12, 1, 1)))
            return results, writer.batches

    commits.clear()
    results, batches = asyncio.run(go())
    assert results == [6, 3, 4, 12, 1, 1]
    # 6+3 fit in 10; 4 starts the next (4+12 would not fit); 12 alone; 1+1 together.
    assert batches == 4 and len(commits) == 4
