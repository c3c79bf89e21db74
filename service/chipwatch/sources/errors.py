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


class InvalidSource(ValueError):
    """A source's fields were refused; ``problems`` lists every ``(field, message)``."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"{field}: {message}" for field, message in problems))
        self.problems = problems


class InvalidSourceURL(InvalidSource):
    """The URL is malformed, not http(s), or (unless private networks are allowed) internal."""

    def __init__(self, message: str) -> None:
        super().__init__([("url", message)])
        self.args = (message,)


class SourceRemoved(NotAFeed):
    """The source was removed (DELETE), so it is not checked; enabling it again brings it back."""


__all__ = [
    "FeedParseError",
    "InvalidSource",
    "InvalidSourceURL",
    "NotAFeed",
    "SourceConflict",
    "SourceNotFound",
    "SourceRemoved",
    "UnsafeXMLError",
]
