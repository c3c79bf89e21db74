"""Feed parsing: response bytes in, plain-text entries out. Pure: no network, no files, no clock.

RSS 0.9x/2.0, RSS 1.0 (RDF) and Atom go through feedparser; JSON Feed 1.0/1.1 is parsed here because
feedparser does not read it. Before any XML parser sees the bytes, :func:`check_xml_safety` refuses
documents whose DOCTYPE declares entities that could expand without bound ("billion laughs",
quadratic blow-up) or read local files / URLs (XXE).

Text fields are plain text (tags removed, entities decoded, whitespace tidied) because they feed
mention and keyword matching; nothing here is meant to be rendered as HTML.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import time
import unicodedata
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from html import unescape
from html.parser import HTMLParser
from typing import Any, Literal
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import feedparser
import feedparser.encodings
from feedparser import datetimes as _fp_dates
from feedparser.exceptions import CharacterEncodingOverride, NonXMLContentType

FeedKind = Literal["rss", "atom", "rdf", "json"]

# Publication dates outside [EARLIEST_PLAUSIBLE, now + FUTURE_TOLERANCE] are treated as missing:
# feeds put 1970-01-01 (a zero timestamp) or a far-future date on items, which would otherwise sort
# an item to the top or bottom forever. Two days of future slack absorbs wrong time zones.
EARLIEST_PLAUSIBLE = datetime(1995, 1, 1, tzinfo=UTC)
FUTURE_TOLERANCE = timedelta(days=2)

# Limits for entity declarations that are allowed through (see check_xml_safety).
MAX_ENTITY_DECLARATIONS = 64
MAX_ENTITY_EXPANSION_CHARS = 1_000_000

# Query parameters that only track the click and never select content (dropped by normalise_link).
TRACKING_PARAMS = frozenset(
    {
        "fbclid",
        "gclid",
        "dclid",
        "gbraid",
        "wbraid",
        "msclkid",
        "yclid",
        "twclid",
        "igshid",
        "mc_cid",
        "mc_eid",
        "_hsenc",
        "_hsmi",
        "mkt_tok",
        "oly_anon_id",
        "oly_enc_id",
        "vero_id",
        "rb_clickid",
    }
)
TRACKING_PREFIXES = ("utm_",)


class FeedParseError(ValueError):
    """The bytes are not a usable feed (empty, HTML, not XML/JSON, or unsafe XML); message says why."""


class UnsafeXMLError(FeedParseError):
    """The XML declares entities that could expand without bound or reach outside the document."""


@dataclass(slots=True)
class ParsedEntry:
    """One feed item, as plain text.

    ``published_at`` is aware UTC, or None when the feed gave no usable date; then
    ``published_is_estimated`` is True and the caller substitutes the time it first saw the item.
    """

    guid: str | None
    link: str | None
    title: str
    summary: str
    content: str
    author: str | None
    published_at: datetime | None
    published_is_estimated: bool


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


# --------------------------------------------------------------------------------------------------
# XML safety


def _sniff_text(data: bytes) -> str:
    """A text view of raw ``data`` in which ASCII markup characters sit where an XML parser sees them.

    A BOM or the null-byte pattern of ``<`` (XML 1.0 appendix F) selects UTF-8/16/32 or EBCDIC;
    other data with NUL bytes (UTF-16/32 without a BOM) has them removed; everything else is read as
    Latin-1, which maps every byte and keeps ASCII where it is.
    """
    head = data[:4]
    for bom, codec in (
        (b"\xef\xbb\xbf", "utf-8"),
        (b"\xff\xfe\x00\x00", "utf-32-le"),
        (b"\x00\x00\xfe\xff", "utf-32-be"),
        (b"\xff\xfe", "utf-16-le"),
        (b"\xfe\xff", "utf-16-be"),
    ):
        if head.startswith(bom):
            return data[len(bom) :].decode(codec, errors="replace")
    for pattern, codec, unit in (
        (b"\x00\x00\x00<", "utf-32-be", 4),
        (b"<\x00\x00\x00", "utf-32-le", 4),
        (b"\x00<\x00", "utf-16-be", 2),
        (b"<\x00", "utf-16-le", 2),
        (b"\x4c\x6f\xa7\x94", "cp037", 1),  # "<?xm" in EBCDIC
    ):
        if head.startswith(pattern):
            usable = len(data) - len(data) % unit
            return data[:usable].decode(codec, errors="replace")
    if b"\x00" in data[:1024]:
        return data.replace(b"\x00", b"").decode("latin-1")
    return data.decode("latin-1")


def _parser_view(body: bytes, response_headers: Mapping[str, str]) -> str | None:
    """The document as feedparser will decode it (same function, same headers), or None.

    Checking this view as well as the raw one closes the gap left by encodings in which markup is
    not ASCII bytes: in UTF-7, for instance, ``<!ENTITY`` can be written ``+ADwAIQ-ENTITY``.
    """
    try:
        converted = feedparser.encodings.convert_to_utf8(dict(response_headers), body, {})
    except Exception:  # any failure here means feedparser cannot decode it either
        return None
    return converted.decode("utf-8", errors="replace")


@dataclass(slots=True)
class _Prolog:
    root: str | None = None  # the root element's name, lower-cased, if reached


_NAME = re.compile(r"[^\s/>]+")


def _scan_prolog(text: str) -> _Prolog:
    """Find the root element's name the way an XML parser would: the XML declaration, comments,
    processing instructions, the DOCTYPE and stray text before it are skipped."""
    found = _Prolog()
    i, n = 0, len(text)
    while i < n:
        lt = text.find("<", i)
        if lt < 0:
            break
        if text.startswith("<?", lt):
            close = text.find("?>", lt + 2)
            i = close + 2 if close >= 0 else n
        elif text.startswith("<!--", lt):
            close = text.find("-->", lt + 4)
            i = close + 3 if close >= 0 else n
        elif text[lt : lt + 9].upper() == "<!DOCTYPE":
            i = lt + 9
        elif lt + 1 < n and (text[lt + 1].isalpha() or text[lt + 1] in "_:"):
            name = _NAME.match(text, lt + 1)
            found.root = name.group(0).lower() if name else None
            break
        else:
            i = lt + 1
    return found


# Comments and CDATA sections are skipped, so a post *about* XXE is not mistaken for one.
_DECLARATION_SCAN = re.compile(r"<!--.*?-->|<!\[CDATA\[.*?\]\]>|(<!ENTITY)", re.IGNORECASE | re.DOTALL)
_ENTITY_DECL = re.compile(
    r"""<!ENTITY\s+(?P<pe>%\s+)?(?P<name>[^\s%"'>]+)\s+
        (?:(?P<external>SYSTEM|PUBLIC)\b|"(?P<dq>[^"]*)"|'(?P<sq>[^']*)')""",
    re.VERBOSE | re.IGNORECASE,
)
_CHAR_REF = re.compile(r"&#(?:[0-9]+|x[0-9a-fA-F]+);")


