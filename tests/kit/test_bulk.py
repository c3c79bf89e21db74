"""kit.bulk.insert_from_arrays: rows sent as column arrays on PostgreSQL read back exactly as written, with
conflicts skipped and the inserted rows returned."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from chipwatch.db import session_scope
from chipwatch.kit.bulk import insert_from_arrays
from chipwatch.signals.models import Evidence
from tests.fixtures.database import postgres_url

pytestmark = pytest.mark.skipif(not postgres_url(), reason="column arrays and unnest are PostgreSQL's")

T0 = datetime(2026, 11, 1, 12, 30, tzinfo=UTC)


def _row(i: int, **over) -> dict:
    return {
        "signal_id": "jalapeno-100mw-2026", "ref_kind": "item", "ref_id": f"bulk-{i}", "side": "yes",
        "condition_index": i % 3, "reason": None if i % 2 else f"reason {i} — “quoted”", "trust": "press",
        "source_id": None, "title": f"Title {i}", "url": None,
        "published_at": None if i == 0 else T0 + timedelta(minutes=i), "recorded_at": T0,
        "story_link": None, "story_title": None,
        "sources": [] if i % 2 else [{"source_id": "s", "item_id": i, "title": "契约 ✓"}],
        **over,
    }


def test_rows_read_back_as_written_and_conflicts_are_skipped(db):
    rows = [_row(i) for i in range(5)]
    table = Evidence.__table__
    with session_scope(db) as session:
        returned = insert_from_arrays(
            session.connection(), table, rows, ignore_conflicts=True, returning=("id", "ref_id")
        )
    assert sorted(r.ref_id for r in returned) == [f"bulk-{i}" for i in range(5)]
    with session_scope(db, write=False) as session:
        stored = {r.ref_id: r for r in session.execute(select(table).where(table.c.ref_id.like("bulk-%")))}
    for row in rows:
        got = stored[row["ref_id"]]
        assert {k: getattr(got, k) for k in row} == row

    again = [_row(1), _row(7)]  # bulk-1 exists: skipped; bulk-7 is new
    with session_scope(db) as session:
        returned = insert_from_arrays(
            session.connection(), table, again, ignore_conflicts=True, returning=("ref_id",)
        )
    assert [r.ref_id for r in returned] == ["bulk-7"]


def test_no_rows_is_no_statement(db):
    with session_scope(db) as session:
        assert insert_from_arrays(session.connection(), Evidence.__table__, [], returning=("id",)) == []
