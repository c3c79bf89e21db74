"""Feed parsing: response bytes in, plain-text entries out. Pure: no network, no files, no clock.

RSS 0.9x/2.0, RSS 1.0 (RDF) and Atom go through feedparser; JSON Feed 1.0/1.1 is parsed here because
feedparser does not read it. Before any XML parser sees the bytes, :func:`~chipwatch.sources.xmlguard.
check_xml_safety` refuses dangerous entity declarations. The steps this module builds on each have a
module: :mod:`~chipwatch.sources.xmlguard` (XML guards), :mod:`~chipwatch.sources.plaintext` (markup to
text), :mod:`~chipwatch.sources.dates` (feed dates, read by :mod:`chipwatch.text.dates` in the source's
zone), :mod:`~chipwatch.sources.links` (resolving links) and :mod:`chipwatch.text.links` (which of an
entry's links is the article).
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

import feedparser
from feedparser.exceptions import CharacterEncodingOverride, NonXMLContentType

from chipwatch.sources.dates import EntryDate, entry_date, first_date
from chipwatch.sources.errors import FeedParseError
from chipwatch.sources.links import absolute_http
from chipwatch.sources.plaintext import detail_text, html_to_text, one_line, tidy, truncate
from chipwatch.sources.xmlguard import check_xml_safety, root_element
from chipwatch.text.dates import read_date
from chipwatch.text.links import article_link

FeedKind = Literal["rss", "atom", "rdf", "json"]


@dataclass(slots=True)
class ParsedEntry:
    """One feed item, as plain text.

    ``published_at`` is aware UTC, or None when the feed gave no date that can be read with confidence;
    then ``published_is_estimated`` is True and the caller substitutes the time it first saw the item.
    ``published_reason`` says how the date was read or why it is unknown, ``published_precision`` how
    precise it is (``month``: ``published_at`` is the first instant of that month); see
    :class:`~chipwatch.sources.dates.EntryDate`.
    """

    guid: str | None
    link: str | None
    title: str
    summary: str
    content: str
    author: str | None
    published_at: datetime | None
    published_is_estimated: bool
    published_reason: str = ""
    published_precision: str | None = None


@dataclass(slots=True)
class ParsedFeed:
    """A parsed feed. ``bozo`` means the document was not well-formed but entries were recovered;
    ``warnings`` says what was wrong or adjusted, one readable line each."""

    kind: FeedKind
    title: str
    link: str | None
    entries: list[ParsedEntry] = field(default_factory=list)
    bozo: bool = False
    warnings: list[str] = field(default_factory=list)


def _looks_like_json(body: bytes, content_type: str) -> bool:
    head = body[:64].lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith((b"{", b"[")) or ("json" in content_type and not head.startswith(b"<"))


def _make_entry(
    *,
    guid: Any,
    link: str | None,
    title: str,
    summary: str,
    content: str,
    author: str | None,
    published: EntryDate,
) -> tuple[ParsedEntry, bool]:
    """Build an entry; the flag is True when a date was present but implausible."""
    guid_text = str(guid).strip() if guid is not None and not isinstance(guid, (dict, list)) else ""
    return (
        ParsedEntry(
            guid=guid_text or None,
            link=link,
            title=title,
            summary=summary,
            content=content or summary,
            author=author or None,
            published_at=published.value,
            published_is_estimated=published.value is None,
            published_reason=published.reason,
            published_precision=published.precision,
        ),
        published.implausible,
    )


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _json_author(obj: Mapping[str, Any]) -> str | None:
    """JSON Feed 1.1 ``authors`` list, falling back to 1.0's single ``author``."""
    names: list[str] = []
    authors = obj.get("authors")
    if isinstance(authors, list):
        names = [_str(a.get("name")).strip() for a in authors if isinstance(a, dict)]
    elif isinstance(obj.get("author"), dict):
        names = [_str(obj["author"].get("name")).strip()]
    names = [n for n in names if n]
    return ", ".join(names) or None


