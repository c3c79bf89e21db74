"""The article link of a feed entry, chosen by relation: never an enclosure, never a link without href."""

from __future__ import annotations

import feedparser
import pytest

from chipwatch.text.links import article_link

ATOM = '<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"{base}><title>t</title>{entry}</feed>'
RSS = '<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><link>https://ex.com/</link>{item}</channel></rss>'


def atom_entry(links: str, base: str = "") -> str | None:
    entry = f"<entry><title>a</title><id>urn:x:1</id><updated>2026-11-30T00:00:00Z</updated>{links}</entry>"
    doc = feedparser.parse(ATOM.format(entry=entry, base=f' xml:base="{base}"' if base else "").encode())
    assert len(doc.entries) == 1
    return article_link(doc.entries[0].get("links"))


def rss_item(body: str) -> str | None:
    doc = feedparser.parse(RSS.format(item=f"<item><title>a</title>{body}</item>").encode())
    assert len(doc.entries) == 1
    return article_link(doc.entries[0].get("links"))


@pytest.mark.parametrize(
    ("links", "expected"),
    [
        # the case, in both orders: the enclosure's URL is written as text, without href
        ('<link rel="alternate" href="https://ex.com/story"/><link rel="enclosure">https://ex.com/i.jpg</link>',
         "https://ex.com/story"),
        ('<link rel="enclosure">https://ex.com/i.jpg</link><link rel="alternate" href="https://ex.com/story"/>',
         "https://ex.com/story"),
        # an enclosure with an href is no article either
        ('<link rel="enclosure" type="image/jpeg" href="https://ex.com/i.jpg"/><link href="https://ex.com/s"/>',
         "https://ex.com/s"),
        ('<link rel="enclosure" type="audio/mpeg" href="https://ex.com/a.mp3"/>', None),
        ('<link rel="enclosure">https://ex.com/i.jpg</link>', None),
        ('<link rel="http://www.iana.org/assignments/relation/enclosure" href="https://ex.com/i.jpg"/>',
         None),
        # a link without rel is an alternate (RFC 4287)
        ('<link href="https://ex.com/s"/>', "https://ex.com/s"),
        # among alternates, the HTML one; a non-HTML alternate beats no article at all
        ('<link rel="alternate" type="application/pdf" href="https://ex.com/s.pdf"/>'
         '<link rel="alternate" type="text/html" href="https://ex.com/s.html"/>', "https://ex.com/s.html"),
        ('<link rel="alternate" type="application/pdf" href="https://ex.com/s.pdf"/>', "https://ex.com/s.pdf"),
        ('<link rel="alternate" type="text/html; charset=utf-8" href="https://ex.com/s"/>', "https://ex.com/s"),
        ('<link rel="alternate" type="application/xhtml+xml" href="https://ex.com/s"/>', "https://ex.com/s"),
        # the first alternate wins among equals
        ('<link rel="alternate" href="https://ex.com/1"/><link rel="alternate" href="https://ex.com/2"/>',
         "https://ex.com/1"),
        # an alternate with an empty href is skipped; then the first HTML link of another relation
        ('<link rel="alternate" href=""/><link rel="related" type="text/html" href="https://ex.com/r"/>',
         "https://ex.com/r"),
        # the entry's own Atom document, its comments and its edit link are not the article
        ('<link rel="self" type="application/atom+xml" href="https://ex.com/e.atom"/>'
         '<link rel="replies" type="text/html" href="https://ex.com/comments"/>'
         '<link rel="edit" href="https://ex.com/edit/1"/>', None),
        ('<link rel="self" type="application/atom+xml" href="https://ex.com/e.atom"/>'
         '<link rel="replies" type="text/html" href="https://ex.com/comments"/>'
         '<link rel="related" type="text/html" href="https://ex.com/r"/>', "https://ex.com/r"),
        ('<link rel="related" type="application/json" href="https://ex.com/r.json"/>', None),
        ("", None),
    ],
)
def test_atom_links(links: str, expected: str | None) -> None:
    assert atom_entry(links) == expected


def test_relative_href_is_resolved_against_xml_base() -> None:
    assert atom_entry('<link rel="alternate" href="post-1"/>', base="https://ex.com/blog/") == (
        "https://ex.com/blog/post-1"
    )


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("<link>https://ex.com/a</link>", "https://ex.com/a"),
        ('<link>https://ex.com/a</link><enclosure url="https://ex.com/a.mp3" type="audio/mpeg" length="1"/>',
         "https://ex.com/a"),
        ('<enclosure url="https://ex.com/a.mp3" type="audio/mpeg" length="1"/><link>https://ex.com/a</link>',
         "https://ex.com/a"),
        ('<enclosure url="https://ex.com/a.mp3" type="audio/mpeg" length="1"/>', None),
        ("<link>https://ex.com/a</link><link>https://ex.com/b</link>", "https://ex.com/a"),
        ("<link>  https://ex.com/a  </link>", "https://ex.com/a"),
        ("<link></link>", None),
        # an Atom alternate inside an RSS item counts like the RSS link
        ('<link>https://ex.com/a</link><atom:link xmlns:atom="http://www.w3.org/2005/Atom" rel="enclosure" '
         'href="https://ex.com/i.jpg"/>', "https://ex.com/a"),
        # a permalink guid is not a link element: the caller decides about it
        ('<guid isPermaLink="true">https://ex.com/g</guid>', None),
    ],
)
def test_rss_links(body: str, expected: str | None) -> None:
    assert rss_item(body) == expected


def test_feedparser_alone_takes_the_last_link() -> None:
    # Why the rule exists: feedparser's own entry.link is the enclosure here.
    entry = '<entry><title>a</title><id>urn:x:1</id><link rel="alternate" href="https://ex.com/story"/>' \
        '<link rel="enclosure">https://ex.com/i.jpg</link></entry>'
    doc = feedparser.parse(ATOM.format(entry=entry, base="").encode())
    assert doc.entries[0].link == "https://ex.com/i.jpg"
    assert article_link(doc.entries[0].links) == "https://ex.com/story"


@pytest.mark.parametrize(
    "links", [None, [], [{}], [{"rel": "alternate"}], [{"href": None}], ["x"], [{"href": 3}]]
)
def test_odd_inputs(links: object) -> None:
    assert article_link(links) is None  # type: ignore[arg-type]
