"""Feed dates: the date strings feeds put on entries, read to an aware UTC instant or stored as unknown with
the reason. Pure: no clock (callers pass ``now``).

Reading is :func:`chipwatch.text.dates.read_date`, given the source's time zone. A date that names a
period longer than a day ("2026-11", "Nov. 2026", "2003") is kept as the period's first instant with its
precision (``month``): a reader comparing it with a day must take the whole period into account (the
first instant is the earliest the entry can have been published, the end of the period the latest).
Dates outside [``EARLIEST_PLAUSIBLE``, now + ``FUTURE_TOLERANCE``] are
unknown too: feeds put 1970-01-01 (a zero timestamp) or a far-future date on items, which would otherwise
sort an item to the top or bottom forever; two days of future slack absorbs wrong zones.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from chipwatch.text.dates import read_date

EARLIEST_PLAUSIBLE = datetime(1995, 1, 1, tzinfo=UTC)
FUTURE_TOLERANCE = timedelta(days=2)
PERIODS = {"year", "month", "week"}
"""Precisions coarser than a day: the value is the first instant of a longer period."""
ZONE_ASSUMED = "no-zone-utc"
"""The reason code of a time read without any zone (the text's, the source's or the script's): taken as
UTC, the convention of RFC 3339 and of feed readers, but the instant may lie anywhere from 14 hours
earlier to 12 hours later (the offsets real zones use)."""
_EAST, _WEST = timedelta(hours=14), timedelta(hours=12)

MISSING = "missing: the entry carries no date"


@dataclass(frozen=True, slots=True)
class EntryDate:
    """An entry's publication time and how it was read.

    ``value`` is aware UTC or ``None`` (unknown). ``reason`` is :class:`~chipwatch.text.dates.DateReading`'s
    reason (``zone-by-source: CST in Asia/Shanghai``, ``ambiguous-zone: ...``), or ``missing: ...`` or
    ``implausible: ...`` (outside the plausible range; ``implausible`` is then True, so that parsers can
    count such entries). ``precision`` is ``second``, ``minute``, ``day``, ``week``, ``month`` or
    ``year`` when ``value`` is set (``value`` is then the first instant of that period), else ``None``.
    """

    value: datetime | None
    reason: str
    precision: str | None = None
    implausible: bool = False


def plausible_date(value: datetime | None, *, now: datetime) -> datetime | None:
    """``value`` if it lies in [1995-01-01, now + 2 days], else None."""
    if value is None:
        return None
    if value < EARLIEST_PLAUSIBLE or value > now + FUTURE_TOLERANCE:
        return None
    return value


def read_entry_date(raw: str | None, *, default_tz: str | None, now: datetime) -> EntryDate:
    """Read one date string of a feed entry, in the source's zone ``default_tz`` (a zoneinfo name).

    Returns an :class:`EntryDate`: the instant with the reader's reason and precision, or ``None`` with
    why it is unknown (unreadable or ambiguous text, an implausible instant). Raises ``ValueError`` when
    ``default_tz`` is not a zoneinfo name.
    """
    if raw is None or not raw.strip():
        return EntryDate(None, MISSING)
    reading = read_date(raw, default_tz=default_tz)
    if reading.value is None:
        return EntryDate(None, reading.reason)
    if plausible_date(reading.value, now=now) is None:
        return EntryDate(None, f"implausible: {reading.value.isoformat()} is before 1995 or in the future",
                         implausible=True)
    return EntryDate(reading.value, reading.reason, reading.precision)


def period_end(start: datetime, precision: str | None) -> datetime:
    """The first instant after the period that starts at ``start`` (``precision`` year, month or week);
    ``start`` itself for finer precisions. Used as the latest an entry can have been published."""
    if precision == "year":
        return start.replace(year=start.year + 1)
    if precision == "month":
        return start.replace(year=start.year + start.month // 12, month=start.month % 12 + 1)
    if precision == "week":
        return start + timedelta(days=7)
    return start


def publication_bounds(
    value: datetime | None, precision: str | None, reason: str | None
) -> tuple[datetime | None, datetime | None]:
    """``(earliest, latest)`` instants a stored publication date allows: the value itself when it was read
    exactly; the period for a month, a year or a week (its first and its last instant); for
    a time read without a zone (:data:`ZONE_ASSUMED`), the 26 hours the zones of the world span around it.
    A date without a time is its calendar day as written. ``(None, None)`` for an unknown date.

    A condition on the date holds only if it holds for every instant in the bounds: a guess is no evidence.
    """
    if value is None:
        return None, None
    earliest, latest = value, value
    if precision in PERIODS:
        latest = period_end(value, precision) - timedelta(microseconds=1)
    if (reason or "").split(":", 1)[0] == ZONE_ASSUMED and precision in ("minute", "second"):
        earliest, latest = earliest - _EAST, latest + _WEST
    return earliest, latest


def first_date(raws: list[str | None], *, default_tz: str | None, now: datetime) -> EntryDate:
    """The date of the first of ``raws`` that the feed filled in (publication, then later fields), read
    with :func:`read_entry_date`. A filled-in field that cannot be read is not replaced by a later one:
    an update time is no publication time."""
    for raw in raws:
        if isinstance(raw, str) and raw.strip():
            return read_entry_date(raw, default_tz=default_tz, now=now)
    return EntryDate(None, MISSING)


def entry_date(entry: Mapping[str, Any], *, default_tz: str | None, now: datetime) -> EntryDate:
    """Publication date of a feedparser entry: its ``published`` string, else ``updated`` (Atom's required
    date), else ``created``, read by :func:`first_date`. feedparser's own parsed tuple is never used: it
    fills what it cannot read (a missing century, a missing zone taken as UTC) instead of saying so."""
    # dict.get, not entry.get: FeedParserDict maps missing keys to others with a warning.
    return first_date([dict.get(entry, key) for key in ("published", "updated", "created")],
                      default_tz=default_tz, now=now)


__all__ = [
    "PERIODS",
    "ZONE_ASSUMED",
    "EARLIEST_PLAUSIBLE",
    "FUTURE_TOLERANCE",
    "MISSING",
    "EntryDate",
    "period_end",
    "publication_bounds",
    "entry_date",
    "first_date",
    "plausible_date",
    "read_entry_date",
]
