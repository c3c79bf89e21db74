"""GET /v1/items?q= searches title and summary NFKC-normalised, case-folded and without accents, through the
database's trigram index (SQLite FTS5, PostgreSQL pg_trgm), most relevant first."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text

from chipwatch.db import get_engine, session_scope
from chipwatch.sources.models import Item
from chipwatch.text.search import fold_for_search

T0 = datetime(2026, 11, 1, tzinfo=UTC)

# key -> (title, summary); the i-th item is published i hours after T0 (later keys are newer)
ITEMS = {
    "decomposed": ("Jalapen\u0303o ships to OpenAI", "The first racks are live."),
    "fullwidth": ("１２０ＭＷ campus for Jalapeño", "A full-width figure."),
    "chinese": ("华为发布昇腾芯片新品", "昇腾950推理芯片量产，功耗700瓦。"),
    "german": ("Rechenzentrum an der Hauptstraße", "Neue KI-Chips."),
    "greek": ("ΣΊΣΥΦΟΣ and the chip race", "Greek capitals with a tonos."),
    "summary-only": ("Inference news roundup", "Groq's LPU v2 reaches 1,200 tok/s."),
    "percent": ("Yields near 100% for the N2 node", "No wildcards here."),
    "rubin-title": ("Vera Rubin results published", "MLPerf numbers."),
    "rubin-summary": ("Benchmark week", "NVIDIA also showed Vera Rubin systems."),
}


@pytest.fixture
def indexed(db):
    """The items above stored for a seeded source, through the ORM as the feed check stores them."""
    with session_scope() as session:
        for i, (key, (title, summary)) in enumerate(ITEMS.items()):
            session.add(
                Item(source_id="36kr", guid=key, link=f"https://36kr.com/p/{i}", content_hash=f"h{i}",
                     title=title, summary=summary, published_at=T0 + timedelta(hours=i))
            )
    return db


def search(client, q: str, **params) -> list[str]:
    response = client.get("/v1/items", params={"q": q, **params})
    assert response.status_code == 200, response.text
    return [item["guid"] for item in response.json()["items"]]


# (query, the items found, in order when order matters: most relevant, then newest)
CASES = [
    # the case: a decomposed ñ and full-width digits and letters in the title
    ("Jalapeño", ["fullwidth", "decomposed"]),
    ("jalapeno", ["fullwidth", "decomposed"]),
    ("JALAPEÑO", ["fullwidth", "decomposed"]),
    ("JALAPEN\u0303O", ["fullwidth", "decomposed"]),
    ("120MW", ["fullwidth"]),
    ("120mw", ["fullwidth"]),
    ("１２０ＭＷ", ["fullwidth"]),
    ("120 MW", ["fullwidth"]),  # two terms, both in the title
    # Chinese substrings: of three characters or more through the index, shorter ones by a scan
    ("昇腾芯片", ["chinese"]),
    ("推理芯片", ["chinese"]),
    ("芯片", ["chinese"]),
    ("华为 芯片", ["chinese"]),
    ("700瓦", ["chinese"]),
    ("苹果", []),
    # case folding beyond ASCII, accents of other scripts
    ("HAUPTSTRASSE", ["german"]),
    ("hauptstraße", ["german"]),
    ("σισυφος", ["greek"]),
    ("Σίσυφος", ["greek"]),
    # the summary is searched too; every term must occur
    ("lpu", ["summary-only"]),
    ("groq lpu", ["summary-only"]),
    ("groq openai", []),
    # LIKE wildcards and FTS5 syntax are plain characters
    ("100%", ["percent"]),
    ("100%_", []),
    ('"rubin', []),
    ("rubin OR jalapeno", []),
    ("n2", ["percent"]),
    # ranked: a title match before a summary-only match, though the summary one is newer
    ("vera rubin", ["rubin-title", "rubin-summary"]),
]


@pytest.mark.parametrize(("q", "expected"), CASES, ids=[c[0] for c in CASES])
def test_search(client, indexed, q: str, expected: list[str]) -> None:
    assert search(client, q) == expected


def test_search_combines_with_other_filters_and_pages(client, indexed) -> None:
    assert search(client, "jalapeno", source="36kr") == ["fullwidth", "decomposed"]
    assert search(client, "jalapeno", source="zhihu") == []
    assert search(client, "jalapeno", since=(T0 + timedelta(hours=1)).isoformat()) == ["fullwidth"]
    seen, cursor = [], None
    while True:
        params = {"q": "i", "limit": 2, **({"cursor": cursor} if cursor else {})}
        page = client.get("/v1/items", params=params).json()
        seen.extend(item["guid"] for item in page["items"])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    every_i = [key for key, (title, summary) in ITEMS.items() if "i" in fold_for_search(f"{title} {summary}")]
    assert sorted(seen) == sorted(every_i) and len(seen) == len(set(seen))


def test_a_cursor_of_another_listing_is_refused(client, indexed) -> None:
    plain = client.get("/v1/items", params={"limit": 1}).json()["next_cursor"]
    response = client.get("/v1/items", params={"q": "jalapeno", "cursor": plain})
    assert response.status_code == 422 and response.json()["errors"][0]["field"] == "cursor"


def test_edits_and_deletes_reach_the_index(client, indexed) -> None:
    with session_scope() as session:
        item = session.query(Item).filter_by(guid="german").one()
        item.title = "Rechenzentrum in Zürich"
    assert search(client, "hauptstrasse") == []
    assert search(client, "zurich") == ["german"]
    with session_scope() as session:
        session.execute(text("DELETE FROM items WHERE guid = 'german'"))
    assert search(client, "zurich") == []


def test_the_index_is_the_databases_own(indexed) -> None:
    """The search runs on FTS5 (SQLite) or trigram GIN indexes (PostgreSQL), not on a LIKE scan."""
    engine = get_engine()
    with engine.connect() as conn:
        if engine.dialect.name == "sqlite":
            match = text("SELECT rowid FROM items_fts WHERE items_fts MATCH :q").bindparams(q='"jalapeno"')
            assert len(conn.execute(match).all()) == 2
        else:
            names = conn.execute(text("SELECT indexname FROM pg_indexes WHERE tablename = 'items'")).scalars()
            assert {"ix_items_search_title_trgm", "ix_items_search_summary_trgm"} <= set(names)