def _parse_json_feed(body: bytes, *, url: str, now: datetime, default_tz: str | None) -> ParsedFeed:
    """JSON Feed 1.0 / 1.1 (https://www.jsonfeed.org/version/1.1/)."""
    try:
        doc = json.loads(body.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise FeedParseError(f"invalid JSON: {exc}") from exc
    if not isinstance(doc, dict):
        raise FeedParseError("JSON document is not an object, so not a JSON Feed")
    version = _str(doc.get("version"))
    items = doc.get("items")
    warnings: list[str] = []
    if not version.startswith(("https://jsonfeed.org/version/", "http://jsonfeed.org/version/")):
        if not isinstance(items, list):
            raise FeedParseError("JSON document is not a JSON Feed (no jsonfeed.org version, no items)")
        warnings.append("JSON Feed without a jsonfeed.org version; read as JSON Feed 1.1")
    if not isinstance(items, list):
        raise FeedParseError("JSON Feed has no items list")
    feed_url = absolute_http(_str(doc.get("feed_url")), url) or url
    base = feed_url
    feed_author = _json_author(doc)
    entries: list[ParsedEntry] = []
    implausible = 0
    for item in items:
        if not isinstance(item, dict):
            warnings.append("skipped a JSON Feed item that is not an object")
            continue
        link = absolute_http(_str(item.get("url")), base) or absolute_http(
            _str(item.get("external_url")), base
        )
        summary = tidy(_str(item.get("summary")))
        if _str(item.get("content_text")):
            content = tidy(_str(item["content_text"]))
        else:
            content = html_to_text(_str(item.get("content_html")))
        dates = [_str(item.get("date_published")), _str(item.get("date_modified"))]
        published = first_date(dates, default_tz=default_tz, now=now)
        entry, bad_date = _make_entry(
            guid=item.get("id"),
            link=link,
            title=one_line(html_to_text(_str(item.get("title")))),
            summary=summary or truncate(content),
            content=content,
            author=_json_author(item) or feed_author,
            published=published,
        )
        implausible += bad_date
        entries.append(entry)
    if implausible:
        warnings.append(f"{implausible} entries had implausible dates (before 1995 or in the future)")
    return ParsedFeed(
        kind="json",
        title=one_line(_str(doc.get("title"))),
        link=absolute_http(_str(doc.get("home_page_url")), base),
        entries=entries,
        bozo=False,
        warnings=warnings,
    )


# feedparser reports these when the content was read correctly but the HTTP metadata was odd;
# they do not make a document "not a feed".
_SOFT_BOZO = (NonXMLContentType, CharacterEncodingOverride)


def _kind(version: str, namespaces: Mapping[str, str]) -> FeedKind:
    if version in ("rss090", "rss10"):
        return "rdf"
    if version.startswith("atom"):
        return "atom"
    if version.startswith("rss") or version == "cdf":
        return "rss"
    uris = set(namespaces.values()) if namespaces else set()
    if "http://www.w3.org/2005/Atom" in uris or "http://purl.org/atom/ns#" in uris:
        return "atom"
    if "http://www.w3.org/1999/02/22-rdf-syntax-ns#" in uris:
        return "rdf"
    return "rss"


def _base_url(url: str, headers: Mapping[str, str]) -> str:
    """The document's base URL: a Content-Location header resolved against the final URL, if http(s)."""
    location = headers.get("content-location", "").strip()
    if location:
        candidate = absolute_http(location, url)
        if candidate:
            return candidate
    return url


def parse_feed(
    body: bytes, *, url: str, headers: Mapping[str, str], now: datetime, default_tz: str | None = None
) -> ParsedFeed:
    """Parse a fetched feed document into plain-text entries.

    ``url`` is the final URL after redirects (base for relative links and ``xml:base``); ``headers``
    are the response headers (any case; ``Content-Type`` supplies the charset, ``Content-Location``
    overrides the base); ``now`` bounds plausible dates (aware; naive is taken as UTC);
    ``default_tz`` is the source's zoneinfo name, which resolves ambiguous zone abbreviations (CST in
    a Chinese feed) and dates written without a zone. An entry's link is its article link
    (:func:`chipwatch.text.links.article_link`), else its permalink guid.

    Returns a :class:`ParsedFeed` (possibly with zero entries for a valid but empty feed). Raises
    :class:`~chipwatch.sources.errors.FeedParseError` when the bytes are not a feed: empty body, an
    HTML page, JSON that is not a JSON Feed, or a document from which no feed structure can be
    recovered; :class:`~chipwatch.sources.errors.UnsafeXMLError` (a FeedParseError) for dangerous
    entity declarations. Never raises anything else for bad input; raises ``ValueError`` when
    ``default_tz`` is not a zoneinfo name (a configuration error, not a feed's).
    """
    if default_tz:
        read_date("", default_tz=default_tz)  # raises ValueError for an unknown zone
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    lower = {k.lower(): v for k, v in headers.items()}
    if not body or not body.strip(b" \t\r\n\x00\xef\xbb\xbf\xfe\xff"):
        raise FeedParseError("empty document")
    if _looks_like_json(body, lower.get("content-type", "").lower()):
        return _parse_json_feed(body, url=url, now=now, default_tz=default_tz)
    base = _base_url(url, lower)
    result = _run_feedparser(body, base=base, headers=lower)
    return _read_feedparser_result(result, body=body, base=base, now=now, default_tz=default_tz)


def _run_feedparser(body: bytes, *, base: str, headers: Mapping[str, str]) -> Mapping[str, Any]:
    """feedparser's result for an XML document, after the XML guard; lower-case ``headers``."""
    response_headers = {"content-location": base}
    if headers.get("content-type"):
        response_headers["content-type"] = headers["content-type"]
    if headers.get("content-language"):
        response_headers["content-language"] = headers["content-language"]
    check_xml_safety(body, response_headers=response_headers)
    try:
        # A BytesIO, never the bytes themselves: given a ``bytes`` object feedparser first tries it as
        # a file name, so a response body such as b"/etc/passwd" would be read from disk.
        # No sanitizing and no resolving of URIs inside HTML: every field is reduced to plain text
        # (sources/plaintext.py) and nothing renders a feed's HTML, while on HTML-heavy feeds the two
        # passes cost more than the rest of parsing. Entry links are resolved either way.
        return feedparser.parse(
            io.BytesIO(body),
            response_headers=response_headers,
            resolve_relative_uris=False,
            sanitize_html=False,
        )
    except Exception as exc:  # feedparser has crashed on hostile input before
        raise FeedParseError(f"feed parser failed: {type(exc).__name__}: {exc}") from exc


def _read_feedparser_result(
    result: Mapping[str, Any], *, body: bytes, base: str, now: datetime, default_tz: str | None
) -> ParsedFeed:
    """A :class:`ParsedFeed` from feedparser's result, or FeedParseError when nothing feed-like came out."""
    version = result.get("version") or ""
    feed = result.get("feed") or {}
    raw_entries = result.get("entries") or []
    exc = result.get("bozo_exception")
    bozo = bool(result.get("bozo"))
    hard_bozo = bozo and not isinstance(exc, _SOFT_BOZO)
    feed_title = one_line(detail_text(feed.get("title"), feed.get("title_detail")))
    feed_link = absolute_http(feed.get("link"), base)
    if not raw_entries:
        _refuse_unless_feed(
            body,
            has_identity=bool(feed_title or feed_link),
            version=version,
            error=exc if hard_bozo else None,
        )

    warnings: list[str] = []
    if bozo and exc is not None:
        warnings.append(f"{type(exc).__name__}: {exc}")
    if version == "cdf":
        warnings.append("CDF channel read as RSS")
    kind = _kind(version, result.get("namespaces") or {})
    # Atom (RFC 4287 4.2.1) says a feed's author applies to entries without one; RSS has no such rule
    # (managingEditor is not the writer of each item).
    feed_author = None
    if kind == "atom":
        feed_author = one_line(detail_text(feed.get("author"), feed.get("author_detail"))) or None
    made = [
        _xml_entry(e, base=base, feed_author=feed_author, now=now, default_tz=default_tz) for e in raw_entries
    ]
    implausible = sum(bad_date for _entry, bad_date in made)
    if implausible:
        warnings.append(f"{implausible} entries had implausible dates (before 1995 or in the future)")
    return ParsedFeed(
        kind=kind,
        title=feed_title,
        link=feed_link,
        entries=[entry for entry, _bad_date in made],
        bozo=hard_bozo,
        warnings=warnings,
    )


def _refuse_unless_feed(
    body: bytes, *, has_identity: bool, version: str, error: BaseException | None
) -> None:
    """Raise FeedParseError for an entry-less document that is not a feed (an HTML page, or one with
    no feed title, link or version); zero entries is normal for a quiet feed, so nothing else is."""
    root = root_element(body[:65536])
    if root == "html" or (root or "").endswith(":html"):
        raise FeedParseError("document is an HTML page, not a feed")
    if not has_identity and (error is not None or not version):
        if error is not None:
            raise FeedParseError(f"not a feed: {type(error).__name__}: {error}")
        shown = f"root element <{root}>" if root else "no root element"
        raise FeedParseError(f"not a feed: {shown}, not RSS, Atom or RDF")


def _entry_link(e: Mapping[str, Any], base: str) -> str | None:
    """The article's absolute http(s) link: chosen by relation among the entry's links, else the guid
    when the feed marks it a permalink (RSS ``isPermaLink``; feedparser keeps it out of ``links``)."""
    link = absolute_http(article_link(dict.get(e, "links")), base)
    if link is None and dict.get(e, "guidislink"):
        link = absolute_http(dict.get(e, "id"), base)
    return link


def _xml_entry(
    e: Mapping[str, Any], *, base: str, feed_author: str | None, now: datetime, default_tz: str | None
) -> tuple[ParsedEntry, bool]:
    """One feedparser entry as a :class:`ParsedEntry`; the flag is True for an implausible date."""
    content_parts = [detail_text(c.get("value"), c) for c in e.get("content") or [] if c.get("value")]
    content = "\n\n".join(p for p in content_parts if p)
    author = one_line(html_to_text(e["author"])) if e.get("author") else None
    return _make_entry(
        guid=e.get("id"),
        link=_entry_link(e, base),
        title=one_line(detail_text(e.get("title"), e.get("title_detail"))),
        summary=detail_text(e.get("summary"), e.get("summary_detail")) or truncate(content),
        content=content,
        author=author or feed_author,
        published=entry_date(e, default_tz=default_tz, now=now),
    )


__all__ = ["FeedKind", "ParsedEntry", "ParsedFeed", "parse_feed"]
