"""check_source end to end against a local server: storing, dedup, validators, health, schedule,
redirects, mentions and every hostile case, on the migrated test database."""

from __future__ import annotations

import gzip
import json
import logging
import struct
import zlib
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

from chipwatch.db import session_scope
from chipwatch.sources import check, errors, mentions
from chipwatch.sources.check import PERMANENT_REDIRECT_CHECKS
from chipwatch.sources.models import Item, ItemMention, Source
from tests.fixtures.sources import (
    Entry,
    add_source,
    health_events,
    item_count,
    items_of,
    rss,
    run_check,
    source_row,
)

T0 = datetime(2026, 8, 25, 9, 0, tzinfo=UTC)
LONG = (
    "OpenAI's Jalapeño inference chip was shown at Hot Chips with 104.3x the tokens per watt of a GB300 "
    "system on a single-turn workload; the figures were witnessed, not reproduced."
)


def entries(n: int, *, start: int = 0) -> list[Entry]:
    return [
        Entry(
            title=f"Story {i}",
            guid=f"story-{i}",
            link=f"https://news.example.com/2026/story-{i}",
            body=f"Body of story {i}, long enough to stand on its own as a summary of the post number {i}.",
            date=T0 + timedelta(hours=i),
        )
        for i in range(start, start + n)
    ]


def serve(httpserver, body: bytes, path: str = "/feed.xml", **kwargs) -> str:
    httpserver.expect_request(path).respond_with_data(body, content_type="application/rss+xml", **kwargs)
    return httpserver.url_for(path)


# --------------------------------------------------------------------------------------------------
# Storing and deduplicating


def test_first_check_stores_items_and_health(db, httpserver):
    url = serve(
        httpserver,
        rss(entries(3)),
        headers={"ETag": '"v1"', "Last-Modified": "Tue, 25 Aug 2026 12:00:00 GMT"},
    )
    add_source("chips", url)
    before = datetime.now(UTC)
    outcome = run_check("chips")
    assert (outcome.status, outcome.http_status, outcome.new_items, outcome.updated_items) == (
        "ok",
        200,
        3,
        0,
    )
    assert outcome.error is None
    source = source_row("chips")
    assert source.kind == "rss"
    assert source.last_status == "ok"
    assert source.last_http_status == 200
    assert source.last_error is None
    assert source.consecutive_failures == 0
    assert source.etag == '"v1"'
    assert source.last_modified == "Tue, 25 Aug 2026 12:00:00 GMT"
    assert before <= source.last_checked_at == source.last_success_at
    assert source.next_check_at > source.last_checked_at
    assert source.next_check_at == outcome.next_check_at
    assert source.items_count == 3
    assert source.claimed_until is None
    stored = items_of("chips")
    assert [i.title for i in stored] == ["Story 0", "Story 1", "Story 2"]
    assert stored[1].published_at == T0 + timedelta(hours=1)
    assert stored[1].published_is_estimated is False
    assert stored[1].sort_at == stored[1].published_at
    assert stored[1].first_seen_at >= before
    assert stored[1].link_norm == "https://news.example.com/2026/story-1"


def test_a_refetch_adds_zero_rows(db, httpserver):
    url = serve(httpserver, rss(entries(5)))
    add_source("chips", url)
    assert run_check("chips").new_items == 5
    # The same bytes again: recognised by their digest, not parsed again.
    again = run_check("chips")
    assert (again.status, again.new_items, again.updated_items) == ("ok", 0, 0)
    # Different bytes, same entries: parsed, and every entry matched to its stored item.
    httpserver.clear()
    serve(httpserver, rss(entries(5), extra="<lastBuildDate>Wed, 26 Aug 2026 10:00:00 GMT</lastBuildDate>"))
    third = run_check("chips")
    assert (third.status, third.new_items, third.updated_items) == ("ok", 0, 0)
    assert item_count() == 5
    assert source_row("chips").items_count == 5


