"""An alias added to an entity after items were stored reaches those items: the relink job matches the
stored items again with the entity's current names, a batch per write transaction, and an alias removed
unlinks them again. Real feed over HTTP, the API's PATCH, the job's code path."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import select

from chipwatch.db import session_scope
from chipwatch.sources.models import MentionRelink
from chipwatch.sources.relink import relink_batch, relink_pending, request_relinks
from tests.fixtures.sources import Entry, add_source, items_of, rss, run_check

PUBLISHED = datetime(2026, 9, 3, 8, 30, tzinfo=UTC)


def _store_feed(httpserver) -> dict[str, int]:
    entries = [
        Entry("Pepper accelerator ships to a second cloud", guid="p1", link="https://n.example/1",
              date=PUBLISHED),
        Entry("Market note", guid="m1", link="https://n.example/2", body="The Pepper racks are in.",
              date=PUBLISHED),
        Entry("Jalapeño benchmark", guid="j1", link="https://n.example/3", date=PUBLISHED),
        Entry("Memory prices rise", guid="x1", link="https://n.example/4", date=PUBLISHED),
    ]
    httpserver.expect_request("/feed.xml").respond_with_data(rss(entries), content_type="application/rss+xml")
    add_source("relink-news", httpserver.url_for("/feed.xml"))
    assert run_check("relink-news").status == "ok"
    return {item.guid: item.id for item in items_of("relink-news")}


def _mentioning(client, entity: str) -> set[int]:
    response = client.get("/v1/items", params={"mentions": entity, "limit": 100})
    assert response.status_code == 200, response.text
    return {item["id"] for item in response.json()["items"]}


def _set_aliases(client, admin_headers, aliases: list[str]) -> None:
    response = client.patch("/v1/chips/jalapeno", json={"aliases": aliases}, headers=admin_headers)
    assert response.status_code == 200, response.text


def test_an_alias_added_after_items_were_stored_reaches_them(client, admin_headers, httpserver):
    ids = _store_feed(httpserver)
    relink_pending()  # the names as seeded: nothing changes for items linked with them
    assert _mentioning(client, "jalapeno") == {ids["j1"]}

    before = client.get("/v1/chips/jalapeno").json()["aliases"]
    _set_aliases(client, admin_headers, [*before, "Pepper"])
    assert _mentioning(client, "jalapeno") == {ids["j1"]}, "the API write itself does not relink"
    report = relink_pending()
    assert report.finished == ["jalapeno"]
    assert _mentioning(client, "jalapeno") == {ids["j1"], ids["p1"], ids["m1"]}

    _set_aliases(client, admin_headers, before)
    report = relink_pending()
    assert report.unlinked == 2
    assert _mentioning(client, "jalapeno") == {ids["j1"]}


def test_a_relink_goes_a_batch_at_a_time_and_resumes(client, admin_headers, httpserver):
    ids = _store_feed(httpserver)
    relink_pending()
    before = client.get("/v1/chips/jalapeno").json()["aliases"]
    _set_aliases(client, admin_headers, [*before, "Pepper"])
    with session_scope() as session:
        assert request_relinks(session=session) == ["jalapeno"]
    cursors = []
    while (report := relink_batch(batch=2)) is not None:
        with session_scope(write=False) as session:
            relink = session.scalars(select(MentionRelink).where(MentionRelink.entity_id == "jalapeno")).one()
            cursors.append((relink.next_item_id, relink.done_at is not None))
        assert report.items <= 2
    newest = max(ids.values())
    # every transaction moved the cursor on by at most two items; the last one found the end
    assert [c for c, _done in cursors] == sorted(c for c, _done in cursors)
    assert cursors[-1] == (newest, True) and not any(done for _c, done in cursors[:-1])
    assert len(cursors) >= 2
    assert _mentioning(client, "jalapeno") == {ids["j1"], ids["p1"], ids["m1"]}
