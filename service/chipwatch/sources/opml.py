"""OPML subscription lists: read the feeds of one, write one of the watched feeds. Pure."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from typing import Any

from chipwatch.sources.errors import FeedParseError
from chipwatch.sources.xmlguard import check_xml_safety

MAX_OPML_FEEDS = 1000
"""Feeds one document may add; each becomes a source checked on a schedule."""
MAX_OPML_OUTLINES = 10_000
"""Outline elements one document may hold, feeds or folders (a body of empty outlines costs as much to
walk as one of feeds)."""


def parse_opml(body: bytes) -> list[dict[str, str]]:
    """Feed subscriptions in an OPML document: ``[{"url": ..., "name": ...}]`` in document order.

    Nested outlines (folders) are flattened; outlines without an ``xmlUrl`` (folders) are skipped;
    duplicate URLs are kept once. A URL of another scheme than http(s) is kept, so that the import
    names it among the feeds it refused rather than dropping it unsaid. ``name`` is the outline's
    ``title``, else ``text``, else the URL.
    Raises :class:`FeedParseError` for malformed or unsafe XML, a document that is not OPML, or one with
    more than :data:`MAX_OPML_FEEDS` feeds or :data:`MAX_OPML_OUTLINES` outlines (nothing is added then).
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
    for count, outline in enumerate(root.iter("outline"), start=1):
        if count > MAX_OPML_OUTLINES:
            raise FeedParseError(f"more than {MAX_OPML_OUTLINES} outlines in one OPML document")
        attrs = {k.lower(): v for k, v in outline.attrib.items()}
        url = (attrs.get("xmlurl") or "").strip()
        if not url or url in seen:
            continue
        seen.add(url)
        if len(seen) > MAX_OPML_FEEDS:
            raise FeedParseError(f"more than {MAX_OPML_FEEDS} feeds in one OPML document; import it in parts")
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


__all__ = ["build_opml", "parse_opml"]