def test_dedup_by_guid_then_link_then_content(db, httpserver):
    first = [
        Entry("Guid story", guid="g-1", link="https://news.example.com/a", body="A " * 50, date=T0),
        Entry("Link story", link="https://news.example.com/b?id=7", body="B " * 50, date=T0),
        Entry("Text story", body=LONG, date=T0),
    ]
    url = serve(httpserver, rss(first))
    add_source("chips", url)
    assert run_check("chips").new_items == 3
    ids = [i.id for i in items_of("chips")]

    second = [
        # same guid, new title: the stored item is updated
        Entry("Guid story (updated)", guid="g-1", link="https://news.example.com/a", body="A " * 50, date=T0),
        # no guid; the same link written differently (tracking parameter, host case, fragment)
        Entry(
            "Link story", link="https://NEWS.example.com/b?utm_source=rss&id=7#top", body="B " * 50, date=T0
        ),
        # no guid, no link: the same title, text and date
        Entry("Text story", body=LONG, date=T0),
        # no guid, no link, the same text and date under another title: another story
        Entry("Text story, retitled", body=LONG, date=T0),
        Entry("Brand new", guid="g-9", link="https://news.example.com/new", body="N " * 50, date=T0),
    ]
    httpserver.clear()
    serve(httpserver, rss(second))
    outcome = run_check("chips")
    assert (outcome.new_items, outcome.updated_items) == (2, 1)
    stored = items_of("chips")
    assert [i.id for i in stored[:3]] == ids
    assert stored[0].title == "Guid story (updated)"
    assert stored[0].updated_at is not None
    assert stored[1].updated_at is None  # the link spelled differently is the same item, unchanged
    assert stored[2].title == "Text story" and stored[2].updated_at is None
    assert [i.title for i in stored[3:]] == ["Text story, retitled", "Brand new"]


def test_a_story_republished_under_a_new_slug_updates_the_stored_item(db, httpserver):
    old = Entry(
        "Jalapeño at Hot Chips",
        guid="https://news.example.com/?p=101",
        link="https://news.example.com/2026/08/jalapeno-hot-chips",
        body=LONG,
        date=T0,
    )
    url = serve(httpserver, rss([old, *entries(2)]))
    add_source("chips", url)
    run_check("chips")
    before = {i.title: i for i in items_of("chips")}["Jalapeño at Hot Chips"]

    # the same title, body and date under a new slug and guid: the same story, moved
    new = Entry(
        "Jalapeño at Hot Chips",
        guid="https://news.example.com/?p=102",
        link="https://news.example.com/2026/08/openai-jalapeno-104x",
        body=LONG,
        date=T0,
    )
    httpserver.clear()
    serve(httpserver, rss([new, *entries(2)]))
    outcome = run_check("chips")
    assert (outcome.new_items, outcome.updated_items) == (0, 1)
    after = next(i for i in items_of("chips") if i.id == before.id)
    assert after.link == new.link
    assert after.guid == new.guid
    assert after.first_seen_at == before.first_seen_at
    assert after.published_at == T0
    assert item_count() == 3
    # ... and fetching the new version again changes nothing.
    httpserver.clear()
    serve(httpserver, rss([new, *entries(2)], extra="<ttl>60</ttl>"))
    assert (run_check("chips").new_items, run_check("chips").updated_items) == (0, 0)


def test_a_guid_shared_by_several_entries_falls_back_to_the_link(db, httpserver, caplog):
    shared = [
        Entry(
            f"Episode {i}",
            guid="https://podcast.example.com/",
            link=f"https://podcast.example.com/ep/{i}",
            body=f"Show notes of episode {i}",
            date=T0 + timedelta(days=i),
        )
        for i in range(3)
    ]
    url = serve(httpserver, rss(shared))
    add_source("pod", url)
    with caplog.at_level(logging.WARNING, logger="chipwatch.sources.store"):
        outcome = run_check("pod")
    assert outcome.new_items == 3
    assert any("shared by 3 entries" in r.getMessage() for r in caplog.records)
    httpserver.clear()
    serve(httpserver, rss(shared, extra="<ttl>30</ttl>"))
    assert (run_check("pod").new_items, item_count()) == (0, 3)


