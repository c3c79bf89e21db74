"""Feed dates: the strings feeds put on entries, read into aware UTC datetimes. Pure: no clock
(callers pass ``now``).

Publication dates outside [``EARLIEST_PLAUSIBLE``, now + ``FUTURE_TOLERANCE``] are treated as missing:
feeds put 1970-01-01 (a zero timestamp) or a far-future date on items, which would otherwise sort an
item to the top or bottom forever. Two days of future slack absorbs wrong time zones.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from feedparser import datetimes as _fp_dates

EARLIEST_PLAUSIBLE = datetime(1995, 1, 1, tzinfo=UTC)
FUTURE_TOLERANCE = timedelta(days=2)


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


def entry_date(entry: Mapping[str, Any]) -> datetime | None:
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


__all__ = ["EARLIEST_PLAUSIBLE", "FUTURE_TOLERANCE", "entry_date", "parse_date_string", "plausible_date"]
