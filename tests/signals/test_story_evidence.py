"""One story is one piece of evidence, listing every source that carried it."""

from __future__ import annotations

import hashlib
import itertools
from datetime import UTC, datetime

import pytest

from chipwatch.db import session_scope
from chipwatch.sources.links import normalise_link
from chipwatch.sources.models import Item
from tests.fixtures.signals import create, evaluate, events, evidence, state

AFTER = datetime(2026, 9, 3, 8, 30, tzinfo=UTC)
_seq = itertools.count(1)

LONG_TITLE = "OpenAI says Jalapeño has shipped to its first inference data centre"
ARTICLE = "https://news.example/2026/09/jalapeno-shipped"


def store(source: str, title: str, link: str | None) -> int:
    """One item as the feed check stores it (with its normalised link); returns its id."""
    n = next(_seq)
    with session_scope() as session:
        item = Item(
            source_id=source,
            guid=f"story-{n}",
            link=link,
            link_norm=normalise_link(link) if link else None,
            content_hash=hashlib.sha256(f"{n}".encode()).hexdigest(),
            title=title,
            summary="",
            published_at=AFTER,
        )
        session.add(item)
        session.flush()
        return item.id


# (the items: source, title, link; evaluated together or one by one; evidence rows as their sources)
CASES = [
    pytest.param(
        [("press-feed", "Jalapeño shipped", ARTICLE), ("analyst-feed", "Jalapeño shipped!", ARTICLE)],
        [["press-feed", "analyst-feed"]], id="same link, two sources",
    ),
    pytest.param(
        [("press-feed", "Jalapeño shipped", ARTICLE),
         ("analyst-feed", "Jalapeño shipped", "https://NEWS.example/2026/09/jalapeno-shipped/?utm_source=rss")],
        [["press-feed", "analyst-feed"]], id="same link spelled differently",
    ),
    pytest.param(
        [("press-feed", LONG_TITLE, ARTICLE), ("analyst-feed", LONG_TITLE.upper(), "https://copy.example/1")],
        [["press-feed", "analyst-feed"]], id="same distinctive title, syndicated",
    ),
    pytest.param(
        [("press-feed", "华为宣布昇腾950推理芯片已经出货并交付首批数据中心", "https://a.example/1"),
         ("analyst-feed", "华为宣布昇腾950推理芯片已经出货并交付首批数据中心", "https://b.example/2")],
        [["press-feed", "analyst-feed"]], id="same Chinese title",
    ),
    pytest.param(
        [("press-feed", LONG_TITLE, ARTICLE), ("analyst-feed", "Jalapeño shipped", ARTICLE),
         ("lab-feed", LONG_TITLE, "https://lab.example/repost")],
        [["press-feed", "analyst-feed", "lab-feed"]], id="linked by link, then by title",
    ),
    pytest.param(
        [("press-feed", "Jalapeño shipped", "https://a.example/1"),
         ("analyst-feed", "Jalapeño shipped", "https://b.example/2")],
        [["press-feed"], ["analyst-feed"]], id="a short title is no story key",
    ),
    pytest.param(
        [("press-feed", "Jalapeño shipped", "https://a.example/"),
         ("analyst-feed", "Jalapeño shipped", "https://a.example/")],
        [["press-feed"], ["analyst-feed"]], id="a home page link is no story key",
    ),
    pytest.param(
        [("press-feed", LONG_TITLE, "https://a.example/1"),
         ("analyst-feed", "Jalapeño shipped in volume, says a second report", "https://b.example/2")],
        [["press-feed"], ["analyst-feed"]], id="two stories",
    ),
]


def _run(items: list[tuple[str, str, str | None]], together: bool) -> None:
    ids = [store(*item) for item in items]
    if together:
        evaluate(*ids)
    else:
        for item_id in ids:
            evaluate(item_id)


@pytest.mark.parametrize("together", [True, False], ids=["one evaluation", "one by one"])
@pytest.mark.parametrize(("items", "expected"), CASES)
def test_one_story_is_one_piece_of_evidence(feeds, items, expected, together: bool) -> None:
    create("story", yes=[{"item": {"terms_any": ["shipped", "出货"]}}])
    _run(items, together)
    rows = evidence("story")
    assert [[c["source_id"] for c in row.sources] for row in rows] == expected
    assert len(events("story", "signal.evidence_added")) == len(expected)
    for row in rows:
        assert row.source_id == row.sources[0]["source_id"]
        assert str(row.sources[0]["item_id"]) == row.ref_id
    assert state("story")[:2] == ("resolved", "yes") and state("story")[2] == 1


def test_evaluating_a_copy_again_adds_nothing(feeds) -> None:
    create("story", yes=[{"item": {"terms_any": ["shipped"]}}])
    first = store("press-feed", "Jalapeño shipped", ARTICLE)
    second = store("analyst-feed", "Jalapeño shipped", ARTICLE)
    evaluate(first, second)
    evaluate(second)
    evaluate(first, second)
    (row,) = evidence("story")
    assert [c["item_id"] for c in row.sources] == [first, second]


def test_the_api_lists_the_sources_of_each_piece_of_evidence(client, feeds) -> None:
    create("story", yes=[{"item": {"terms_any": ["shipped"]}}])
    _run([("press-feed", "Jalapeño shipped", ARTICLE), ("lab-feed", "Jalapeño shipped", ARTICLE)], True)
    (shown,) = client.get("/v1/signals/story").json()["evidence"]
    assert [(c["source_id"], c["trust"], c["url"]) for c in shown["sources"]] == [
        ("press-feed", "press", ARTICLE),
        ("lab-feed", "independent", ARTICLE),
    ]
    assert shown["sources"][0]["published_at"] == "2026-09-03T08:30:00Z"
