"""The Atom 1.0 feed of signal transitions (RFC 4287; pure: history rows in, bytes out).

One entry per transition, newest first. Entry ids are stable tag URIs (RFC 4151),
``tag:chipwatch,2026:signal/<id>/v<version>``, because a signal's version increases by one at each
transition: a feed reader sees every move once, however often it polls. ``updated`` is the time the
transition was recorded; links point at the signal and its history in the API.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from datetime import UTC, datetime

from chipwatch.kit.time import rfc3339
from chipwatch.signals.models import SignalHistory

__all__ = ["ATOM_MEDIA_TYPE", "entry_id", "render_feed"]

ATOM_NS = "http://www.w3.org/2005/Atom"
ATOM_MEDIA_TYPE = "application/atom+xml"
TAG_AUTHORITY = "tag:chipwatch,2026"
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

ET.register_namespace("", ATOM_NS)


def entry_id(signal_id: str, version: int) -> str:
    """The stable Atom id of a signal's transition to ``version``."""
    return f"{TAG_AUTHORITY}:signal/{signal_id}/v{version}"


def _state(status: str, outcome: str | None) -> str:
    return f"{status} ({outcome})" if outcome else status


def _el(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    el = ET.SubElement(parent, f"{{{ATOM_NS}}}{tag}", attrs)
    if text is not None:
        el.text = text
    return el


def _summary(e: SignalHistory, question: str) -> str:
    lines = [
        question,
        f"{_state(e.from_status, e.from_outcome)} -> {_state(e.to_status, e.to_outcome)}",
        f"cause: {e.cause}",
    ]
    if e.known_at is not None:
        lines.append(f"known since: {rfc3339(e.known_at, timespec='seconds')}")
    if e.evidence_ids:
        lines.append("evidence: " + ", ".join(str(i) for i in e.evidence_ids))
    if e.note:
        lines.append(f"note: {e.note}")
    return "\n".join(lines)


def render_feed(
    entries: Sequence[tuple[SignalHistory, str]],
    *,
    api_base: str,
    self_url: str,
    updated: datetime | None,
    feed_id: str = f"{TAG_AUTHORITY}:signals",
    title: str = "chipwatch: signal transitions",
) -> bytes:
    """The Atom document (UTF-8 bytes) for ``entries`` (each transition with its signal's question),
    given newest first.

    ``api_base`` is the absolute API root without a trailing slash (``https://host``); ``self_url`` the
    URL this feed was fetched from; ``updated`` the feed's last change (the epoch when ``None``).
    """
    base = api_base.rstrip("/")
    feed = ET.Element(f"{{{ATOM_NS}}}feed")
    _el(feed, "id", feed_id)
    _el(feed, "title", title)
    _el(feed, "subtitle", "Each entry is one move of a watch signal: resolved, in review, reopened.")
    _el(feed, "updated", rfc3339(updated or EPOCH, timespec="seconds"))
    _el(feed, "link", rel="self", href=self_url, type=ATOM_MEDIA_TYPE)
    _el(feed, "link", rel="alternate", href=f"{base}/v1/signals", type="application/json")
    author = _el(feed, "author")
    _el(author, "name", "chipwatch")
    _el(feed, "generator", "chipwatch")
    for e, question in entries:
        entry = _el(feed, "entry")
        _el(entry, "id", entry_id(e.signal_id, e.version))
        title_text = f"{e.signal_id}: {_state(e.to_status, e.to_outcome)} (v{e.version})"
        _el(entry, "title", title_text)
        _el(entry, "updated", rfc3339(e.at, timespec="seconds"))
        _el(entry, "published", rfc3339(e.at, timespec="seconds"))
        # No type on the alternate link: readers (feedparser among them) only follow an entry link they
        # take for a page, and the JSON answer is what a reader of this feed opens.
        _el(entry, "link", rel="alternate", href=f"{base}/v1/signals/{e.signal_id}")
        _el(
            entry,
            "link",
            rel="related",
            href=f"{base}/v1/signals/{e.signal_id}/history",
            type="application/json",
        )
        _el(entry, "category", term=e.to_status, label=_state(e.to_status, e.to_outcome))
        _el(entry, "summary", _summary(e, question), type="text")
    return ET.tostring(feed, encoding="utf-8", xml_declaration=True)
