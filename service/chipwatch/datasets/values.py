"""Reading single cells: numbers, counts, dates, byte sizes, flags, links.

Every reader returns None for a blank cell and raises :class:`CellError` for text it cannot read, so
the caller decides what an unreadable cell means (in these parsers: unknown, with a warning). Nothing
is guessed: ``inf``, ``nan``, a negative size or a date in year 202 are unreadable, not clamped.
"""

from __future__ import annotations

import math
import re
from datetime import date, datetime

from chipwatch.datasets.records import PartialDate

BLANK_TEXT = frozenset({"", "n/a", "na", "none", "null", "-", "--", "\u2014", "tbd", "unknown", "?"})
"""Cell texts that mean "not stated" in the public datasets (MLPerf writes ``N/A``)."""

EARLIEST_YEAR = 1940  # older than any computing hardware these datasets describe
LATEST_YEAR = 2100

_THOUSANDS = re.compile(r"^[-+]?\d{1,3}(,\d{3})+(\.\d+)?$")
US_DATE = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{4})$")
"""``M/D/YYYY``, Epoch's US-order date."""
_ISO_DAY = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[ T].*)?$")
_ISO_MONTH = re.compile(r"^(\d{4})-(\d{2})$")
_YEAR = re.compile(r"^(\d{4})$")
_SIZE = re.compile(r"^([0-9]*\.?[0-9]+(?:[eE][-+]?\d+)?)\s*([kmgtp]?)(i?)(b|byte|bytes)?$", re.IGNORECASE)
_SIZE_POWERS = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
_TRUE = frozenset({"true", "yes", "y", "1"})
_FALSE = frozenset({"false", "no", "n", "0"})
_UNDECIDED = frozenset({"unclear", "maybe", "partial"})
_URL = re.compile(r"https?://\S+")
_SCHEMES = ("http://", "https://")
_NUMBERS = (int, float)  # a tuple: ``int | float`` would be a new union on every call


class CellError(ValueError):
    """A cell holds text that cannot be read as the expected kind of value."""


def is_blank(value: object) -> bool:
    """True for None and for text that means "not stated" (see :data:`BLANK_TEXT`)."""
    return value is None or (isinstance(value, str) and value.strip().casefold() in BLANK_TEXT)


def text(value: object) -> str | None:
    """The cell as stripped text, None when blank; numbers are written back as text."""
    if value is None or isinstance(value, bool):
        return None if value is None else str(value).lower()
    value = str(value).strip()
    return value or None


def number(value: object, *, minimum: float | None = 0.0) -> float | None:
    """A finite float from a JSON number or text (``1.5e+16``, ``3E+11``, ``1,024``); None when blank.

    Raises CellError for other text, for ``inf``/``nan`` and for values below ``minimum`` (sizes, powers
    and counts are never negative; pass ``minimum=None`` to allow any sign).
    """
    if isinstance(value, str):
        raw = value.strip()
        if not raw:
            return None
        try:
            result = float(raw)
        except ValueError:
            if is_blank(raw):
                return None
            if not _THOUSANDS.match(raw):
                raise CellError(f"{raw[:40]!r} is not a number") from None
            result = float(raw.replace(",", ""))
    elif isinstance(value, bool) or not isinstance(value, _NUMBERS):
        if value is None:
            return None
        raise CellError(f"{value!r} is not a number")
    else:
        result = float(value)
    if not math.isfinite(result):
        raise CellError(f"{value!r} is not a finite number")
    if minimum is not None and result < minimum:
        raise CellError(f"{value!r} is below {minimum:g}")
    return result


def integer(value: object, *, minimum: int | None = 0) -> int | None:
    """A whole number from a JSON number or text (``8``, ``"8"``, ``8.0``); None when blank.

    Raises CellError for fractions and for what :func:`number` refuses.
    """
    result = number(value, minimum=minimum)
    if result is None:
        return None
    if not result.is_integer():
        raise CellError(f"{value!r} is not a whole number")
    return int(result)


def checked_date(year: int, month: int, day: int, raw: str) -> date:
    """The calendar date, its year within 1940..2100; raises CellError naming ``raw`` otherwise."""
    if not EARLIEST_YEAR <= year <= LATEST_YEAR:
        raise CellError(f"{raw!r} has an implausible year")
    try:
        return date(year, month, day)
    except ValueError:
        raise CellError(f"{raw!r} is not a calendar date") from None


