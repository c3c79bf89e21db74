"""XML guards: refuse dangerous entity declarations before any XML parser sees the bytes, and find a
document's root element without parsing it. Pure: no network, no files, no clock.

Documents whose DOCTYPE declares entities that could expand without bound ("billion laughs",
quadratic blow-up) or read local files / URLs (XXE) are refused by :func:`check_xml_safety`, which
both the feed parser and the OPML reader call first.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import feedparser.encodings

from chipwatch.sources.errors import UnsafeXMLError

# Limits for entity declarations that are allowed through (see check_xml_safety).
MAX_ENTITY_DECLARATIONS = 64
MAX_ENTITY_EXPANSION_CHARS = 1_000_000


def sniff_text(data: bytes) -> str:
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
    _check_declarations(sniff_text(body))
    view = _parser_view(body, response_headers or {})
    if view is not None:
        _check_declarations(view)


def root_element(data: bytes) -> str | None:
    """The lower-cased name of the root element of raw ``data`` (any encoding :func:`sniff_text`
    reads), or None when no element is reached."""
    return _scan_prolog(sniff_text(data)).root


__all__ = [
    "MAX_ENTITY_DECLARATIONS",
    "MAX_ENTITY_EXPANSION_CHARS",
    "check_xml_safety",
    "root_element",
    "sniff_text",
]