def test_entries_repeated_verbatim_are_stored_once(db, httpserver):
    story = entries(1)[0]
    url = serve(httpserver, rss([story, story, *entries(1, start=5)]))
    add_source("chips", url)
    assert run_check("chips").new_items == 2


def test_links_to_the_home_page_are_not_a_key(db, httpserver):
    # Different posts that all link to the site's front page are different items.
    posts = [Entry(f"Note {i}", link="https://news.example.com/", body=f"Note number {i}") for i in range(3)]
    url = serve(httpserver, rss(posts))
    add_source("notes", url)
    assert run_check("notes").new_items == 3
    httpserver.clear()
    serve(httpserver, rss([Entry("Note 3", link="https://news.example.com/", body="Note number 3"), *posts]))
    assert (run_check("notes").new_items, item_count()) == (1, 4)


def test_undated_items_are_estimated_and_sorted_by_first_seen(db, httpserver):
    url = serve(
        httpserver,
        rss(
            [
                Entry("No date", guid="nd-1", body="x"),
                Entry("Bad date", guid="nd-2", body="y", date=datetime(1970, 1, 1, tzinfo=UTC)),
            ]
        ),
    )
    add_source("chips", url)
    run_check("chips")
    for item in items_of("chips"):
        assert item.published_at is None
        assert item.published_is_estimated is True
        assert item.sort_at == item.first_seen_at


def test_stored_dates_survive_an_entry_that_loses_its_date(db, httpserver):
    dated = Entry("Dated", guid="d-1", body=LONG, date=T0)
    url = serve(httpserver, rss([dated]))
    add_source("chips", url)
    run_check("chips")
    httpserver.clear()
    serve(httpserver, rss([Entry("Dated", guid="d-1", body=LONG)]))
    run_check("chips")
    (item,) = items_of("chips")
    assert item.published_at == T0
    assert item.published_is_estimated is False


@pytest.mark.parametrize(
    ("body", "content_type", "kind"),
    [
        (
            b'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>A</title>'
            b"<entry><id>urn:a:1</id><title>Atom entry</title>"
            b"<updated>2026-08-25T10:00:00Z</updated></entry></feed>",
            "application/atom+xml",
            "atom",
        ),
        (
            b'<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
            b'xmlns="http://purl.org/rss/1.0/"><channel rdf:about="https://x.example/"><title>R</title></channel>'
            b'<item rdf:about="https://x.example/1"><title>RDF item</title><link>https://x.example/1</link></item>'
            b"</rdf:RDF>",
            "application/rdf+xml",
            "rdf",
        ),
        (
            json.dumps(
                {
                    "version": "https://jsonfeed.org/version/1.1",
                    "title": "J",
                    "items": [{"id": "1", "url": "https://x.example/j", "content_text": "JSON item"}],
                }
            ).encode(),
            "application/feed+json",
            "json",
        ),
    ],
    ids=["atom", "rdf", "json"],
)
def test_the_kind_is_detected_and_saved(db, httpserver, body, content_type, kind):
    httpserver.expect_request("/feed").respond_with_data(body, content_type=content_type)
    add_source("k", httpserver.url_for("/feed"))
    assert run_check("k").new_items == 1
    assert source_row("k").kind == kind


def test_a_source_that_is_not_a_feed_is_refused_before_any_fetch(db):
    with pytest.raises(errors.NotAFeed):
        run_check("36kr")  # a seed article
    with pytest.raises(errors.SourceNotFound):
        run_check("no-such-source")


# --------------------------------------------------------------------------------------------------
# Validators, 304, caching headers and the schedule


def test_304_keeps_items_and_records_health(db, httpserver):
    httpserver.expect_ordered_request("/feed.xml").respond_with_data(
        rss(entries(2)), headers={"ETag": '"v1"', "Last-Modified": "Tue, 25 Aug 2026 12:00:00 GMT"}
    )
    httpserver.expect_ordered_request("/feed.xml", headers={"If-None-Match": '"v1"'}).respond_with_data(
        "", status=304, headers={"ETag": '"v1"'}
    )
    add_source("chips", httpserver.url_for("/feed.xml"))
    run_check("chips")
    first = source_row("chips")
    outcome = run_check("chips")
    assert (outcome.status, outcome.http_status, outcome.new_items) == ("not_modified", 304, 0)
    source = source_row("chips")
    assert source.last_status == "not_modified"
    assert source.last_http_status == 304
    assert source.etag == '"v1"'
    assert source.last_modified == "Tue, 25 Aug 2026 12:00:00 GMT"  # kept: the 304 sent none
    assert source.last_checked_at > first.last_checked_at
    assert source.consecutive_failures == 0
    assert item_count() == 2
    request = httpserver.log[1][0]
    assert request.headers["If-Modified-Since"] == "Tue, 25 Aug 2026 12:00:00 GMT"


