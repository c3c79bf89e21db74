"""What makes two news items one story, across sources (pure: no I/O).

The same article reaches chipwatch through several feeds: a publisher's blog and its newsroom, an
aggregator that links to the original, a syndicated copy on another site. Two items are one story when
they share their normalised link, or when they share a title distinctive enough that two different
articles would not carry it ("Weekly roundup" is not; "NVIDIA publishes InferenceX results for Vera Rubin"
is). Each key is a SHA-256 hex digest, so it fits a fixed-width indexed column.
"""

from __future__ import annotations

import hashlib
import unicodedata
from urllib.parse import urlsplit

from chipwatch.text.search import fold_for_search

__all__ = ["MIN_TITLE_CHARS", "MIN_TITLE_HAN", "MIN_TITLE_WORDS", "story_keys"]

MIN_TITLE_WORDS = 5
"""A Latin-script title identifies a story from this many words..."""
MIN_TITLE_CHARS = 30
"""...and this many characters (folded, spaces included)."""
MIN_TITLE_HAN = 12
"""A title in Chinese or Japanese (no spaces between words) from this many ideographs or kana."""


def _digest(kind: str, text: str) -> str:
    return hashlib.sha256(f"{kind}\n{text}".encode()).hexdigest()


def _distinctive(folded: str) -> bool:
    han = sum(1 for ch in folded if unicodedata.east_asian_width(ch) == "W" and ch.isalpha())
    if han >= MIN_TITLE_HAN:
        return True
    return len(folded) >= MIN_TITLE_CHARS and len(folded.split()) >= MIN_TITLE_WORDS


def story_keys(link_norm: str | None, title: str | None) -> tuple[str | None, str | None]:
    """``(link key, title key)`` of an item: digests of its normalised link (``None`` without one, or for a
    site's home page, which many stories point at) and of its title folded for search (``None`` when the
    title is too short or generic to name one story)."""
    try:
        home = urlsplit(link_norm).path in ("", "/") if link_norm else True
    except ValueError:
        home = True
    link_key = None if home else _digest("link", link_norm or "")
    folded = fold_for_search(title)
    title_key = _digest("title", folded) if folded and _distinctive(folded) else None
    return link_key, title_key