def partial_date(value: object) -> PartialDate | None:
    """A date from ``M/D/YYYY`` (Epoch's US order), ``YYYY-MM-DD`` (a time after it is ignored),
    ``YYYY-MM`` (month precision) or ``YYYY`` (year precision); None when blank.

    Raises CellError for other text and for years outside 1940..2100 (``0202-07-30`` is a typo, not a
    date in the third century).
    """
    if value.__class__ is str:
        # Epoch's US-order date first: the common cell, and text that matches it is never blank.
        raw = value.strip()
        if match := US_DATE.match(raw):
            month, day, year = match.groups()
            return PartialDate(checked_date(int(year), int(month), int(day), raw), "day")
    if is_blank(value):
        return None
    raw = str(value).strip()
    if match := US_DATE.match(raw):
        month, day, year = (int(part) for part in match.groups())
        return PartialDate(checked_date(year, month, day, raw), "day")
    if match := _ISO_DAY.match(raw):
        year, month, day = (int(part) for part in match.groups())
        return PartialDate(checked_date(year, month, day, raw), "day")
    if match := _ISO_MONTH.match(raw):
        return PartialDate(checked_date(int(match[1]), int(match[2]), 1, raw), "month")
    if match := _YEAR.match(raw):
        return PartialDate(checked_date(int(match[1]), 1, 1, raw), "year")
    raise CellError(f"{raw[:40]!r} is not a date")


def day(value: object) -> date | None:
    """A full calendar date (see :func:`partial_date`); raises CellError when only a month or year is
    given, because a day-precision field must not silently become the first of the month."""
    result = partial_date(value)
    if result is None:
        return None
    if result.precision != "day":
        raise CellError(f"{value!r} gives no day")
    return result.value


def timestamp(value: object) -> datetime | None:
    """An aware datetime from ISO 8601 text with a zone (``2025-12-05 21:21:23+00:00``,
    ``2026-01-21T00:34:31Z``); None when blank. Raises CellError for text without a zone."""
    if is_blank(value):
        return None
    raw = str(value).strip()
    try:
        result = datetime.fromisoformat(raw)
    except ValueError:
        raise CellError(f"{raw[:40]!r} is not an ISO 8601 time") from None
    if result.tzinfo is None:
        raise CellError(f"{raw!r} has no time zone")
    if not EARLIEST_YEAR <= result.year <= LATEST_YEAR:
        raise CellError(f"{raw!r} has an implausible year")
    return result


def byte_size(value: object) -> int | None:
    """Bytes from a size such as ``288 GB`` (decimal: 288e9), ``96Gi`` or ``2.0 TiB`` (binary), or a
    bare number of bytes; None when blank. Raises CellError for text such as ``Shared with host``."""
    if isinstance(value, _NUMBERS) and not isinstance(value, bool):
        result = number(value)
        return None if result is None else round(result)
    if is_blank(value):
        return None
    raw = str(value).strip()
    match = _SIZE.match(raw)
    if not match:
        raise CellError(f"{raw[:40]!r} is not a size in bytes")
    amount, prefix, binary, _unit = match.groups()
    base = 1024 if binary else 1000
    return round(float(amount) * base ** _SIZE_POWERS[prefix.lower()])


def flag(value: object) -> bool | None:
    """True/False from ``TRUE``/``Yes``/``true``/``1`` and ``FALSE``/``No``/``false``/``0``; None when
    blank or when the dataset says it does not know (``Unclear``). Raises CellError for other text."""
    if isinstance(value, bool):
        return value
    if is_blank(value):
        return None
    raw = str(value).strip().casefold()
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    if raw in _UNDECIDED:
        return None
    raise CellError(f"{str(value).strip()[:40]!r} is not yes or no")


def links(value: object) -> tuple[str, ...]:
    """Every http(s) URL in the cell, in order (cells list several, one per line)."""
    if value.__class__ is str:
        words = value.split()
        # A single whitespace-free word that starts with a scheme and goes on after it is all of the
        # one match the pattern would find (its \S+ is greedy), read without the regular expression.
        if len(words) == 1 and words[0].startswith(_SCHEMES) and not words[0].endswith("://"):
            return (words[0].rstrip(".,;)"),)
    if is_blank(value):
        return ()
    return tuple(url.rstrip(".,;)") for url in _URL.findall(str(value)))
