"""Feed entries read the way the news means them: dates in the source's zone, or unknown with the reason;
the article's link chosen by relation, never an enclosure."""

from __future__ import annotations

import html
import io
import warnings
from datetime import UTC, datetime

import feedparser
import pytest

from chipwatch.sources.errors import FeedParseError
from chipwatch.sources.parse import ParsedEntry, parse_feed
from tests.fixtures.corpus import corpus_dir, requires_corpus

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def rss_entry(pub: str, *, tz: str | None = None, extra: str = "") -> ParsedEntry:
    body = (
        '<rss version="2.0"><channel><title>t</title><item><title>x</title>'
        f"<pubDate>{html.escape(pub)}</pubDate>{extra}</item></channel></rss>"
    )
    feed = parse_feed(body.encode(), url="https://news.example/feed", headers={}, now=NOW, default_tz=tz)
    (entry,) = feed.entries
    return entry


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


# (pubDate, source zone, publication instant or None, reason code, precision)
DATES = [
    # the case: 00:30 CET is 23:30 UTC the day before, so published_after 2026-11-30 does not hold
    ("Mon, 30 Nov 2026 00:30:00 CET", None, "2026-11-29T23:30:00Z", "zone", "second"),
    ("Mon, 30 Nov 2026 00:30:00 CET", "Asia/Shanghai", "2026-11-29T23:30:00Z", "zone", "second"),
    # CST: China Standard Time for a Chinese source, US Central (RFC 5322) otherwise
    ("Mon, 30 Nov 2026 08:30:00 CST", "Asia/Shanghai", "2026-11-30T00:30:00Z", "zone-by-source", "second"),
    ("Mon, 30 Nov 2026 08:30:00 CST", None, "2026-11-30T14:30:00Z", "zone", "second"),
    ("Mon, 30 Nov 2026 08:30:00 CST", "America/Chicago", "2026-11-30T14:30:00Z", "zone-by-source", "second"),
    # IST has three meanings: only a source zone that uses it says which
    ("Mon, 30 Nov 2026 08:30:00 IST", "Asia/Kolkata", "2026-11-30T03:00:00Z", "zone-by-source", "second"),
    ("Mon, 30 Nov 2026 08:30:00 IST", None, None, "ambiguous-zone", None),
    # an abbreviation nobody defines is never taken as UTC
    ("Mon, 30 Nov 2026 08:30:00 XYZ", None, None, "unknown-zone", None),
    # no zone written: the source's zone, else UTC
    ("2026-11-30 08:30", "Asia/Shanghai", "2026-11-30T00:30:00Z", "no-zone-source", "minute"),
    ("2026-11-30 08:30", None, "2026-11-30T08:30:00Z", "no-zone-utc", "minute"),
    ("2026年11月30日 08:30", None, "2026-11-30T00:30:00Z", "no-zone-script", "minute"),
    ("2026年11月30日 下午3点半", "Asia/Shanghai", "2026-11-30T07:30:00Z", "no-zone-source", "minute"),
    ("Mon, 30 Nov 2026 08:30:00 +0800", None, "2026-11-30T00:30:00Z", "offset", "second"),
    ("2026-11-30T08:30:00+08:00", "America/Chicago", "2026-11-30T00:30:00Z", "offset", "second"),
    # other shapes: read right, or unknown; never the first of the current month
    ("30.11.2026 08:30", None, "2026-11-30T08:30:00Z", "no-zone-utc", "minute"),
    ("2026/11/30", None, "2026-11-30T00:00:00Z", "no-zone-utc", "day"),
    ("04/05/2026", None, None, "ambiguous-order", None),
    ("Nov 30", None, None, "missing-year", None),
    ("sometime last week", None, None, "unreadable", None),
    # a month alone is kept as its first instant with its precision
    ("Nov. 2026", None, "2026-11-01T00:00:00Z", "no-zone-utc", "month"),
    # outside 1995 .. now + 2 days
    ("Thu, 01 Jan 1970 00:00:00 GMT", None, None, "implausible", None),
    ("Fri, 01 Jan 2100 00:00:00 GMT", None, None, "implausible", None),
]


@pytest.mark.parametrize(("pub", "tz", "expected", "code", "precision"), DATES, ids=[d[0] for d in DATES])
def test_entry_dates(
    pub: str, tz: str | None, expected: str | None, code: str, precision: str | None
) -> None:
    entry = rss_entry(pub, tz=tz)
    assert entry.published_reason.split(":")[0] == code, entry.published_reason
    assert entry.published_precision == precision
    if expected is None:
        assert entry.published_at is None and entry.published_is_estimated is True
    else:
        assert entry.published_at == utc(expected) and entry.published_is_estimated is False


def test_an_entry_without_a_date_says_so() -> None:
    body = b'<rss version="2.0"><channel><title>t</title><item><title>x</title></item></channel></rss>'
    (entry,) = parse_feed(body, url="https://news.example/feed", headers={}, now=NOW).entries
    assert entry.published_at is None and entry.published_reason.startswith("missing")


def test_an_unreadable_publication_date_is_not_replaced_by_the_update_time() -> None:
    body = (
        b'<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title><entry><title>x</title>'
        b"<published>Mon, 30 Nov 2026 08:30:00 IST</published><updated>2026-11-30T10:00:00Z</updated>"
        b"</entry></feed>"
    )
    (entry,) = parse_feed(body, url="https://news.example/feed", headers={}, now=NOW).entries
    assert entry.published_at is None and entry.published_reason.startswith("ambiguous-zone")


