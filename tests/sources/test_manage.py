"""Managing sources: PATCH changes a source (disable, rename, trust, interval, time zone, URL...), DELETE
removes it from use while its items stay; unknown ids in filters and OPML documents past the caps are
refused naming the field."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from chipwatch.db import session_scope
from chipwatch.sources.models import Source
from chipwatch.sources.opml import MAX_OPML_FEEDS, MAX_OPML_OUTLINES, parse_opml
from chipwatch.sources.service import feed_source_ids
from tests.fixtures.sources import Entry, add_source, rss, run_check, source_row

FEED = "nvidia-blog"


def _errors(resp) -> dict[str, str]:
    assert resp.status_code == 422, resp.text
    assert resp.headers["content-type"] == "application/problem+json"
    return {e["field"]: e["message"] for e in resp.json()["errors"]}


def _listed(client, **params) -> list[str]:
    return [s["id"] for s in client.get("/v1/sources", params={"limit": 500, **params}).json()["items"]]


def test_patch_changes_the_fields_it_names(client, admin_headers):
    before = source_row(FEED)
    changes = {"name": "NVIDIA Technical Blog", "trust": "press", "timezone": "America/Los_Angeles",
               "check_interval_s": 7200, "notes": "moved to press: mostly marketing", "language": "en-US"}
    resp = client.patch(f"/v1/sources/{FEED}", json=changes, headers=admin_headers)
    assert resp.status_code == 200, resp.text
    after = source_row(FEED)
    for field, value in changes.items():
        assert getattr(after, field) == value, field
    assert (after.url, after.publisher_id, after.enabled) == (before.url, before.publisher_id, True)
    assert client.get(f"/v1/sources/{FEED}").json()["name"] == "NVIDIA Technical Blog"


def test_patch_refusals_name_every_field(client, admin_headers):
    resp = client.patch(f"/v1/sources/{FEED}", json={"timezone": "Mars/Olympus", "check_interval_s": 5},
                        headers=admin_headers)
    assert set(_errors(resp)) == {"timezone", "check_interval_s"}
    bad = {"url": "ftp://example.com/feed", "publisher_id": "no-such-vendor", "name": None}
    resp = client.patch(f"/v1/sources/{FEED}", json=bad, headers=admin_headers)
    errors = _errors(resp)
    assert set(errors) == {"url", "publisher_id", "name"}
    assert errors["publisher_id"] == "no vendor with id 'no-such-vendor'"
    assert _errors(client.patch(f"/v1/sources/{FEED}", json={"colour": "red"}, headers=admin_headers))
    # a null url is refused like a null name, not ignored with a 200
    url_before = source_row(FEED).url
    assert _errors(client.patch(f"/v1/sources/{FEED}", json={"url": None}, headers=admin_headers)) == {
        "url": "must not be null"}
    assert source_row(FEED).url == url_before
    missing = client.patch("/v1/sources/no-such-source", json={"name": "x"}, headers=admin_headers)
    assert missing.status_code == 404
    assert client.patch(f"/v1/sources/{FEED}", json={"name": "x"}).status_code == 401


def test_a_new_url_forgets_the_old_validators_and_is_checked_at_once(client, admin_headers):
    with session_scope() as session:
        row = session.get(Source, FEED)
        row.etag, row.last_modified, row.last_body_sha256 = '"v1"', "Mon, 30 Nov 2026 08:00:00 GMT", "ab" * 32
        row.next_check_at = datetime.now(UTC) + timedelta(hours=5)
    taken = client.patch(f"/v1/sources/{FEED}", json={"url": "https://nvidianews.nvidia.com/releases.xml"},
                         headers=admin_headers)
    assert taken.status_code == 409 and "already watches" in taken.json()["detail"]
    moved = client.patch(f"/v1/sources/{FEED}", json={"url": "https://blogs.nvidia.com/feed/v2/"},
                         headers=admin_headers)
    assert moved.status_code == 200, moved.text
    row = source_row(FEED)
    assert (row.url, row.etag, row.last_modified, row.last_body_sha256) == (
        "https://blogs.nvidia.com/feed/v2/", None, None, None)
    assert row.next_check_at.replace(tzinfo=UTC) <= datetime.now(UTC)


def test_a_disabled_source_is_listed_but_not_checked(client, admin_headers):
    with session_scope(write=False) as session:
        assert FEED in feed_source_ids(session=session)
    off = client.patch(f"/v1/sources/{FEED}", json={"enabled": False}, headers=admin_headers)
    assert off.status_code == 200
    with session_scope(write=False) as session:
        assert FEED not in feed_source_ids(session=session)
    assert FEED in _listed(client)
    on = client.patch(f"/v1/sources/{FEED}", json={"enabled": True}, headers=admin_headers)
    assert on.status_code == 200
    with session_scope(write=False) as session:
        assert FEED in feed_source_ids(session=session)


def test_delete_removes_the_source_from_use_and_keeps_its_items(client, admin_headers, httpserver):
    feed = rss([Entry("Groq ships", guid="g1", body="Groq ships", date=datetime(2026, 11, 20, tzinfo=UTC))])
    httpserver.expect_request("/feed.xml").respond_with_data(feed, content_type="application/rss+xml")
    url = httpserver.url_for("/feed.xml")
    add_source("gone-news", url)
    assert run_check("gone-news").new_item_ids

    resp = client.delete("/v1/sources/gone-news", headers=admin_headers)
    assert resp.status_code == 200, resp.text
    assert resp.json()["removed_at"] and resp.json()["enabled"] is False
    assert "gone-news" not in _listed(client) and _listed(client, removed="true") == ["gone-news"]
    assert client.get("/v1/sources/gone-news").json()["removed_at"] == resp.json()["removed_at"]
    items = client.get("/v1/items", params={"source": "gone-news"}).json()["items"]
    assert [i["title"] for i in items] == ["Groq ships"]
    assert url not in {f["url"] for f in parse_opml(client.get("/v1/sources.opml").content)}
    with session_scope(write=False) as session:
        assert "gone-news" not in feed_source_ids(session=session)

    check = client.post("/v1/sources/gone-news/check", headers=admin_headers)
    assert check.status_code == 409 and "was removed" in check.json()["detail"]
    assert client.delete("/v1/sources/gone-news", headers=admin_headers).status_code == 409
    renamed = client.patch("/v1/sources/gone-news", json={"name": "Gone"}, headers=admin_headers)
    assert renamed.status_code == 409 and '{"enabled": true}' in renamed.json()["detail"]
    again = client.post("/v1/sources", json={"url": url, "name": "Again"}, headers=admin_headers)
    assert again.status_code == 409
    assert "was removed" in again.json()["detail"] and "PATCH /v1/sources/gone-news" in again.json()["detail"]

    restored = client.patch("/v1/sources/gone-news", json={"enabled": True}, headers=admin_headers)
    assert restored.status_code == 200 and restored.json()["removed_at"] is None
    assert "gone-news" in _listed(client)
    with session_scope(write=False) as session:
        row = session.scalars(select(Source).where(Source.id == "gone-news")).one()
        assert row.enabled and row.next_check_at is not None


def test_unknown_ids_in_item_filters_are_refused(client):
    errors = _errors(client.get("/v1/items", params={"source": "nope", "mentions": "nothing-here"}))
    assert errors == {"source": "no source with id 'nope'", "mentions": "no entity with id 'nothing-here'"}
    assert client.get("/v1/items", params={"source": FEED, "mentions": "jalapeno"}).status_code == 200


def test_a_new_source_with_an_unknown_publisher_and_a_bad_url_is_refused_whole(
    client, admin_headers
):
    body = {"url": "gopher://example.com/feed", "name": "Odd", "publisher_id": "no-such-vendor"}
    resp = client.post("/v1/sources", json=body, headers=admin_headers)
    assert set(_errors(resp)) == {"url", "publisher_id"}


def _opml(outlines: str) -> bytes:
    return f'<?xml version="1.0"?><opml version="2.0"><head/><body>{outlines}</body></opml>'.encode()


def test_opml_documents_past_the_caps_are_refused(client, admin_headers):
    headers = {**admin_headers, "content-type": "text/x-opml"}
    before = _listed(client)
    count = MAX_OPML_FEEDS + 1
    feeds = "".join(f'<outline xmlUrl="https://f{i}.example.com/rss"/>' for i in range(count))
    resp = client.post("/v1/sources/opml", content=_opml(feeds), headers=headers)
    message = f"more than {MAX_OPML_FEEDS} feeds in one OPML document; import it in parts"
    assert _errors(resp) == {"body": message}
    folders = "<outline/>" * (MAX_OPML_OUTLINES + 1)
    resp = client.post("/v1/sources/opml", content=_opml(folders), headers=headers)
    assert _errors(resp) == {"body": f"more than {MAX_OPML_OUTLINES} outlines in one OPML document"}
    assert _listed(client) == before  # nothing was added
