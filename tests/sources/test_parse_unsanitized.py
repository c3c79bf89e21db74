"""feedparser runs without its HTML sanitizer and URI resolver: nothing renders an item's HTML (every
text field is plain text), so the same text must come out as with them on, over the whole corpus."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import feedparser
import pytest

from chipwatch.sources import parse as parse_module
from chipwatch.sources.errors import FeedParseError
from chipwatch.sources.parse import parse_feed
from chipwatch.sources.plaintext import html_to_text
from tests.fixtures.corpus import corpus_dir, requires_corpus

NOW = datetime(2026, 11, 30, tzinfo=UTC)
URL = "http://example.com/feed/"
HEADERS = {"Content-Type": "application/xml"}

# Inputs built to attack a sanitizer, where the text differs and the new text is the better one: the
# sanitizer keeps the code of a <script> whose end tag is split over lines, and a document <title>,
# as text; html.parser drops both. The other two keep a markup fragment that is not text either way
# ("<>" in line noise, "]]>" after a nested CDATA section).
_EXPECTED_DIFFERENT = {
    "feedparser-tests/encoding/bozo_linenoise.xml",
    "feedparser-tests/wellformed/sanitize/entry_content_crazy.xml",
    "feedparser-tests/wellformed/sanitize/entry_summary_crazy.xml",
    "feedparser-tests/wellformed/sanitize/entry_title_crazy.xml",
    "feedparser-tests/wellformed/sanitize/feed_title_crazy.xml",
    "feedparser-tests/wellformed/sanitize/item_content_encoded_crazy.xml",
    "feedparser-tests/wellformed/sanitize/item_content_encoded_script_nested_cdata.xml",
    "feedparser-tests/wellformed/sanitize/item_description_crazy.xml",
    "feedparser-tests/wellformed/sanitize/item_fullitem_crazy.xml",
}


def _sanitized(body: bytes) -> parse_module.ParsedFeed | str:
    """What parse_feed returned when feedparser sanitized and resolved (the same reader after it)."""
    headers = {"content-location": URL, "content-type": HEADERS["Content-Type"]}
    try:
        parse_module.check_xml_safety(body, response_headers=headers)
        result = feedparser.parse(
            io.BytesIO(body), response_headers=headers, sanitize_html=True, resolve_relative_uris=True
        )
        return parse_module._read_feedparser_result(result, body=body, base=URL, now=NOW, default_tz=None)
    except FeedParseError as exc:
        return f"refused: {exc}"


def _current(body: bytes) -> parse_module.ParsedFeed | str:
    try:
        return parse_feed(body, url=URL, headers=HEADERS, now=NOW)
    except FeedParseError as exc:
        return f"refused: {exc}"


def _xml_files() -> list[Path]:
    return sorted(p for p in corpus_dir().rglob("*") if p.suffix in {".xml", ".rss", ".atom", ".rdf"})


@requires_corpus
def test_every_corpus_feed_gives_the_same_text_without_the_sanitizer():
    files = _xml_files()
    assert len(files) > 2000  # the whole corpus, not a subset that happened to be found
    different = set()
    for path in files:
        body = path.read_bytes()
        if _sanitized(body) != _current(body):
            different.add(path.relative_to(corpus_dir()).as_posix())
    assert different == _EXPECTED_DIFFERENT


@requires_corpus
def test_real_ai_chip_feeds_are_unchanged_entry_by_entry():
    feeds = sorted((corpus_dir() / "feeds-ai-chips").glob("*.xml"))
    assert feeds
    entries = 0
    for path in feeds:
        before, after = _sanitized(path.read_bytes()), _current(path.read_bytes())
        assert not isinstance(after, str), path.name
        assert [(e.title, e.summary, e.content, e.link) for e in after.entries] == [
            (e.title, e.summary, e.content, e.link) for e in before.entries
        ]
        entries += len(after.entries)
    assert entries > 50


@requires_corpus
@pytest.mark.parametrize(
    "name", ["entry_content_crazy.xml", "item_description_crazy.xml", "feed_title_crazy.xml"]
)
def test_script_code_is_not_text(name):
    feed = _current((corpus_dir() / "feedparser-tests" / "wellformed" / "sanitize" / name).read_bytes())
    text = feed.title + " ".join(e.title + e.content for e in feed.entries)
    assert "Did The Javascript Execute?" in text
    assert "executeMe" not in text


@pytest.mark.parametrize(
    ("fragment", "text"),
    [
        # An unclosed quote: the tag ends at its ">", and the text after it is kept.
        ('<cite>Ian</cite>: <q><a href="http://x.test/?a=1&amp;b=2?>\nfat cats</a></q>', "Ian:\nfat cats"),
        ("sa<!-- -- nonwhitespace >fe<script>alert(1);</script>", "safe"),
        ("safe<!--", "safe"),
        ("<p>one</p><p>two &amp; three</p>", "one\ntwo & three"),
    ],
)
def test_broken_markup_is_dropped_not_kept_as_text(fragment, text):
    assert html_to_text(fragment) == text