def test_json_feed_dates_use_the_source_zone() -> None:
    body = b'{"version": "https://jsonfeed.org/version/1.1", "title": "t", "items": [{"id": "1", ' \
           b'"title": "x", "date_published": "2026-11-30 08:30"}]}'
    (entry,) = parse_feed(body, url="https://news.example/feed.json", headers={}, now=NOW,
                          default_tz="Asia/Shanghai").entries
    assert entry.published_at == utc("2026-11-30T00:30:00Z")


def test_an_unknown_source_zone_is_refused() -> None:
    with pytest.raises(ValueError, match="Mars/Olympus"):
        parse_feed(b"<rss/>", url="https://news.example/feed", headers={}, now=NOW, default_tz="Mars/Olympus")


# --------------------------------------------------------------------------------------------------
# Links

ARTICLE = "https://news.example/2026/11/jalapeno-ships"
IMAGE = "https://cdn.news.example/jalapeno.jpg"


def atom_link(links: str) -> str | None:
    body = (
        '<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title>'
        f"<entry><title>x</title><id>urn:x:1</id>{links}</entry></feed>"
    ).encode()
    (entry,) = parse_feed(body, url="https://news.example/feed", headers={}, now=NOW).entries
    return entry.link


# (links of an Atom entry, the article link)
ATOM_LINKS = [
    # the case: the enclosure's URL is element text, with no href
    (f'<link rel="alternate" href="{ARTICLE}"/><link rel="enclosure">{IMAGE}</link>', ARTICLE),
    (f'<link rel="enclosure">{IMAGE}</link><link rel="alternate" href="{ARTICLE}"/>', ARTICLE),
    (f'<link rel="enclosure" href="{IMAGE}" type="image/jpeg"/><link href="{ARTICLE}"/>', ARTICLE),
    (f'<link rel="alternate" type="application/pdf" href="{IMAGE}"/>'
     f'<link rel="alternate" type="text/html" href="{ARTICLE}"/>', ARTICLE),
    (f'<link rel="self" href="{IMAGE}"/><link rel="replies" href="{IMAGE}"/>'
     f'<link href="{ARTICLE}"/>', ARTICLE),
    (f'<link rel="related" type="text/html" href="{ARTICLE}"/>'
     f'<link rel="enclosure" href="{IMAGE}"/>', ARTICLE),
    (f'<link rel="http://www.iana.org/assignments/relation/alternate" href="{ARTICLE}"/>', ARTICLE),
    ('<link rel="alternate" href="/2026/11/relative"/>', "https://news.example/2026/11/relative"),
    # only media or no href: no link at all, never the image
    (f'<link rel="enclosure" href="{IMAGE}"/>', None),
    (f'<link rel="enclosure">{IMAGE}</link>', None),
    ('<link rel="alternate" href="javascript:alert(1)"/>', None),
]


@pytest.mark.parametrize(("links", "expected"), ATOM_LINKS)
def test_atom_article_links(links: str, expected: str | None) -> None:
    assert atom_link(links) == expected


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        (f"<link>{ARTICLE}</link><enclosure url='{IMAGE}' type='image/jpeg' length='1'/>", ARTICLE),
        (f"<guid isPermaLink='true'>{ARTICLE}</guid>", ARTICLE),
        (f"<guid>{ARTICLE}</guid>", ARTICLE),  # isPermaLink defaults to true (RSS 2.0)
        (f"<guid isPermaLink='false'>{ARTICLE}</guid>", None),
        (f"<enclosure url='{IMAGE}' type='image/jpeg' length='1'/>", None),
    ],
)
def test_rss_article_links(item: str, expected: str | None) -> None:
    body = f'<rss version="2.0"><channel><title>t</title><item><title>x</title>{item}</item></channel></rss>'
    (entry,) = parse_feed(body.encode(), url="https://news.example/feed", headers={}, now=NOW).entries
    assert entry.link == expected


DATE_KEYS = ("published", "updated", "created")


@requires_corpus
def test_the_corpus_feeds_lose_no_date_feedparser_reads() -> None:
    """Every entry of the corpus's real feeds whose date feedparser reads still has a date after parsing
    (the plausibility bound on the future is lifted: feedparser's own tests are dated anywhere)."""
    far = datetime(2100, 1, 1, tzinfo=UTC)
    dated, lost = 0, []
    for path in sorted(p for p in corpus_dir().rglob("*") if p.suffix in (".xml", ".rdf", ".atom", ".rss")):
        body = path.read_bytes()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = feedparser.parse(io.BytesIO(body)).entries
        try:
            entries = parse_feed(body, url="https://news.example/feed", headers={}, now=far).entries
        except FeedParseError:
            continue
        assert len(entries) == len(expected), path
        for theirs, ours in zip(expected, entries, strict=True):
            filled = [k for k in DATE_KEYS if str(dict.get(theirs, k) or "").strip()]
            key = filled[0] if filled else None
            if key is not None and dict.get(theirs, f"{key}_parsed"):
                dated += 1
                if ours.published_at is None:
                    lost.append((path.name, theirs[key], ours.published_reason))
    assert dated > 300
    assert lost == []