def test_new_validators_replace_the_stored_ones(db, httpserver):
    httpserver.expect_ordered_request("/feed.xml").respond_with_data(
        rss(entries(1)), headers={"ETag": '"v1"'}
    )
    httpserver.expect_ordered_request("/feed.xml").respond_with_data(
        rss(entries(2)), headers={"ETag": '"v2"', "Last-Modified": "Wed, 26 Aug 2026 08:00:00 GMT"}
    )
    add_source("chips", httpserver.url_for("/feed.xml"))
    run_check("chips")
    assert run_check("chips").new_items == 1
    source = source_row("chips")
    assert (source.etag, source.last_modified) == ('"v2"', "Wed, 26 Aug 2026 08:00:00 GMT")


def test_cache_control_max_age_is_a_floor_on_the_next_check(db, httpserver):
    url = serve(httpserver, rss(entries(1)), headers={"Cache-Control": "max-age=7200"})
    add_source("chips", url, check_interval_s=600)
    outcome = run_check("chips")
    source = source_row("chips")
    assert (outcome.next_check_at - source.last_checked_at).total_seconds() == pytest.approx(7200, abs=1)


def test_a_fixed_interval_is_used_when_healthy(db, httpserver):
    url = serve(httpserver, rss(entries(1)))
    add_source("chips", url, check_interval_s=900)
    run_check("chips")
    source = source_row("chips")
    assert (source.next_check_at - source.last_checked_at).total_seconds() == pytest.approx(900, abs=1)


def test_the_adaptive_interval_follows_the_item_rhythm(db, httpserver):
    # One item every two hours: checked about every hour (half the typical gap).
    every_two_hours = [
        Entry(f"Post {i}", guid=f"p{i}", body=f"post {i}", date=T0 + timedelta(hours=2 * i))
        for i in range(10)
    ]
    url = serve(httpserver, rss(every_two_hours))
    add_source("chips", url)
    run_check("chips")
    source = source_row("chips")
    assert source.effective_interval_s == 3600
    assert (source.next_check_at - source.last_checked_at).total_seconds() == pytest.approx(3600, abs=1)
    # Many items a minute apart: clamped to the 5 minute floor.
    burst = [
        Entry(f"Flash {i}", guid=f"f{i}", body=f"f {i}", date=T0 + timedelta(minutes=i)) for i in range(30)
    ]
    httpserver.clear()
    serve(httpserver, rss(burst))
    run_check("chips")
    assert source_row("chips").effective_interval_s == db.min_check_interval_s


def test_429_retry_after_is_honoured(db, httpserver):
    url = serve(httpserver, b"slow down", headers={"Retry-After": "7200"}, status=429)
    add_source("chips", url)
    outcome = run_check("chips")
    assert (outcome.status, outcome.http_status) == ("error", 429)
    source = source_row("chips")
    assert source.last_error.startswith("HTTP 429")
    assert (source.next_check_at - source.last_checked_at).total_seconds() >= 7200


def test_failures_back_off_exponentially_with_jitter_and_never_stop(db, closed_port_url):
    add_source("down", closed_port_url, check_interval_s=600)
    delays = []
    for n in range(1, 6):
        outcome = run_check("down")
        source = source_row("down")
        assert outcome.status == "error"
        assert source.consecutive_failures == n
        delays.append((source.next_check_at - source.last_checked_at).total_seconds())
    for n, delay in enumerate(delays, start=1):
        ceiling = 600 * 2 ** (n - 1)
        assert ceiling / 2 - 1 <= delay <= ceiling + 1, (n, delay)
    # After a very long outage the delay is capped at a day: the source is retried daily, for ever.
    with session_scope() as session:
        session.execute(update(Source).where(Source.id == "down").values(consecutive_failures=500))
    run_check("down")
    source = source_row("down")
    assert source.consecutive_failures == 501
    assert source.next_check_at is not None
    assert 43200 - 1 <= (source.next_check_at - source.last_checked_at).total_seconds() <= 86400 + 1


