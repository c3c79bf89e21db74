"""The sources and items API: add, check now, health, items with filters and pages, OPML, errors."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from chipwatch.config import get_settings
from chipwatch.sources.opml import parse_opml
from tests.fixtures.sources import Entry, add_source, items_of, rss

PROBLEM = "application/problem+json"
T0 = datetime(2026, 8, 25, 9, 0, tzinfo=UTC)

SEEDED_FEEDS = 22


def feed_entries() -> list[Entry]:
    return [
        Entry(
            "OpenAI 发布墨西哥辣椒推理芯片",
            guid="zh-1",
            link="https://cn.example.com/1",
            body="每瓦性能。",
            date=T0,
        ),
        Entry(
            "Jalapeno beats GB300",
            guid="en-1",
            link="https://news.example.com/1",
            body="Hot Chips.",
            date=T0 + timedelta(hours=1),
        ),
        Entry(
            "Groq LPU v2 ships",
            guid="en-2",
            link="https://news.example.com/2",
            body="SRAM-heavy.",
            date=T0 + timedelta(hours=2),
        ),
        Entry("Undated note about TPUs", guid="en-3", link="https://news.example.com/3", body="Ironwood."),
    ]


@pytest.fixture
def checked(client, admin_headers, httpserver):
    """A feed with four items, checked through the API."""
    httpserver.expect_request("/feed.xml").respond_with_data(
        rss(feed_entries()), content_type="application/rss+xml"
    )
    add_source("chipnews", httpserver.url_for("/feed.xml"), trust="independent")
    answer = client.post("/v1/sources/chipnews/check", headers=admin_headers)
    assert answer.status_code == 200, answer.text
    return answer.json()


# --------------------------------------------------------------------------------------------------
# Writes need the admin token


@pytest.mark.parametrize(
    ("method", "path"),
    [("post", "/v1/sources"), ("post", "/v1/sources/nvidia-blog/check"), ("post", "/v1/sources/opml")],
)
def test_writes_without_the_admin_token_are_401_problems(client, method, path):
    answer = getattr(client, method)(path, json={})
    assert answer.status_code == 401
    assert answer.headers["content-type"] == PROBLEM
    assert answer.json()["status"] == 401
    wrong = getattr(client, method)(path, json={}, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401


# --------------------------------------------------------------------------------------------------
# POST /v1/sources


def test_create_a_source(client, admin_headers):
    answer = client.post(
        "/v1/sources",
        json={
            "url": "https://www.chipsandcheese.example/feed/",
            "name": "Chips & Cheese Mirror",
            "trust": "analyst",
        },
        headers=admin_headers,
    )
    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert body["id"] == "chips-cheese-mirror"
    assert (body["kind"], body["trust"], body["enabled"]) == ("unknown", "analyst", True)
    assert body["last_checked_at"] is None
    assert (
        client.get("/v1/sources/chips-cheese-mirror").json()["url"]
        == "https://www.chipsandcheese.example/feed/"
    )


def test_create_with_a_given_id_and_derived_ids_for_other_scripts(client, admin_headers):
    answer = client.post(
        "/v1/sources",
        json={"url": "https://a.example/rss", "name": "A", "id": "my-feed"},
        headers=admin_headers,
    )
    assert answer.json()["id"] == "my-feed"
    chinese = client.post(
        "/v1/sources",
        json={"url": "https://www.leiphone.example/feed", "name": "雷锋网"},
        headers=admin_headers,
    )
    assert chinese.status_code == 201
    assert chinese.json()["id"] == "leiphone"
    again = client.post(
        "/v1/sources", json={"url": "https://b.example/rss", "name": "My Feed"}, headers=admin_headers
    )
    assert again.json()["id"] == "my-feed-2"


@pytest.mark.parametrize(
    ("payload", "detail"),
    [
        (
            {"url": "https://blogs.nvidia.com/feed", "name": "Again"},
            "already watches",
        ),  # seeded, trailing slash
        ({"url": "https://BLOGS.nvidia.com/feed/?utm_source=x", "name": "Again"}, "already watches"),
        ({"url": "https://x.example/rss", "name": "X", "id": "nvidia-blog"}, "already exists"),
    ],
)
def test_duplicates_are_409_problems(client, admin_headers, payload, detail):
    answer = client.post("/v1/sources", json=payload, headers=admin_headers)
    assert answer.status_code == 409
    assert answer.headers["content-type"] == PROBLEM
    assert detail in answer.json()["detail"]


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"url": "ftp://x.example/feed", "name": "X"}, "url"),
        ({"url": "not a url", "name": "X"}, "url"),
        ({"url": "https://x.example/feed", "name": "X", "trust": "gossip"}, "trust"),
        ({"url": "https://x.example/feed", "name": "X", "id": "Not A Slug"}, "id"),
        ({"url": "https://x.example/feed", "name": ""}, "name"),
        ({"url": "https://x.example/feed", "name": "X", "check_interval_s": 5}, "check_interval_s"),
    ],
)
def test_invalid_sources_are_422_problems_naming_the_field(client, admin_headers, payload, field):
    answer = client.post("/v1/sources", json=payload, headers=admin_headers)
    assert answer.status_code == 422
    assert answer.headers["content-type"] == PROBLEM
    assert answer.json()["errors"][0]["field"] == field


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/feed",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.1.2.3/rss",
        "http://localhost/",
    ],
)
def test_internal_addresses_are_refused_unless_allowed(client, admin_headers, monkeypatch, url):
    monkeypatch.setenv("CHIPWATCH_ALLOW_PRIVATE_NETWORKS", "0")
    get_settings.cache_clear()
    answer = client.post("/v1/sources", json={"url": url, "name": "Internal"}, headers=admin_headers)
    assert answer.status_code == 422
    assert "refusing to connect" in answer.json()["detail"]
    monkeypatch.setenv("CHIPWATCH_ALLOW_PRIVATE_NETWORKS", "1")
    get_settings.cache_clear()
    assert (
        client.post("/v1/sources", json={"url": url, "name": "Internal"}, headers=admin_headers).status_code
        == 201
    )


# --------------------------------------------------------------------------------------------------
# POST /v1/sources/{id}/check and GET /v1/sources/{id}


def test_check_now_answers_the_outcome_and_health_shows_it(client, checked):
    assert checked["status"] == "ok"
    assert (checked["http_status"], checked["new_items"], checked["updated_items"]) == (200, 4, 0)
    assert checked["error"] is None
    health = client.get("/v1/sources/chipnews").json()
    assert health["last_status"] == "ok"
    assert health["kind"] == "rss"
    assert health["items_count"] == 4
    assert datetime.fromisoformat(health["next_check_at"]) == datetime.fromisoformat(checked["next_check_at"])


def test_check_now_of_an_unreachable_feed_is_an_error_outcome(client, admin_headers, closed_port_url):
    add_source("down", closed_port_url)
    answer = client.post("/v1/sources/down/check", headers=admin_headers)
    assert answer.status_code == 200
    body = answer.json()
    assert body["status"] == "error"
    assert body["error"].startswith("connection failed")
    health = client.get("/v1/sources/down").json()
    assert (health["last_status"], health["consecutive_failures"]) == ("error", 1)
    assert health["last_error"] == body["error"]


def test_check_now_of_unknown_and_non_feed_sources(client, admin_headers):
    missing = client.post("/v1/sources/no-such-feed/check", headers=admin_headers)
    assert missing.status_code == 404
    assert missing.headers["content-type"] == PROBLEM
    article = client.post("/v1/sources/36kr/check", headers=admin_headers)
    assert article.status_code == 409
    assert "not a polled feed" in article.json()["detail"]


# --------------------------------------------------------------------------------------------------
# GET /v1/items


def test_items_are_newest_first_with_mentions(client, checked):
    items = client.get("/v1/items", params={"source": "chipnews"}).json()["items"]
    # The undated note sorts by when it was first seen (now), ahead of the August items.
    assert [i["guid"] for i in items] == ["en-3", "en-2", "en-1", "zh-1"]
    undated = items[0]
    assert undated["published_at"] is None and undated["published_is_estimated"] is True
    assert undated["sort_at"] == undated["first_seen_at"]
    mentions = {m["entity_id"]: m["entity_kind"] for m in items[2]["mentions"]}
    assert mentions["jalapeno"] == "chip" and mentions["gb300"] == "chip"


def test_items_mentioning_jalapeno_include_the_chinese_name(client, checked):
    answer = client.get("/v1/items", params={"mentions": "jalapeno"})
    assert answer.status_code == 200
    assert {i["guid"] for i in answer.json()["items"]} == {"zh-1", "en-1"}
    chinese = next(i for i in answer.json()["items"] if i["guid"] == "zh-1")
    assert "墨西哥辣椒" in chinese["title"]
    assert client.get("/v1/items", params={"mentions": "vera-rubin"}).json()["items"] == []


def test_items_filtered_by_since_and_q(client, checked):
    since = (T0 + timedelta(minutes=30)).isoformat()
    recent = client.get("/v1/items", params={"source": "chipnews", "since": since}).json()["items"]
    assert {i["guid"] for i in recent} == {"en-1", "en-2", "en-3"}
    naive = client.get("/v1/items", params={"since": "2026-08-25T10:30:00"}).json()["items"]
    assert {i["guid"] for i in naive} == {"en-2", "en-3"}
    found = client.get("/v1/items", params={"q": "lpu V2"}).json()["items"]
    assert [i["guid"] for i in found] == ["en-2"]
    in_summary = client.get("/v1/items", params={"q": "ironwood"}).json()["items"]
    assert [i["guid"] for i in in_summary] == ["en-3"]
    assert client.get("/v1/items", params={"q": "100%_"}).json()["items"] == []


def test_items_pages_follow_the_cursor(client, checked):
    seen, cursor = [], None
    while True:
        params = {"source": "chipnews", "limit": 3}
        if cursor:
            params["cursor"] = cursor
        page = client.get("/v1/items", params=params).json()
        seen.extend(i["guid"] for i in page["items"])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == ["en-3", "en-2", "en-1", "zh-1"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"since": "yesterday"}, "since"),
        ({"since": "2026-13-45"}, "since"),
        ({"mentions": "Not An Id"}, "mentions"),
        ({"source": "../etc"}, "source"),
        ({"cursor": "%%%"}, "cursor"),
        ({"cursor": "WzEsMl0"}, "cursor"),  # valid base64 JSON [1,2], not an item cursor
        ({"limit": 0}, "limit"),
        ({"q": ""}, "q"),
    ],
)
def test_bad_item_queries_are_422_problems(client, params, field):
    answer = client.get("/v1/items", params=params)
    assert answer.status_code == 422, answer.text
    assert answer.headers["content-type"] == PROBLEM
    assert answer.json()["errors"][0]["field"] == field


def test_one_item_with_content_and_mentions(client, checked):
    (item,) = [i for i in items_of("chipnews") if i.guid == "en-1"]
    answer = client.get(f"/v1/items/{item.id}")
    assert answer.status_code == 200
    body = answer.json()
    assert body["content"] == "Hot Chips."
    assert {m["entity_id"] for m in body["mentions"]} >= {"jalapeno", "gb300"}
    missing = client.get("/v1/items/999999")
    assert missing.status_code == 404
    assert missing.headers["content-type"] == PROBLEM
    assert client.get("/v1/items/0").status_code == 422


# --------------------------------------------------------------------------------------------------
# OPML


def test_opml_export_lists_every_polled_feed(client):
    answer = client.get("/v1/sources.opml")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/x-opml")
    feeds = parse_opml(answer.content)
    urls = {f["url"] for f in feeds}
    assert len(feeds) == SEEDED_FEEDS
    assert "https://github.com/SemiAnalysisAI/InferenceX/releases.atom" in urls
    assert "https://36kr.com" not in urls  # a seed article, not a feed
    assert {"url": "https://www.ithome.com/rss/", "name": "IT之家"} in feeds


OPML = b"""<?xml version="1.0" encoding="UTF-8"?>
<opml version="2.0"><head><title>mine</title></head><body>
  <outline text="Hardware">
    <outline type="rss" text="The Next Platform" xmlUrl="https://www.nextplatform.com/feed/"/>
    <outline type="rss" text="Fabricated Knowledge" xmlUrl="https://www.fabricatedknowledge.com/feed"/>
    <outline type="rss" text="Internal" xmlUrl="http://10.0.0.5/rss"/>
  </outline>
