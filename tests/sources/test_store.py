"""The pure half of storing items: candidates and the decision, with no database (stored rows are plain
objects with the columns the decision reads)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from chipwatch.sources.parse import ParsedEntry
from chipwatch.sources.store import ItemChange, decide, item_candidates

T0 = datetime(2026, 8, 25, 9, 0, tzinfo=UTC)
BODY = "A body long enough to identify the story on its own, well past the short-teaser threshold of 80."


def entry(
    n: int, *, title: str | None = None, guid: str | None = "auto", link: str | None = "auto"
) -> ParsedEntry:
    return ParsedEntry(
        guid=f"g-{n}" if guid == "auto" else guid,
        link=f"https://news.example.com/2026/story-{n}" if link == "auto" else link,
        title=title or f"Story {n}",
        summary=f"{BODY} ({n})",
        content=f"{BODY} ({n})",
        author=None,
        published_at=T0,
        published_is_estimated=False,
    )


@dataclass
class Row:
    """A stored item as the decision sees it."""

    id: int | None
    guid: str | None
    link: str | None
    link_norm: str | None
    content_hash: str
    title: str
    summary: str | None
    content: str | None
    author: str | None
    published_at: datetime | None
    published_is_estimated: bool
    published_precision: str | None = None
    published_reason: str | None = None


def stored(plan_inserts: list[dict], first_id: int = 1) -> list[Row]:
    """The rows a plan's inserts would become once written."""
    return [Row(id=first_id + i, **values) for i, values in enumerate(plan_inserts)]


def test_new_entries_are_inserts_and_the_same_document_again_changes_nothing():
    candidates = item_candidates([entry(1), entry(2)])
    first = decide(candidates, [])
    assert [i["guid"] for i in first.inserts] == ["g-1", "g-2"]
    assert (first.updates, first.unchanged) == ([], 0)
    again = decide(item_candidates([entry(1), entry(2)]), stored(first.inserts))
    assert (again.inserts, again.updates, again.unchanged) == ([], [], 2)


def test_an_edited_story_is_one_change_of_the_columns_that_differ():
    rows = stored(decide(item_candidates([entry(1)]), []).inserts, first_id=7)
    edited = item_candidates([entry(1, title="Story 1, corrected")])
    plan = decide(edited, rows)
    assert plan.inserts == []
    # the title is part of the content key, so the key follows it
    changes = {"title": "Story 1, corrected", "content_hash": edited.items[0].content_hash}
    assert plan.updates == [ItemChange(item_id=7, changes=changes)]


def test_a_guid_shared_by_several_entries_is_not_trusted():
    candidates = item_candidates([entry(1, guid="same"), entry(2, guid="same")])
    assert [c.use_guid for c in candidates.items] == [False, False]
    assert candidates.warnings == [
        "guid 'same' is shared by 2 entries; matching them by link or content instead"
    ]
    assert candidates.keys()[0] == set()


def test_the_home_page_link_is_never_a_key():
    candidates = item_candidates(
        [entry(1, link="https://news.example.com/"), entry(2)], feed_link="https://news.example.com"
    )
    assert [c.use_link for c in candidates.items] == [False, True]


def test_entries_repeated_verbatim_count_as_duplicates():
    candidates = item_candidates([entry(1), entry(1), entry(2)])
    assert (len(candidates.items), candidates.duplicates) == (2, 1)
    assert decide(candidates, []).duplicates == 1


def test_a_guid_naming_two_stored_rows_matches_neither_and_the_link_decides():
    one, two = stored(decide(item_candidates([entry(1), entry(2)]), []).inserts)
    two.guid = one.guid  # two stored rows now share guid g-1
    plan = decide(item_candidates([entry(2, guid="g-1")]), [one, two])
    assert plan.inserts == [] and plan.unchanged == 1  # matched row 2 by its link, not row 1 by guid