# --------------------------------------------------------------------------------------------------
# Health and its events


def test_an_unreachable_source_records_an_error_and_does_not_raise(db, closed_port_url):
    add_source("gone", "http://feeds.chipwatch.invalid/rss")
    add_source("refused", closed_port_url)
    for source_id, start in (("gone", "DNS lookup failed"), ("refused", "connection failed")):
        outcome = run_check(source_id)
        assert outcome.status == "error"
        assert outcome.error.startswith(start), outcome.error
        source = source_row(source_id)
        assert source.last_status == "error"
        assert source.last_error == outcome.error
        assert source.consecutive_failures == 1
        assert source.last_success_at is None
        assert source.next_check_at > source.last_checked_at


def test_health_changed_events_on_failing_and_recovering(db, httpserver):
    good = rss(entries(2))
    httpserver.expect_ordered_request("/feed.xml").respond_with_data(good)
    httpserver.expect_ordered_request("/feed.xml").respond_with_data("oops", status=500)
    httpserver.expect_ordered_request("/feed.xml").respond_with_data("still", status=502)
    httpserver.expect_ordered_request("/feed.xml").respond_with_data(rss(entries(3)))
    add_source("flaky", httpserver.url_for("/feed.xml"))
    run_check("flaky")
    assert health_events("flaky") == []  # healthy from the start: nothing changed
    run_check("flaky")
    run_check("flaky")  # still failing: no second event
    (failing,) = health_events("flaky")
    assert failing["healthy"] is False
    assert failing["consecutive_failures"] == 1
    assert failing["last_error"] == "HTTP 500 INTERNAL SERVER ERROR"
    assert failing["source_id"] == "flaky"
    assert failing["name"] == "Flaky"
    assert datetime.fromisoformat(failing["last_checked_at"]).tzinfo is not None
    outcome = run_check("flaky")
    assert outcome.new_items == 1
    recovered = health_events("flaky")[-1]
    assert recovered["healthy"] is True
    assert recovered["consecutive_failures"] == 0
    assert recovered["last_error"] is None
    assert len(health_events("flaky")) == 2


def test_a_malformed_feed_keeps_earlier_items_and_marks_health(db, httpserver):
    httpserver.expect_ordered_request("/feed.xml").respond_with_data(
        rss(entries(3)), headers={"ETag": '"good"'}
    )
    httpserver.expect_ordered_request("/feed.xml").respond_with_data(
        b"<html><body>Maintenance</body></html>", content_type="text/html", headers={"ETag": '"html"'}
    )
    add_source("chips", httpserver.url_for("/feed.xml"))
    run_check("chips")
    outcome = run_check("chips")
    assert outcome.status == "error"
    assert outcome.http_status == 200
    assert outcome.error == "malformed feed: document is an HTML page, not a feed"
    source = source_row("chips")
    assert source.last_status == "error"
    assert source.consecutive_failures == 1
    assert source.etag == '"good"'  # the broken answer's validators are not kept
    assert source.kind == "rss"
    assert len(items_of("chips")) == 3


# --------------------------------------------------------------------------------------------------
# Redirects


def test_repeated_permanent_redirects_rewrite_the_url(db, httpserver):
    httpserver.expect_request("/old.xml").respond_with_data(
        "", status=301, headers={"Location": httpserver.url_for("/new.xml")}
    )
    httpserver.expect_request("/new.xml").respond_with_data(rss(entries(1)))
    old = httpserver.url_for("/old.xml")
    add_source("moved", old)
    for n in range(1, PERMANENT_REDIRECT_CHECKS):
        assert run_check("moved").status == "ok"
        source = source_row("moved")
        assert source.url == old
        assert (source.permanent_redirects, source.redirect_target) == (n, httpserver.url_for("/new.xml"))
    run_check("moved")
    source = source_row("moved")
    assert source.url == httpserver.url_for("/new.xml")
    assert (source.permanent_redirects, source.redirect_target) == (0, None)
    run_check("moved")
    assert httpserver.log[-1][0].path == "/new.xml"
    assert item_count() == 1