</body></opml>"""


def test_opml_import_adds_new_feeds_and_skips_known_ones(client, admin_headers, monkeypatch):
    monkeypatch.setenv("CHIPWATCH_ALLOW_PRIVATE_NETWORKS", "0")
    get_settings.cache_clear()
    answer = client.post(
        "/v1/sources/opml",
        content=OPML,
        params={"trust": "analyst"},
        headers={**admin_headers, "Content-Type": "text/x-opml"},
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["created"] == ["fabricated-knowledge"]
    reasons = {s["url"]: s["reason"] for s in body["skipped"]}
    assert "already watches" in reasons["https://www.nextplatform.com/feed/"]
    assert "private" in reasons["http://10.0.0.5/rss"]
    assert client.get("/v1/sources/fabricated-knowledge").json()["trust"] == "analyst"
    again = client.post("/v1/sources/opml", content=OPML, headers=admin_headers).json()
    assert again["created"] == []


def test_an_opml_feed_of_another_scheme_is_listed_as_skipped_not_dropped_unsaid(client, admin_headers):
    opml = b"""<opml version="2.0"><body><outline text="Local" xmlUrl="file:///etc/passwd"/>
      <outline text="Old" xmlUrl="ftp://ftp.example/feed.xml"/><outline text="Folder"/></body></opml>"""
    answer = client.post("/v1/sources/opml", content=opml,
                         headers={**admin_headers, "Content-Type": "text/x-opml"})
    assert answer.status_code == 200, answer.text
    assert answer.json()["created"] == []
    reasons = {s["url"]: s["reason"] for s in answer.json()["skipped"]}
    assert reasons == {
        "file:///etc/passwd": "url: URL scheme 'file' is not allowed; use http or https",
        "ftp://ftp.example/feed.xml": "url: URL scheme 'ftp' is not allowed; use http or https",
    }


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        (
            b'<?xml version="1.0"?><!DOCTYPE opml [<!ENTITY x SYSTEM "file:///etc/passwd">]><opml>&x;</opml>',
            "external entity",
        ),
        (
            b'<?xml version="1.0"?><!DOCTYPE o [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;">]>'
            b"<opml>&b;</opml>",
            "nested entity expansion",
        ),
        (b"<rss version='2.0'><channel/></rss>", "not an OPML document"),
        (b"<opml", "invalid OPML"),
        (b"", "empty OPML document"),
    ],
)
def test_unsafe_or_broken_opml_is_a_422_problem(client, admin_headers, body, detail):
    answer = client.post("/v1/sources/opml", content=body, headers=admin_headers)
    assert answer.status_code == 422
    assert answer.headers["content-type"] == PROBLEM
    assert detail in answer.json()["detail"]


def test_opml_sent_as_a_form_upload_is_a_415_saying_to_send_the_document(client, admin_headers):
    before = client.get("/v1/sources", params={"limit": 500}).json()["items"]
    opml = b'<opml version="2.0"><body><outline xmlUrl="https://feeds.example.com/rss"/></body></opml>'
    answer = client.post(
        "/v1/sources/opml", files={"file": ("feeds.opml", opml, "text/x-opml")}, headers=admin_headers
    )
    assert answer.status_code == 415
    assert answer.headers["content-type"] == PROBLEM
    assert answer.json()["detail"] == (
        "send the OPML document itself as the body (curl --data-binary @feeds.opml "
        "-H 'content-type: text/x-opml'), not as a form upload"
    )
    assert client.get("/v1/sources", params={"limit": 500}).json()["items"] == before


def test_oversized_opml_is_refused(client, admin_headers):
    answer = client.post(
        "/v1/sources/opml", content=b"<opml>" + b" " * (3 * 1024 * 1024), headers=admin_headers
    )
    assert answer.status_code == 413
    assert answer.headers["content-type"] == PROBLEM
