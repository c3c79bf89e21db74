"""Time: aware UTC datetimes and their RFC 3339 text.

SQLite hands back naive datetimes for values stored as UTC, so everything read from the database passes
through :func:`as_utc` before it is compared or printed.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Literal, overload

Timespec = Literal["auto", "seconds", "milliseconds", "microseconds"]


def utcnow() -> datetime:
    """The current time as an aware UTC datetime."""
    return datetime.now(UTC)


@overload
def as_utc(value: datetime) -> datetime: ...
@overload
def as_utc(value: None) -> None: ...
def as_utc(value: datetime | None) -> datetime | None:
    """``value`` as an aware UTC datetime; a naive value is taken to be UTC already; None stays None."""
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def rfc3339(value: datetime | date | None, *, timespec: Timespec = "auto") -> str | None:
    """RFC 3339 text: a datetime in UTC ending in ``Z`` (``2026-08-25T09:30:00Z``), a date as
    ``YYYY-MM-DD``, None as None. ``timespec`` is :meth:`datetime.isoformat`'s (``auto`` keeps
    microseconds when there are any)."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return as_utc(value).isoformat(timespec=timespec).replace("+00:00", "Z")
    return value.isoformat()