@pytest.mark.parametrize("status", [302, 307])
def test_temporary_redirects_never_rewrite_the_url(db, httpserver, status):
    httpserver.expect_request("/feed.xml").respond_with_data(
        "", status=status, headers={"Location": httpserver.url_for("/elsewhere.xml")}
    )
    httpserver.expect_request("/elsewhere.xml").respond_with_data(rss(entries(1)))
    add_source("tmp", httpserver.url_for("/feed.xml"))
    for _ in range(PERMANENT_REDIRECT_CHECKS + 2):
        assert run_check("tmp").status == "ok"
    source = source_row("tmp")
    assert source.url == httpserver.url_for("/feed.xml")
    assert source.permanent_redirects == 0


def test_a_permanent_redirect_that_stops_resets_the_count(db, httpserver):
    httpserver.expect_ordered_request("/feed.xml").respond_with_data(
        "", status=308, headers={"Location": "/new.xml"}
    )
    httpserver.expect_ordered_request("/new.xml").respond_with_data(rss(entries(1)))
    httpserver.expect_ordered_request("/feed.xml").respond_with_data(rss(entries(1)))
    add_source("wobbly", httpserver.url_for("/feed.xml"))
    run_check("wobbly")
    assert source_row("wobbly").permanent_redirects == 1
    run_check("wobbly")
    assert (source_row("wobbly").permanent_redirects, source_row("wobbly").redirect_target) == (0, None)


# --------------------------------------------------------------------------------------------------
# Hostile and broken feeds: each marks health with a readable error, keeps earlier items, and the
# API keeps answering.


