"""Which of an entry's links is the article (pure: no I/O).

A feed entry can carry several links: the article (``rel="alternate"``, the Atom default), its comments
(``replies``), its own Atom document (``self``), media (``enclosure``). feedparser keeps them all in the
entry's ``links`` list but sets the entry's single ``link`` from whichever ``<link>`` came last, so an
Atom entry that ends with ``<link rel="enclosure">https://.../image.jpg</link>`` gets the image as its
link. ``article_link`` picks by relation instead of by order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["article_link"]

# Relations that never point at the article itself (IANA link relations; RFC 4287 §4.2.7.2, RFC 5005,
# RFC 4685 for replies, RFC 5023 for edit and edit-media, WebSub for hub).
_NOT_THE_ARTICLE = frozenset(
    {
        "enclosure",
        "self",
        "edit",
        "edit-media",
        "replies",
        "license",
        "payment",
        "hub",
        "search",
        "first",
        "last",
        "next",
        "previous",
        "prev",
        "next-archive",
        "prev-archive",
        "current",
        "icon",
        "stylesheet",
    }
)
# RFC 4287 §4.2.7.2: a registered relation may also be spelled as this IRI followed by its name.
_IANA_PREFIX = "http://www.iana.org/assignments/relation/"
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})


def _relations(link: Mapping[str, Any]) -> set[str]:
    rel = link.get("rel")
    if not isinstance(rel, str) or not rel.strip():
        return {"alternate"}  # RFC 4287 §4.2.7.2: a link without rel is an alternate
    return {r.removeprefix(_IANA_PREFIX).lower() for r in rel.split()}


def _is_html(link: Mapping[str, Any]) -> bool:
    kind = link.get("type")
    if not isinstance(kind, str) or not kind.strip():
        return True  # no declared type: a web page is what a link is by default
    return kind.split(";", 1)[0].strip().lower() in _HTML_TYPES


def _href(link: Any) -> str | None:
    if not isinstance(link, Mapping):
        return None
    href = link.get("href")
    return href.strip() if isinstance(href, str) and href.strip() else None


def article_link(links: Iterable[Mapping[str, Any]] | None) -> str | None:
    """The href of the article among a feedparser entry's ``links``, or ``None`` when none is one.

    In order of preference: the first ``rel="alternate"`` link (or one without ``rel``) of an HTML type
    or of no declared type; then the first alternate link of any type; then the first link of an HTML
    type whose relation may be the article (``related``, ``via``). A link without an href, or with a
    relation that never names the article (``enclosure``, ``self``, ``replies``, ``edit``, paging
    relations...), is never chosen. The href is returned as feedparser resolved it (against
    ``xml:base`` and the feed URL), stripped of surrounding whitespace.
    """
    candidates = [(link, href) for link in links or () if (href := _href(link)) is not None]
    usable = [(link, href) for link, href in candidates if not _relations(link) & _NOT_THE_ARTICLE]
    alternates = [(link, href) for link, href in usable if "alternate" in _relations(link)]
    for link, href in alternates:
        if _is_html(link):
            return href
    if alternates:
        return alternates[0][1]
    for link, href in usable:
        if _is_html(link):
            return href
    return None