def _check_declarations(text: str) -> None:
    if not re.search(r"<!ENTITY", text, re.IGNORECASE):
        return  # the common case: one fast search and done
    positions = [m.start(1) for m in _DECLARATION_SCAN.finditer(text) if m.group(1)]
    if len(positions) > MAX_ENTITY_DECLARATIONS:
        raise UnsafeXMLError(
            f"refusing XML that declares {len(positions)} entities (limit {MAX_ENTITY_DECLARATIONS})"
        )
    values: dict[str, str] = {}
    for position in positions:
        m = _ENTITY_DECL.match(text, position)
        if m is None:
            raise UnsafeXMLError("refusing XML with an entity declaration that cannot be checked")
        name = m.group("name")
        if m.group("pe"):
            raise UnsafeXMLError(f"refusing XML that declares parameter entity %{name}")
        if m.group("external"):
            raise UnsafeXMLError(
                f"refusing XML that declares external entity &{name}; ({m.group('external').upper()}): "
                "external entities could read local files or URLs"
            )
        value = m.group("dq") if m.group("dq") is not None else (m.group("sq") or "")
        plain = _CHAR_REF.sub("", value)
        if "&" in plain or "%" in plain or "<" in plain:
            raise UnsafeXMLError(
                f"refusing XML whose entity &{name}; refers to other entities or markup "
                "(nested entity expansion)"
            )
        values[name] = value
    # Quadratic blow-up: one modest entity referenced very many times. Count the references.
    expansion = sum(len(v) * text.count(f"&{k};") for k, v in values.items())
    if expansion > MAX_ENTITY_EXPANSION_CHARS:
        raise UnsafeXMLError(
            f"refusing XML whose entities would expand to {expansion} characters "
            f"(limit {MAX_ENTITY_EXPANSION_CHARS})"
        )