def gzip_bomb(megabytes: int) -> bytes:
    """A valid gzip body inflating to ``megabytes`` MiB of zeros (~1 KB on the wire per MiB)."""
    chunk = bytes(1 << 20)
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    segment = compressor.compress(chunk) + compressor.flush(zlib.Z_FULL_FLUSH)
    final = compressor.flush(zlib.Z_FINISH)
    crc = 0
    for _ in range(megabytes):
        crc = zlib.crc32(chunk, crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    return header + segment * megabytes + final + struct.pack("<II", crc, (megabytes << 20) & 0xFFFFFFFF)


LAUGHS = (
    '<?xml version="1.0"?>\n<!DOCTYPE rss [\n<!ENTITY lol "lol">'
    + "".join(
        f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">' for i in range(1, 10)
    )
    + '\n]>\n<rss version="2.0"><channel><title>&lol9;</title><item><title>x</title></item></channel></rss>'
).encode()
XXE = (
    b'<?xml version="1.0"?>\n<!DOCTYPE rss [\n<!ENTITY xxe SYSTEM "file:///etc/passwd">\n]>\n'
    b'<rss version="2.0"><channel><title>t</title><item><title>&xxe;</title></item></channel></rss>'
)

HOSTILE = {
    "oversize": (lambda: (b"<rss>" + b"x" * 300_000 + b"</rss>", {}), "response larger than 200000 bytes"),
    "gzip-bomb": (lambda: (gzip_bomb(300), {"Content-Encoding": "gzip"}), "response larger than"),
    "entity-expansion": (lambda: (LAUGHS, {}), "malformed feed: refusing XML whose entity"),
    "external-entity": (lambda: (XXE, {}), "malformed feed: refusing XML that declares external entity"),
    "wrong-content-encoding": (
        lambda: (rss(entries(1)), {"Content-Encoding": "gzip"}),
        "response body is not valid gzip",
    ),
    "unknown-content-encoding": (
        lambda: (rss(entries(1)), {"Content-Encoding": "br"}),
        "unsupported Content-Encoding",
    ),
    "truncated": (
        lambda: (b'<?xml version="1.0"?><rss version="2.0"><chan', {}),
        "malformed feed: not a feed",
    ),
    "not-xml": (lambda: (b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4, {}), "malformed feed"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_feeds_mark_health_and_keep_items(db, httpserver, client, case):
    make, message = HOSTILE[case]
    body, headers = make()
    httpserver.expect_ordered_request("/feed.xml").respond_with_data(rss(entries(2)))
    httpserver.expect_ordered_request("/feed.xml").respond_with_data(
        body, content_type="application/rss+xml", headers=headers
    )
    add_source("hostile", httpserver.url_for("/feed.xml"))
    settings = db.model_copy(update={"fetch_max_bytes": 200_000} if case == "oversize" else {})
    run_check("hostile", settings)
    outcome = run_check("hostile", settings)
    assert outcome.status == "error"
    assert message in outcome.error, outcome.error
    assert "Traceback" not in outcome.error
    assert len(items_of("hostile")) == 2
    answer = client.get("/v1/sources/hostile")
    assert answer.status_code == 200
    assert answer.json()["last_error"] == outcome.error
    assert answer.json()["consecutive_failures"] == 1
    assert client.get("/v1/items", params={"source": "hostile"}).json()["items"][0]["title"] == "Story 1"


def test_a_never_answering_feed_times_out_and_the_api_answers(db, silent_server, client):
    add_source("silent", silent_server)
    outcome = run_check("silent", db.model_copy(update={"fetch_timeout_s": 1.0}))
    assert outcome.status == "error"
    assert outcome.error == "timed out after 1 s (total limit)"
    assert client.get("/v1/sources/silent").json()["last_error"] == outcome.error


def test_a_wrongly_declared_charset_is_recovered(db, httpserver):
    body = (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Caf\xe9</title>'
        "<item><guid>m1</guid><title>M\xfcnchen setzt auf Jalape\xf1o</title></item></channel></rss>"
    ).encode("latin-1")
    httpserver.expect_request("/cs").respond_with_data(
        body, content_type="application/rss+xml; charset=utf-8"
    )
    add_source("charset", httpserver.url_for("/cs"))
    outcome = run_check("charset")
    assert (outcome.status, outcome.new_items) == ("ok", 1)
    (item,) = items_of("charset")
    assert item.title == "München setzt auf Jalapeño"


def test_storage_failures_end_as_an_error_outcome(db, httpserver, monkeypatch):
    url = serve(httpserver, rss(entries(2)))
    add_source("chips", url)

    def broken(**kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(check, "store_items", broken)
    outcome = run_check("chips")
    assert outcome.status == "error"
    assert outcome.error == "could not store the check: RuntimeError: disk on fire"
    source = source_row("chips")
    assert source.consecutive_failures == 1
    assert source.last_error == outcome.error
    assert item_count() == 0


def test_text_with_nul_characters_and_overlong_keys_is_stored(db, httpserver):
    long_guid = "urn:x:" + "g" * 1500
    body = (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>'
        f"<item><guid>{long_guid}</guid><title>Nul&#0;title</title>"
        f"<link>https://news.example.com/{'p' * 2500}</link><author>{'a' * 900}</author></item>"
        "</channel></rss>"
    ).encode()
    url = serve(httpserver, body)
    add_source("odd", url)
    outcome = run_check("odd")
    assert outcome.status == "ok", outcome.error
    (item,) = items_of("odd")
    assert "\x00" not in item.title
    assert item.guid.startswith("sha256:") and len(item.guid) <= 1000
    assert item.link is None and item.link_norm.startswith("sha256:")
    assert len(item.author) == 500
    assert run_check("odd").new_items == 0


# --------------------------------------------------------------------------------------------------
# Mentions


def test_mentions_link_items_to_entities_in_english_and_chinese(db, httpserver):
    url = serve(
        httpserver,
        rss(
            [
                Entry(
                    "OpenAI 发布墨西哥辣椒推理芯片", guid="zh-1", body="每瓦性能是英伟达的104倍。", date=T0
                ),
                Entry("Jalapeno beats GB300 on InferenceX", guid="en-1", body="A long comparison.", date=T0),
                Entry("Rubinstein plays Chopin", guid="no-1", body="A concert review.", date=T0),
            ]
        ),
    )
    add_source("chips", url)
    run_check("chips")
    with session_scope(write=False) as session:
        rows = session.execute(
            select(Item.guid, ItemMention.entity_id, ItemMention.entity_kind).join(
                ItemMention, ItemMention.item_id == Item.id
            )
        ).all()
    found: dict[str, set[str]] = {}
    kinds = {}
    for guid, entity_id, kind in rows:
        found.setdefault(guid, set()).add(entity_id)
        kinds[entity_id] = kind
    assert {"jalapeno", "openai"} <= found["zh-1"]
    assert {"jalapeno", "gb300", "inferencex"} <= found["en-1"]
    assert "vera-rubin" not in found.get("no-1", set())
    assert (kinds["jalapeno"], kinds["openai"], kinds["inferencex"]) == ("chip", "vendor", "benchmark")


def test_mentions_follow_an_updated_item(db, httpserver):
    httpserver.expect_ordered_request("/f").respond_with_data(
        rss([Entry("About GB300", guid="u1", body="x")])
    )
    httpserver.expect_ordered_request("/f").respond_with_data(
        rss([Entry("About Jalapeño", guid="u1", body="x")])
    )
    add_source("chips", httpserver.url_for("/f"))
    run_check("chips")
    assert run_check("chips").updated_items == 1
    with session_scope(write=False) as session:
        assert set(session.scalars(select(ItemMention.entity_id))) == {"jalapeno"}


def test_the_entity_matcher_is_rebuilt_when_names_change(db):
    from chipwatch.knowledge.models import Chip

    with session_scope() as session:
        first, _ = mentions.entity_matcher(session=session)
        again, _ = mentions.entity_matcher(session=session)
        assert first is again
        session.get(Chip, "jalapeno").aliases = [*session.get(Chip, "jalapeno").aliases, "Habanero"]
        session.flush()
        rebuilt, _ = mentions.entity_matcher(session=session)
        assert rebuilt is not first
        assert "jalapeno" in rebuilt.entities_in("OpenAI's Habanero chip")


def test_new_items_are_handed_to_the_signal_evaluator_in_the_same_transaction(db, httpserver, listen):
    seen = []

    def evaluate_items(*, session, item_ids):
        # The items are visible in the evaluator's session: same transaction, not yet committed.
        seen.append(sorted(session.get(Item, i).guid for i in item_ids))

    listen(evaluate_items)
    url = serve(httpserver, rss(entries(2)))
    add_source("chips", url)
    run_check("chips")
    assert seen == [["story-0", "story-1"]]
    run_check("chips")  # nothing new: not called again
    assert len(seen) == 1


def test_a_failing_evaluator_rolls_the_items_back(db, httpserver, listen):
    def evaluate_items(*, session, item_ids):
        raise ValueError("rule engine broke")

    listen(evaluate_items)
    add_source("chips", serve(httpserver, rss(entries(2))))
    outcome = run_check("chips")
    assert outcome.status == "error"
    assert "rule engine broke" in outcome.error
    assert item_count() == 0
    assert source_row("chips").last_body_sha256 is None  # so the next check parses again


def test_gzip_encoded_feeds_are_stored(db, httpserver):
    url = serve(httpserver, gzip.compress(rss(entries(2))), headers={"Content-Encoding": "gzip"})
    add_source("gz", url)
    assert run_check("gz").new_items == 2


def test_health_events_match_their_published_schema(db, closed_port_url):
    from pathlib import Path

    import jsonschema

    schema_path = (
        Path(__file__).resolve().parents[2] / "schema" / "events" / "source.health_changed.schema.json"
    )
    validator = jsonschema.Draft202012Validator(json.loads(schema_path.read_text()))
    add_source("down", closed_port_url)
    run_check("down")
    (data,) = health_events("down")
    body = {"type": "source.health_changed", "timestamp": datetime.now(UTC).isoformat(), "data": data}
    assert list(validator.iter_errors(body)) == []
