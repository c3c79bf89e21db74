"""Dedup never merges two stories, and a story moved to a new slug still updates its stored item."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from chipwatch.sources.parse import ParsedEntry
from chipwatch.sources.store import decide, item_candidates
from tests.sources.test_store import stored

T0 = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)
BOILERPLATE = (
    "Chip Weekly brings you the latest on AI accelerators, inference silicon and the data centres that "
    "run them. Subscribe to our newsletter for analysis every Monday. (c) 2026 Chip Weekly Media."
)

STORY_1 = ParsedEntry(
    guid="https://chipweekly.example/?p=1",
    link="https://chipweekly.example/2026/11/jalapeno-ships",
    title="Jalapeño ships to the first OpenAI data centre",
    summary=BOILERPLATE,
    content=BOILERPLATE,
    author=None,
    published_at=T0,
    published_is_estimated=False,
)


def edit(**changes) -> ParsedEntry:
    return replace(STORY_1, **changes)


# (the feed's entry after story 1 was stored, inserts, updates, unchanged, why)
CASES = [
    # the case: a one-item feed whose item becomes story 2; the boilerplate and date stay
    (edit(guid="https://chipweekly.example/?p=2", link="https://chipweekly.example/2026/11/groq-lpu-v2",
          title="Groq shows LPU v2 at 1,200 MW of planned capacity"), 1, 0, 0, "new guid, link and title"),
    (edit(guid=None, link=None, title="Groq shows LPU v2"), 1, 0, 0, "no keys, another title"),
    (edit(guid="https://chipweekly.example/?p=2", link="https://chipweekly.example/2026/11/other",
          summary="Another body", content="Another body"), 1, 0, 0, "same title, other body"),
    (edit(guid="https://chipweekly.example/?p=2", link="https://chipweekly.example/2026/11/weekly",
          published_at=T0 + timedelta(days=7)), 1, 0, 0, "same title and body a week later"),
    (edit(guid="https://chipweekly.example/?p=2", link="https://chipweekly.example/2026/11/x",
          title="Read more", summary="Read more...", content="Read more..."), 1, 0, 0, "a shared teaser"),
    # the slug-edit case: the same title and body under a new slug
    (edit(link="https://chipweekly.example/2026/11/jalapeno-ships-openai"), 0, 1, 0, "new slug, same guid"),
    (edit(guid="https://chipweekly.example/?p=9", link="https://chipweekly.example/2026/11/jalapeno-moved"),
     0, 1, 0, "new slug and guid, same title and body"),
    (edit(guid="https://chipweekly.example/?p=9", link="https://chipweekly.example/2026/11/jalapeno-moved",
          title="  JALAPEÑO ships to the first OpenAI data centre "),
     0, 1, 0, "title re-cased and re-spaced"),
    # one of the keys says it is the same story: a corrected headline updates it
    (edit(title="Jalapeño ships to OpenAI's first data centre"), 0, 1, 0, "same guid, edited title"),
    (edit(guid="https://chipweekly.example/?p=9", title="Jalapeño ships (updated)"), 0, 1, 0,
     "same link, new guid and title"),
    (STORY_1, 0, 0, 1, "the same entry again"),
]


@pytest.mark.parametrize(("entry", "inserts", "updates", "unchanged"), [c[:4] for c in CASES],
                         ids=[c[4] for c in CASES])
def test_second_fetch(entry: ParsedEntry, inserts: int, updates: int, unchanged: int) -> None:
    rows = stored(decide(item_candidates([STORY_1]), []).inserts, first_id=1)
    plan = decide(item_candidates([entry]), rows)
    assert (len(plan.inserts), len(plan.updates), plan.unchanged) == (inserts, updates, unchanged)
    if plan.inserts:
        assert plan.inserts[0]["title"] == entry.title  # story 1 is left as it was
    for change in plan.updates:
        assert change.item_id == 1
        assert change.changes.get("title", rows[0].title) == entry.title
        assert change.changes.get("link", rows[0].link) == entry.link


def test_two_stories_in_one_document_sharing_a_body_are_two_items() -> None:
    second = edit(guid="https://chipweekly.example/?p=2", link="https://chipweekly.example/2026/11/b",
                  title="Groq shows LPU v2")
    plan = decide(item_candidates([STORY_1, second]), [])
    assert [i["title"] for i in plan.inserts] == [STORY_1.title, second.title]