def check_xml_safety(body: bytes, *, response_headers: Mapping[str, str] | None = None) -> None:
    """Refuse XML that declares dangerous entities; return None when the document is safe.

    The document is checked twice: as raw bytes (any ASCII-compatible encoding, UTF-16/32, EBCDIC)
    and as feedparser will decode it given ``response_headers`` (lower-case keys, e.g.
    ``content-type``), so no encoding trick hides a declaration from the check. Declarations are
    looked for anywhere outside comments and CDATA, not only in the DOCTYPE, so padding cannot push
    them out of view.

    Allowed: no declarations, or at most ``MAX_ENTITY_DECLARATIONS`` internal general entities whose
    values are plain text (character references allowed) and whose total expansion in this document
    stays under ``MAX_ENTITY_EXPANSION_CHARS``. A DOCTYPE that only names an external DTD is fine
    (it is never fetched). Refused, with :class:`UnsafeXMLError`: external entities (``SYSTEM`` /
    ``PUBLIC``: XXE), parameter entities, entity values that reference other entities or contain
    markup (the recursion behind "billion laughs"), and anything over the limits.
    """
    _check_declarations(_sniff_text(body))
    view = _parser_view(body, response_headers or {})
    if view is not None:
        _check_declarations(view)


# --------------------------------------------------------------------------------------------------
# Text


