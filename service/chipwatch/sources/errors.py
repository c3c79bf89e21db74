"""Every error the sources domain raises, in one place so that each step can raise them without
importing the steps that follow it."""

from __future__ import annotations


class FeedParseError(ValueError):
    """The bytes are not a usable feed (empty, HTML, not XML/JSON, or unsafe XML); message says why."""


class UnsafeXMLError(FeedParseError):
    """The XML declares entities that could expand without bound or reach outside the document."""


class SourceNotFound(LookupError):
    """No source with that id."""

    def __init__(self, source_id: str) -> None:
        super().__init__(f"no source with id {source_id!r}")
        self.source_id = source_id


class NotAFeed(ValueError):
    """The source is not a polled feed (a seed article, report or page, or it has no URL)."""


class SourceConflict(ValueError):
    """A source with that id or URL already exists."""


class InvalidSourceURL(ValueError):
    """The URL is malformed, not http(s), or (unless private networks are allowed) internal."""


__all__ = [
    "FeedParseError",
    "InvalidSourceURL",
    "NotAFeed",
    "SourceConflict",
    "SourceNotFound",
    "UnsafeXMLError",
]
