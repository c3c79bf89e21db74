"""Item listings walk an index in their sort order, at any depth: asserted on the plan on SQLite and
PostgreSQL (no sort step for the newest-first order; the cursor is a range on the index)."""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import insert, select

from chipwatch.db import get_engine, session_scope
from chipwatch.sources.models import Item, ItemMention
from chipwatch.sources.service import list_items
from tests.fixtures.plans import analyze, plan_of

T0 = datetime(2026, 6, 1, tzinfo=UTC)
N_ITEMS = 3000
COMMON, RARE = "jalapeno", "gb300"


@pytest.fixture
def many_items(db):
    """3,000 items over two sources (one has 300 of them); every other one mentions jalapeno, three
    mention gb300."""
    rows = []
    for n in range(N_ITEMS):
        at = T0 + timedelta(minutes=n // 2)  # pairs share a time: the id breaks the tie
        rows.append({
            "source_id": "zhihu" if n % 10 == 0 else "36kr", "guid": f"g{n}", "link": f"https://x.test/{n}",
            "content_hash": hashlib.sha256(str(n).encode()).hexdigest(), "title": f"item {n}",
            "published_at": at, "first_seen_at": at, "sort_at": at, "published_is_estimated": False,
        })
    with get_engine(db).begin() as conn:
        conn.execute(insert(Item), rows)
        ids = list(conn.scalars(select(Item.id).order_by(Item.id)))
        times = dict(conn.execute(select(Item.id, Item.sort_at)).all())
        mentions = [
            {"item_id": i, "entity_id": COMMON, "entity_kind": "chips", "sort_at": times[i]} for i in ids[::2]
        ] + [{"item_id": i, "entity_id": RARE, "entity_kind": "chips", "sort_at": times[i]} for i in ids[5:8]]
        conn.execute(insert(ItemMention), mentions)
    analyze(db)
    return db


def _items_query(statement: str) -> bool:
    return statement.lstrip().upper().startswith("SELECT ITEMS.") and "ORDER BY" in statement.upper()


def _page(settings, **kw):
    with session_scope(settings, write=False) as session:
        return list_items(session=session, **kw)


def _deep_cursor(settings, pages: int = 10, **kw) -> str:
    """The cursor after ``pages`` pages of 50 down the list."""
    cursor = None
    for _ in range(pages):
        cursor = _page(settings, limit=50, cursor=cursor, **kw)["next_cursor"]
    assert cursor is not None
    return cursor


def _plan(settings, **kw) -> str:
    return plan_of(settings, lambda: _page(settings, limit=50, **kw), _items_query)


def _assert_walks(plan: str, index: str, dialect: str, *, ranged: bool) -> None:
    if dialect == "sqlite":
        assert "TEMP B-TREE" not in plan, plan
        assert f"INDEX {index}" in plan, plan
        if ranged:  # the row-value cursor is a range on the index (the OR form was a SCAN from its end)
            shape = rf"SEARCH \w+ USING (COVERING )?INDEX {index} \(.*sort_at(,\w+\))?<\(?\?"
            assert re.search(shape, plan), plan
    else:
        assert "Sort" not in plan, plan
        assert re.search(f"Index (Only )?Scan Backward using {index}", plan), plan
        if ranged:
            assert "ROW(" in plan, plan


@pytest.mark.parametrize("deep", [False, True], ids=["page-1", "page-11"])
def test_newest_first_walks_the_sort_index(many_items, deep):
    dialect = get_engine(many_items).dialect.name
    cursor = _deep_cursor(many_items) if deep else None
    _assert_walks(_plan(many_items, cursor=cursor), "ix_items_sort", dialect, ranged=deep)


@pytest.mark.parametrize("deep", [False, True], ids=["page-1", "page-3"])
def test_a_source_walks_its_sort_index(many_items, deep):
    dialect = get_engine(many_items).dialect.name
    cursor = _deep_cursor(many_items, pages=2, source_id="zhihu") if deep else None
    _assert_walks(_plan(many_items, source_id="zhihu", cursor=cursor), "ix_items_source_sort", dialect,
                  ranged=deep)


@pytest.mark.parametrize("entity", [COMMON, RARE])
def test_mentions_walk_the_mention_sort_index(many_items, entity):
    dialect = get_engine(many_items).dialect.name
    _assert_walks(_plan(many_items, mentions=entity), "ix_mentions_entity_sort", dialect, ranged=False)
    if entity == COMMON:
        cursor = _deep_cursor(many_items, mentions=entity)
        _assert_walks(_plan(many_items, mentions=entity, cursor=cursor), "ix_mentions_entity_sort", dialect,
                      ranged=True)


def test_mention_pages_are_the_mentioning_items_newest_first(many_items):
    with session_scope(many_items, write=False) as session:
        expected = list(session.scalars(
            select(Item.id).join(ItemMention, ItemMention.item_id == Item.id)
            .where(ItemMention.entity_id == COMMON).order_by(Item.sort_at.desc(), Item.id.desc())
        ))
    got, cursor = [], None
    while True:
        page = _page(many_items, mentions=COMMON, limit=200, cursor=cursor)
        got += [i["id"] for i in page["items"]]
        assert all(COMMON in [m["entity_id"] for m in i["mentions"]] for i in page["items"])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(expected) == N_ITEMS // 2
    assert got == expected


def test_a_mention_follows_its_item_when_the_publication_date_changes(many_items):
    with session_scope(many_items) as session:
        oldest = session.scalars(
            select(Item).join(ItemMention, ItemMention.item_id == Item.id)
            .where(ItemMention.entity_id == RARE).order_by(Item.sort_at)
        ).first()
        oldest.published_at = T0 + timedelta(days=365)
        target = oldest.id
    first = _page(many_items, mentions=RARE, limit=1)["items"]
    assert [i["id"] for i in first] == [target]
