"""A check compiles the entity matcher and the signal rules in a read transaction before it writes: a
knowledge base whose names changed is compiled while other writers can still write, not under the lock."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

import pytest
from sqlalchemy.engine import make_url

from chipwatch.config import get_settings
from chipwatch.signals import rules_cache
from chipwatch.sources import mentions
from tests.fixtures.database import postgres_url
from tests.fixtures.sources import Entry, add_source, items_of, rss, run_check

pytestmark = pytest.mark.skipif(
    bool(postgres_url()),
    reason="PostgreSQL has no database-wide write lock; SQLite's is the one a build held",
)


def _write_lock_free() -> bool:
    """True when another connection can take SQLite's write lock right now."""
    path = make_url(get_settings().resolved_database_url).database
    probe = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        probe.execute("BEGIN IMMEDIATE")
        probe.execute("ROLLBACK")
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        probe.close()


@pytest.fixture
def builds(monkeypatch) -> list[tuple[str, bool]]:
    """Every matcher build of the test: (which, whether the write lock was free while it ran)."""
    seen: list[tuple[str, bool]] = []
    real_compile = rules_cache.compile_signals

    class RecordedIndex(mentions.EntityIndex):
        # Built whole the first time, updated from the cached one after: both are builds.
        def __init__(self, entities=()):
            seen.append(("entities", _write_lock_free()))
            super().__init__(entities)

        def updated(self, entities):
            seen.append(("entities", _write_lock_free()))
            return super().updated(entities)

    def compile_signals(defs, entities):
        seen.append(("rules", _write_lock_free()))
        return real_compile(defs, entities)

    monkeypatch.setattr(mentions, "EntityIndex", RecordedIndex)
    monkeypatch.setattr(mentions, "_matcher_cache", None)
    monkeypatch.setattr(rules_cache, "compile_signals", compile_signals)
    rules_cache.clear_rules_cache()
    return seen


def test_changed_names_and_signals_are_compiled_before_the_write(client, admin_headers, httpserver, builds):
    day = datetime(2026, 11, 20, tzinfo=UTC)
    feed = [Entry("Jalapeño ships", guid="a", body="Jalapeño ships to customers", date=day)]
    httpserver.expect_request("/feed.xml").respond_with_data(rss(feed), content_type="application/rss+xml")
    add_source("prep-news", httpserver.url_for("/feed.xml"))
    assert run_check("prep-news").status == "ok"
    assert builds and all(free for _which, free in builds), builds

    # New names and a new signal: both matchers must be built again, and still outside the write.
    builds.clear()
    resp = client.patch("/v1/vendors/groq", json={"aliases": ["Groq Inc", "格罗克"]}, headers=admin_headers)
    assert resp.status_code == 200, resp.text
    signal = {"id": "prep-signal", "question": "Does Groq Inc ship?", "opened_on": "2026-11-01",
              "review": "auto", "subjects": ["groq"],
              "yes_when": [{"item": {"mentions_all": ["groq"], "terms_any": ["ships"]}}]}
    assert client.post("/v1/signals", json=signal, headers=admin_headers).status_code == 201
    builds.clear()  # creating the signal compiled it for its own evaluation, inside that API write
    feed.append(Entry("Groq Inc ships", guid="b", body="Groq Inc ships a rack", date=day))
    httpserver.clear()
    httpserver.expect_request("/feed.xml").respond_with_data(rss(feed), content_type="application/rss+xml")
    assert run_check("prep-news").status == "ok"
    assert {"entities", "rules"} <= {which for which, _free in builds}, builds
    assert all(free for _which, free in builds), builds
    assert [i.title for i in items_of("prep-news")] == ["Jalapeño ships", "Groq Inc ships"]
    assert client.get("/v1/signals/prep-signal").json()["status"] == "resolved"