class _TextExtractor(HTMLParser):
    """Collects the text of an HTML fragment: block elements become line breaks, scripts vanish."""

    BLOCK = frozenset(
        "address article aside blockquote br dd div dl dt figcaption figure footer h1 h2 h3 h4 h5 h6 "
        "header hr li main nav ol p pre section table tbody td tfoot th thead tr ul".split()
    )
    SKIP = frozenset({"script", "style", "template", "head", "title"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self._skip_depth += 1
        elif tag in self.BLOCK:
            self.parts.append("\n")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP:
            self._skip_depth = max(0, self._skip_depth - 1)
        elif tag in self.BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skip_depth:
            self.parts.append(data)


_INLINE_SPACE = re.compile(r"[^\S\n]+")


def _tidy(text: str) -> str:
    """Collapse runs of whitespace (including no-break spaces) within lines, strip each line and
    drop empty ones: one line per paragraph or block."""
    lines = (_INLINE_SPACE.sub(" ", line).strip() for line in text.replace("\r", "\n").split("\n"))
    return "\n".join(line for line in lines if line)


def html_to_text(fragment: str) -> str:
    """Plain text of an HTML fragment: tags removed, entities decoded, scripts/styles dropped.

    Block elements become line breaks (empty lines are dropped); other whitespace, including
    no-break spaces, is collapsed to single spaces. Never raises on bad markup.
    """
    if "<" not in fragment and "&" not in fragment:
        return _tidy(fragment)
    parser = _TextExtractor()
    try:
        parser.feed(fragment)
        parser.close()
    except Exception:  # html.parser is lenient, but text must come out regardless
        return _tidy(unescape(re.sub(r"<[^>]*>", " ", fragment)))
    return _tidy("".join(parser.parts))


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _detail_text(value: str | None, detail: Mapping[str, Any] | None) -> str:
    """Plain text of a feedparser text construct, honouring its declared type."""
    if not value:
        return ""
    kind = (detail or {}).get("type", "text/html") or "text/html"
    if "html" in kind or "xml" in kind:
        return html_to_text(value)
    return _tidy(value)


# --------------------------------------------------------------------------------------------------
# Dates


def _struct_to_datetime(value: time.struct_time | tuple[int, ...] | None) -> datetime | None:
    """A feedparser 9-tuple (always UTC) as an aware datetime, or None if it is not a valid date."""
    if not value:
        return None
    try:
        return datetime(*tuple(value)[:6], tzinfo=UTC)
    except (TypeError, ValueError, OverflowError):
        return None


# feedparser's own dispatcher tries its lenient ISO 8601 handler before the Greek, Hungarian and Korean
# ones, which then never run (e.g. "2004-július-13T9:15-05:00" comes out as 2004-11-01). The same
# handlers are tried here with the lenient one last.
_DATE_HANDLERS = (
    _fp_dates._parse_date_w3dtf,
    _fp_dates._parse_date_rfc822,
    _fp_dates._parse_date_asctime,
    _fp_dates._parse_date_perforce,
    _fp_dates._parse_date_greek,
    _fp_dates._parse_date_hungarian,
    _fp_dates._parse_date_nate,
    _fp_dates._parse_date_onblog,
    _fp_dates._parse_date_iso8601,
)
_WEEKDAY_COMMA = re.compile(r"^([A-Za-z]{2,9}),(?=\S)")  # "Fri,24 Nov 2023"
_ORDINAL = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)\b", re.IGNORECASE)  # "16th Nov"
_TWELVE_HOUR = re.compile(r"\b(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([ap])\.?m\.?(?![a-z])", re.IGNORECASE)
_OFFSET_THEN_Z = re.compile(r"([+-]\d{2}:?\d{2})Z$")  # "2020-11-08T16:20:00-05:00Z"
_IANA_ZONE = re.compile(r"\s([A-Za-z]+(?:/[A-Za-z0-9_+-]+)+)$")  # "... America/Los_Angeles"
_EPOCH = re.compile(r"^\d{10}$")  # Unix seconds, 2001-09-09 .. 2286


def _twelve_to_24(m: re.Match[str]) -> str:
    hour = int(m.group(1)) % 12 + (12 if m.group(4).lower() == "p" else 0)
    return f"{hour:02d}:{m.group(2)}:{m.group(3) or '00'}"


def parse_date_string(value: str) -> datetime | None:
    """Parse a feed date string into an aware UTC datetime, or None when it cannot be read.

    Uses feedparser's date handlers (RFC 822/1123 with named and numeric zones, W3C-DTF / ISO 8601,
    asctime, Perforce, Greek, Hungarian, Korean) after small repairs for forms seen in real feeds:
    12-hour clocks ("1:55 PM"), ordinal days ("16th"), a missing space after the weekday comma, an
    IANA zone name ("America/Los_Angeles", applied with its DST rules), an offset followed by a
    stray "Z", and bare 10-digit Unix timestamps. Without a zone, UTC is assumed (as feedparser
    does). No plausibility check here; see :func:`plausible_date`.
    """
    if not isinstance(value, str):
        return None
    text = " ".join(value.split())
    if not text:
        return None
    if _EPOCH.match(text):
        return datetime.fromtimestamp(int(text), tz=UTC)
    text = _WEEKDAY_COMMA.sub(r"\1, ", text)
    text = _ORDINAL.sub(r"\1", text)
    text = _TWELVE_HOUR.sub(_twelve_to_24, text)
    text = _OFFSET_THEN_Z.sub(r"\1", text)
    zone: ZoneInfo | None = None
    zone_match = _IANA_ZONE.search(text)
    if zone_match:
        try:
            zone = ZoneInfo(zone_match.group(1))
            text = text[: zone_match.start()].strip()
        except (ZoneInfoNotFoundError, ValueError, OSError):
            zone = None
    # feedparser's RFC 822 handler wants a zone token; a date that has none (or had an IANA name,
    # removed above) is retried with GMT, which is also what "no zone" means in feedparser.
    for candidate in (text, f"{text} GMT"):
        for handler in _DATE_HANDLERS:
            try:
                parsed = _struct_to_datetime(handler(candidate))
            except Exception:  # feedparser's handlers raise assorted errors on odd input
                continue
            if parsed is None:
                continue
            if zone is not None:
                # The handler read the wall-clock time as UTC; re-read it in the named zone.
                parsed = parsed.replace(tzinfo=None).replace(tzinfo=zone).astimezone(UTC)
            return parsed
    return None


def plausible_date(value: datetime | None, *, now: datetime) -> datetime | None:
    """``value`` if it lies in [1995-01-01, now + 2 days], else None (the caller estimates instead)."""
    if value is None:
        return None
    if value < EARLIEST_PLAUSIBLE or value > now + FUTURE_TOLERANCE:
        return None
    return value


# --------------------------------------------------------------------------------------------------
# Links and hashes


def normalise_link(url: str) -> str:
    """A canonical form of ``url`` for de-duplication.

    Lower-cases scheme and host, drops the default port (80/443), the fragment, ``utm_*`` and other
    click-tracking parameters (``TRACKING_PARAMS``), sorts the remaining query parameters, makes an
    empty path ``/`` and removes a trailing slash from any other path. Strings that are not absolute
    URLs come back stripped but otherwise unchanged.
    """
    text = url.strip()
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return text
    if not parts.scheme or not parts.netloc:
        return text
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    if port is not None and not ((scheme == "http" and port == 80) or (scheme == "https" and port == 443)):
        host = f"{host}:{port}"
    if parts.username is not None:
        userinfo = parts.username + (f":{parts.password}" if parts.password is not None else "")
        host = f"{userinfo}@{host}"
    path = parts.path or "/"
    if len(path) > 1:
        path = path.rstrip("/") or "/"
    query = [
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if k.lower() not in TRACKING_PARAMS and not k.lower().startswith(TRACKING_PREFIXES)
    ]
    return urlunsplit((scheme, host, path, urlencode(sorted(query)), ""))


def content_hash(title: str, body: str) -> str:
    """SHA-256 hex digest identifying an item's text, for de-duplication when guid and link differ.

    Both parts are NFKC-normalised, whitespace-collapsed and case-folded first, so re-wrapped or
    re-cased copies of the same text hash the same.
    """

    def norm(text: str) -> str:
        return " ".join(unicodedata.normalize("NFKC", text or "").split()).casefold()

    return hashlib.sha256(f"{norm(title)}\n{norm(body)}".encode()).hexdigest()


def _absolute_http(link: str | None, base: str) -> str | None:
    """``link`` resolved against ``base`` if the result is an http(s) URL, else None."""
    if not link or not isinstance(link, str):
        return None
    try:
        resolved = urljoin(base, link.strip())
        scheme = urlsplit(resolved).scheme.lower()
    except ValueError:
        return None
    return resolved if scheme in ("http", "https") else None


# --------------------------------------------------------------------------------------------------
# Feeds


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
    published: datetime | None,
    now: datetime,
) -> tuple[ParsedEntry, bool]:
    """Build an entry; the flag is True when a date was present but implausible."""
    plausible = plausible_date(published, now=now)
    guid_text = str(guid).strip() if guid is not None and not isinstance(guid, (dict, list)) else ""
    return (
        ParsedEntry(
            guid=guid_text or None,
            link=link,
            title=title,
            summary=summary,
            content=content or summary,
            author=author or None,
            published_at=plausible,
            published_is_estimated=plausible is None,
        ),
        published is not None and plausible is None,
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


def _parse_json_feed(body: bytes, *, url: str, now: datetime) -> ParsedFeed:
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
    feed_url = _absolute_http(_str(doc.get("feed_url")), url) or url
    base = feed_url
    feed_author = _json_author(doc)
    entries: list[ParsedEntry] = []
    implausible = 0
    for item in items:
        if not isinstance(item, dict):
            warnings.append("skipped a JSON Feed item that is not an object")
            continue
        link = _absolute_http(_str(item.get("url")), base) or _absolute_http(
            _str(item.get("external_url")), base
        )
        summary = _tidy(_str(item.get("summary")))
        if _str(item.get("content_text")):
            content = _tidy(_str(item["content_text"]))
        else:
            content = html_to_text(_str(item.get("content_html")))
        published = parse_date_string(_str(item.get("date_published"))) or parse_date_string(
            _str(item.get("date_modified"))
        )
        entry, bad_date = _make_entry(
            guid=item.get("id"),
            link=link,
            title=_one_line(html_to_text(_str(item.get("title")))),
            summary=summary or _truncate(content),
            content=content,
            author=_json_author(item) or feed_author,
            published=published,
            now=now,
        )
        implausible += bad_date
        entries.append(entry)
    if implausible:
        warnings.append(f"{implausible} entries had implausible dates (before 1995 or in the future)")
    return ParsedFeed(
        kind="json",
        title=_one_line(_str(doc.get("title"))),
        link=_absolute_http(_str(doc.get("home_page_url")), base),
        entries=entries,
        bozo=False,
        warnings=warnings,
    )


def _truncate(text: str, limit: int = 500) -> str:
    """A summary made from content: the first ``limit`` characters, cut at a word boundary."""
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut + "…"


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


def _entry_date(entry: Mapping[str, Any]) -> datetime | None:
    """Publication date of a feedparser entry: published, else updated, else created.

    The raw string is re-read with :func:`parse_date_string` (which repairs forms feedparser's
    dispatcher gets wrong); feedparser's own parsed tuple is the fallback.
    """
    for key in ("published", "updated", "created"):
        # dict.get, not entry.get: FeedParserDict maps missing keys to others with a warning.
        raw = dict.get(entry, key)
        parsed = parse_date_string(raw) if isinstance(raw, str) else None
        if parsed is None:
            parsed = _struct_to_datetime(dict.get(entry, f"{key}_parsed"))
        if parsed is not None:
            return parsed
    return None


def _base_url(url: str, headers: Mapping[str, str]) -> str:
    """The document's base URL: a Content-Location header resolved against the final URL, if http(s)."""
    location = headers.get("content-location", "").strip()
    if location:
        candidate = _absolute_http(location, url)
        if candidate:
            return candidate
    return url


def parse_feed(body: bytes, *, url: str, headers: Mapping[str, str], now: datetime) -> ParsedFeed:
    """Parse a fetched feed document into plain-text entries.

    ``url`` is the final URL after redirects (base for relative links and ``xml:base``); ``headers``
    are the response headers (any case; ``Content-Type`` supplies the charset, ``Content-Location``
    overrides the base); ``now`` bounds plausible dates (aware; naive is taken as UTC).

    Returns a :class:`ParsedFeed` (possibly with zero entries for a valid but empty feed). Raises
    :class:`FeedParseError` when the bytes are not a feed: empty body, an HTML page, JSON that is not a
    JSON Feed, or a document from which no feed structure can be recovered; :class:`UnsafeXMLError`
    (a FeedParseError) for dangerous entity declarations. Never raises anything else for bad input.
    """
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    lower = {k.lower(): v for k, v in headers.items()}
    content_type = lower.get("content-type", "")
    if not body or not body.strip(b" \t\r\n\x00\xef\xbb\xbf\xfe\xff"):
        raise FeedParseError("empty document")
    if _looks_like_json(body, content_type.lower()):
        return _parse_json_feed(body, url=url, now=now)

    base = _base_url(url, lower)
    response_headers = {"content-location": base}
    if content_type:
        response_headers["content-type"] = content_type
    if lower.get("content-language"):
        response_headers["content-language"] = lower["content-language"]
    check_xml_safety(body, response_headers=response_headers)
    try:
        # A BytesIO, never the bytes themselves: given a ``bytes`` object feedparser first tries it as
        # a file name, so a response body such as b"/etc/passwd" would be read from disk.
        result = feedparser.parse(
            io.BytesIO(body),
            response_headers=response_headers,
            resolve_relative_uris=True,
            sanitize_html=True,
        )
    except Exception as exc:  # feedparser has crashed on hostile input before
        raise FeedParseError(f"feed parser failed: {type(exc).__name__}: {exc}") from exc

    version = result.get("version") or ""
    feed = result.get("feed") or {}
    raw_entries = result.get("entries") or []
    exc = result.get("bozo_exception")
    bozo = bool(result.get("bozo"))
    hard_bozo = bozo and not isinstance(exc, _SOFT_BOZO)
    feed_title = _one_line(_detail_text(feed.get("title"), feed.get("title_detail")))

    feed_link = _absolute_http(feed.get("link"), base)
    if not raw_entries:
        # Zero entries is normal for a quiet feed, so refuse only when nothing feed-like came out.
        root = _scan_prolog(_sniff_text(body[:65536])).root
        if root == "html" or (root or "").endswith(":html"):
            raise FeedParseError("document is an HTML page, not a feed")
        if not feed_title and not feed_link and (hard_bozo or not version):
            if hard_bozo:
                raise FeedParseError(f"not a feed: {type(exc).__name__}: {exc}")
            shown = f"root element <{root}>" if root else "no root element"
            raise FeedParseError(f"not a feed: {shown}, not RSS, Atom or RDF")

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
        feed_author = _one_line(_detail_text(feed.get("author"), feed.get("author_detail"))) or None
    entries: list[ParsedEntry] = []
    implausible = 0
    for e in raw_entries:
        title = _one_line(_detail_text(e.get("title"), e.get("title_detail")))
        summary = _detail_text(e.get("summary"), e.get("summary_detail"))
        content_parts = [_detail_text(c.get("value"), c) for c in e.get("content") or [] if c.get("value")]
        content = "\n\n".join(p for p in content_parts if p)
        published = _entry_date(e)
        author = _one_line(html_to_text(e["author"])) if e.get("author") else None
        entry, bad_date = _make_entry(
            guid=e.get("id"),
            link=_absolute_http(e.get("link"), base),
            title=title,
            summary=summary or _truncate(content),
            content=content,
            author=author or feed_author,
            published=published,
            now=now,
        )
        implausible += bad_date
        entries.append(entry)
    if implausible:
        warnings.append(f"{implausible} entries had implausible dates (before 1995 or in the future)")

    return ParsedFeed(
        kind=kind,
        title=feed_title,
        link=feed_link,
        entries=entries,
        bozo=hard_bozo,
        warnings=warnings,
    )


# --------------------------------------------------------------------------------------------------
# OPML


def parse_opml(body: bytes) -> list[dict[str, str]]:
    """Feed subscriptions in an OPML document: ``[{"url": ..., "name": ...}]`` in document order.

    Nested outlines (folders) are flattened; outlines without an http(s) ``xmlUrl`` are skipped;
    duplicate URLs are kept once. ``name`` is the outline's ``title``, else ``text``, else the URL.
    Raises :class:`FeedParseError` for malformed or unsafe XML, or a document that is not OPML.
    """
    if not body or not body.strip():
        raise FeedParseError("empty OPML document")
    check_xml_safety(body)
    try:
        root = ET.fromstring(body)
    except ET.ParseError as exc:
        raise FeedParseError(f"invalid OPML: {exc}") from exc
    if root.tag.lower() != "opml":
        raise FeedParseError(f"not an OPML document (root element <{root.tag}>)")
    found: list[dict[str, str]] = []
    seen: set[str] = set()
    for outline in root.iter("outline"):
        attrs = {k.lower(): v for k, v in outline.attrib.items()}
        url = (attrs.get("xmlurl") or "").strip()
        if urlsplit(url).scheme.lower() not in ("http", "https") or url in seen:
            continue
        seen.add(url)
        name = (attrs.get("title") or attrs.get("text") or "").strip() or url
        found.append({"url": url, "name": name})
    return found


def build_opml(sources: Iterable[Any], *, title: str = "chipwatch sources") -> bytes:
    """An OPML 2.0 document (UTF-8 bytes) listing ``sources``.

    Each source is a mapping or an object with ``url`` and ``name`` (``name`` may be missing/None);
    optional ``site_url``/``html_url`` becomes ``htmlUrl``. Output is deterministic (no timestamp).
    """
    root = ET.Element("opml", version="2.0")
    head = ET.SubElement(root, "head")
    ET.SubElement(head, "title").text = title
    body = ET.SubElement(root, "body")
    for source in sources:

        def get(key: str, source: Any = source) -> Any:
            if isinstance(source, Mapping):
                return source.get(key)
            return getattr(source, key, None)

        url = get("url")
        if not url:
            continue
        name = get("name") or url
        attrs = {"type": "rss", "text": str(name), "title": str(name), "xmlUrl": str(url)}
        html_url = get("site_url") or get("html_url")
        if html_url:
            attrs["htmlUrl"] = str(html_url)
        ET.SubElement(body, "outline", attrs)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


__all__ = [
    "FeedKind",
    "FeedParseError",
    "ParsedEntry",
    "ParsedFeed",
    "UnsafeXMLError",
    "build_opml",
    "check_xml_safety",
    "content_hash",
    "html_to_text",
    "normalise_link",
    "parse_date_string",
    "parse_feed",
    "parse_opml",
    "plausible_date",
]
