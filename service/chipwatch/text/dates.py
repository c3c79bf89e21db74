"""Publication dates as feeds and news pages write them, read to an instant or declared unknown (pure).

``read_date(text, default_tz=...)`` returns a :class:`DateReading`: an aware UTC datetime with the reason
it was read that way, or ``None`` with the reason it could not be read with confidence. A missing field is
never filled from the current time, and a zone the reader does not know is never taken for UTC.

Forms read: RFC 822/1123/5322 and RFC 850 (named zones, numeric offsets with or without a colon,
``GMT+08:00``), ISO 8601 / RFC 3339 / W3C-DTF (extended and basic, fractions, ordinal and week dates,
year or month precision, the ISO 8601:2000 truncated ``-YYMM``), asctime and JavaScript ``Date`` strings,
10-digit Unix times, numeric dates whose day/month order the numbers, the separator (``30.10.23`` is
day-first) or a weekday fix, month and weekday names in English, French, German, Spanish, Italian,
Portuguese, Dutch, Hungarian, Greek and Russian, 12-hour clocks, ordinals, IANA zone names, and Chinese,
Japanese and Korean forms (``2026年11月30日 下午3点半``, ``二〇二六年十一月三十日``, ``北京时间``,
``2004년 05월 28일``, 民国 and 令和 years). Any Unicode decimal digits and full-width forms are read.

Zones: unambiguous abbreviations have one offset (CET +01:00). Ambiguous ones (CST, IST, BST, AST, PST...)
are resolved by the source's default zone when it uses that abbreviation or one of its offsets, then by
the script of the text (CST in Chinese text is +08:00), then, for the eight US zones RFC 5322 defines
(EST ... PDT), by that definition; otherwise the date is unknown. Generic US names (ET, PT) follow their
zone's daylight saving rules. Military letters take their military meaning (A = +01:00, RFC 1123
§5.2.14 corrects RFC 822's signs); J (local time) is unknown. A date without any zone is read in the
source's zone, else in the zone its script implies (Hangul: Asia/Seoul; kana: Asia/Tokyo; other Han:
Asia/Shanghai), else in UTC (the convention of RFC 3339 and of feed readers), and the reason says so.
A local time that a zone skips or repeats at a daylight-saving change is unknown.

Marked unknown: empty text; unknown words or zone abbreviations; offsets outside -12:00..+14:00; impossible
dates; numeric dates whose order stays ambiguous (``03-12-31``, ``04/05/2026`` without a weekday);
bare numbers other than a year, ``YYYYMMDD`` or 10-digit Unix seconds (``031231`` and ``03335``, the
two-digit-year forms of ISO 8601:2000, are also read as day-first or as ids); a day and month without a
year; ambiguous zone abbreviations nothing resolves; text over 200 characters.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from chipwatch.text.date_words import (
    AMBIGUOUS_ZONES,
    FILLERS,
    FIXED_ZONE_OFFSETS,
    GENERIC_ZONES,
    MILITARY_ZONE_OFFSETS,
    MONTH_WORDS,
    RFC5322_ZONES,
    TRAILING_FILLERS,
    WEEKDAY_WORDS,
    fold,
    rewrite_cjk,
)

__all__ = ["DateReading", "read_date"]


@dataclass(frozen=True, slots=True)
class DateReading:
    """The outcome of reading one date string; unpacks as ``(value, reason)``.

    ``value`` is an aware UTC datetime or ``None``. ``reason`` is ``"<code>"`` or ``"<code>: <detail>"``.
    Codes when read: ``offset`` (a numeric offset or ISO 8601 ``Z``), ``zone`` (a zone name, GMT/UTC,
    an unambiguous abbreviation or a military letter), ``zone-by-source`` / ``zone-by-script`` (an
    ambiguous abbreviation resolved by the source's zone or the script), ``no-zone-source`` /
    ``no-zone-script`` / ``no-zone-utc`` (no zone in the text), ``epoch``. Codes when unknown:
    ``empty``, ``unreadable``, ``invalid-date``, ``ambiguous-order``, ``missing-year``,
    ``unknown-zone``, ``ambiguous-zone``, ``ambiguous-time``, ``bad-offset``.
    ``precision`` is ``second``, ``minute``, ``day``, ``week``, ``month`` or ``year`` (the instant is
    the start of that period), ``None`` when unknown.
    """

    value: datetime | None
    reason: str
    precision: str | None = None

    def __iter__(self):
        return iter((self.value, self.reason))

    @property
    def code(self) -> str:
        """The reason's code, without its detail."""
        return self.reason.split(":", 1)[0]


# ---------------------------------------------------------------------------------------------------
# Preparation: one spelling for digits, dashes, comments and a.m./p.m.

_COMMENT = re.compile(r"\([^()]*\)")
_AMPM_DOTS = re.compile(r"(?<![^\W\d_])([ap])\.\s?m\.?(?![^\W\d_])", re.IGNORECASE)
_DASHES = str.maketrans({"\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-",
                         "\u2212": "-", "\u3000": " "})


def _prepare(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(_DASHES)
    text = "".join(str(unicodedata.decimal(ch)) if ch.isdecimal() and not ch.isascii() else ch for ch in text)
    text = _AMPM_DOTS.sub(lambda m: f" {m.group(1).lower()}m ", text)
    return " ".join(text.split())


# ---------------------------------------------------------------------------------------------------
# Fields read from the text, before the zone is applied


@dataclass(slots=True)
class _Fields:
    year: int
    month: int
    day: int
    hour: int = 0
    minute: int = 0
    second: int = 0
    microsecond: int = 0
    precision: str = "day"
    zone: tuple[str, object] | None = None  # ("offset", minutes) | ("fixed" | "abbr", name) | ("iana", key)


class _Refused(Exception):
    """A reading that stops with a reason (``code: detail``)."""


def _two_digit_year(digits: str) -> int:
    """A year of four digits as written; of two, RFC 5322 §4.3: 00-49 -> 2000-2049, 50-99 -> 1950-1999."""
    value = int(digits)
    if len(digits) == 4:
        return value
    if len(digits) != 2:
        raise ValueError(f"year {digits}")
    return value + (2000 if value < 50 else 1900)


def _offset_minutes(text: str) -> int:
    """"+0530", "+05:30", "-5", "+8:00" -> minutes east of UTC; refuses what no zone uses."""
    sign = -1 if text[0] == "-" else 1
    body = text[1:].replace(":", "")
    hours, minutes = (body, "0") if len(body) <= 2 else (body[:-2], body[-2:])
    if int(minutes) >= 60:
        raise _Refused(f"bad-offset: {text}")
    value = sign * (int(hours) * 60 + int(minutes))
    if not _MIN_OFFSET_MIN <= value <= _MAX_OFFSET_MIN:
        raise _Refused(f"bad-offset: {text} is outside -12:00..+14:00")
    return value


def _fraction(digits: str | None) -> int:
    return int((digits or "0")[:6].ljust(6, "0"))


# ---------------------------------------------------------------------------------------------------
# ISO 8601, RFC 3339, W3C-DTF

_ISO_TIME = (r"(?:[Tt ](?P<h>\d{2}):(?P<mi>\d{2})(?::(?P<s>\d{2})(?:[.,](?P<f>\d+))?)?"
             r"\s?(?P<z>Z|z|[+-]\d{2}(?::?\d{2})?)?Z?)?")
_ISO_EXTENDED = re.compile(
    r"(?P<y>\d{4})(?:-(?P<m>\d{2})(?:-(?P<d>\d{2}))?|-0(?P<m3>\d{2})-(?P<d3>\d{2})|-(?P<o>\d{3})"
    r"|-?W(?P<w>\d{2})(?:-?(?P<wd>[1-7]))?)?" + _ISO_TIME
)
_ISO_BASIC = re.compile(
    r"(?P<y>\d{4})(?P<m>\d{2})(?P<d>\d{2})(?:T(?P<h>\d{2})(?P<mi>\d{2})(?P<s>\d{2})?(?:[.,](?P<f>\d+))?"
    r"(?P<z>Z|[+-]\d{2}(?:\d{2})?)?)?"
)
_ISO_TRUNCATED = re.compile(r"-(?P<yy>\d{2})-?(?P<m>\d{2})")  # ISO 8601:2000 "-YYMM": a month


def _iso_day(g: dict[str, str | None]) -> tuple[int, int, int, str]:
    year = int(g["y"])
    if g.get("o"):
        day = date(year, 1, 1) + timedelta(days=int(g["o"]) - 1)
        if day.year != year:
            raise _Refused(f"invalid-date: day {g['o']} of {year}")
        return year, day.month, day.day, "day"
    if g.get("w"):
        day = date.fromisocalendar(year, int(g["w"]), int(g["wd"] or 1))
        return day.year, day.month, day.day, "day" if g["wd"] else "week"
    month, day = g["m"] or g.get("m3"), g["d"] or g.get("d3")
    if month is None:
        return year, 1, 1, "year"
    return year, int(month), int(day or 1), "day" if day else "month"


def _read_iso(text: str) -> _Fields | None:
    """Fields of an ISO 8601 family date, ``None`` when the text is not one."""
    m = _ISO_EXTENDED.fullmatch(text) or _ISO_BASIC.fullmatch(text)
    if m is None:
        t = _ISO_TRUNCATED.fullmatch(text)
        return None if t is None else _Fields(_two_digit_year(t["yy"]), int(t["m"]), 1, precision="month")
    g = m.groupdict()
    if g.get("h") and not (g.get("d") or g.get("d3") or g.get("o") or g.get("wd")):
        return None  # a time needs a day
    try:
        year, month, day, precision = _iso_day(g)
    except ValueError as exc:
        raise _Refused(f"invalid-date: {exc}") from None
    fields = _Fields(year, month, day, precision=precision)
    if g.get("h"):
        fields.hour, fields.minute = int(g["h"]), int(g["mi"])
        fields.second, fields.microsecond = int(g["s"] or 0), _fraction(g["f"])
        fields.precision = "second" if g["s"] else "minute"
        if g["z"]:
            fields.zone = ("offset", 0 if g["z"] in "Zz" else _offset_minutes(g["z"]))
    return fields


# ---------------------------------------------------------------------------------------------------
# Everything else: tokens, then fields

_TOKEN = re.compile(
    r"(?P<sep>[\s,;|@/.\-]+)"
    r"|(?P<date3>(?P<a>\d{1,4})(?P<s>[./-]|\.\s| )(?P<b>\d{1,2})(?P=s)(?P<c>\d{1,4})\.?)(?![\d:])"
    r"|(?P<time>(?P<h>\d{1,2})(?::(?P<mi>\d{2})(?::(?P<sec>\d{2})(?:[.,](?P<f>\d+))?)?|h(?P<mi2>\d{2})))"
    r"(?![\d:])"
    r"|(?P<iana>[A-Za-z]+(?:/[A-Za-z0-9_+\-]+)+)"
    r"|(?P<num>\d+)(?i:st|nd|rd|th|er|e)?(?![\d:])"
    r"|(?P<word>[^\W\d_]+)"
)
_MIN_OFFSET_MIN, _MAX_OFFSET_MIN = -12 * 60, 14 * 60  # the range real zones use
_OFFSET_TOKEN = re.compile(r"[+-](?:\d{2}:?\d{2}|\d{1,2}(?::\d{2})?)(?![\d:])")
_EPOCH = re.compile(r"\d{10}")


def _tokens(text: str) -> list[tuple[str, re.Match[str]]]:
    """Split ``text`` into typed tokens; an offset is only a token after a time or GMT/UTC."""
    out: list[tuple[str, re.Match[str]]] = []
    pos = 0
    while pos < len(text):
        prev = out[-1] if out else None
        if prev and (prev[0] == "time" or (prev[0] == "word" and fold(prev[1][0]) in ("gmt", "utc", "ut"))):
            m = _OFFSET_TOKEN.match(text, pos + 1 if text[pos] == " " else pos)
            if m:
                out.append(("offset", m))
                pos = m.end()
                continue
        m = _TOKEN.match(text, pos)
        if m is None:
            raise _Refused(f"unreadable: {text[pos:pos + 12]!r}")
        if m.lastgroup != "sep":
            kind = next(k for k in ("date3", "time", "iana", "num", "word") if m.group(k) is not None)
            out.append((kind, m))
        pos = m.end()
    return out


@dataclass(slots=True)
class _Parts:
    """What the tokens said, before it is checked."""

    numbers: list[str]
    months: list[tuple[frozenset[int], bool]]  # (months a word may mean, may it be a weekday)
    weekdays: set[int]
    date3: re.Match[str] | None = None
    time: tuple[int, int, int, int, str] | None = None
    ampm: str | None = None
    offset: int | None = None
    zone: tuple[str, str] | None = None


def _zone_word(word: str) -> tuple[str, str] | None:
    """The zone a word names: ("fixed", abbreviation), ("abbr", ambiguous one) or ("iana", key)."""
    if word in FIXED_ZONE_OFFSETS or (len(word) == 1 and word in MILITARY_ZONE_OFFSETS):
        return ("fixed", word)
    if word in AMBIGUOUS_ZONES:
        return ("abbr", word)
    if word in GENERIC_ZONES:
        return ("iana", GENERIC_ZONES[word])
    return None


def _read_word(parts: _Parts, raw: str, after_time: bool, last: bool) -> None:
    """Record what one word says; words that appear after the time may name its zone."""
    word = fold(raw)
    if word in ("am", "pm", "noon") and (after_time or word == "noon") and parts.ampm is None:
        parts.ampm = word
    elif after_time and parts.zone is None and (zone := _zone_word(word)) is not None:
        parts.zone = zone
    elif word in MONTH_WORDS:
        parts.months.append((MONTH_WORDS[word], word in WEEKDAY_WORDS))
        parts.weekdays |= {d - 1 for d in WEEKDAY_WORDS.get(word, ())}
    elif word in WEEKDAY_WORDS:
        parts.weekdays |= {d - 1 for d in WEEKDAY_WORDS[word]}
    elif word in (TRAILING_FILLERS if after_time else FILLERS):
        pass
    elif after_time and parts.offset is not None and _zone_word(word):
        pass  # a name after a numeric offset ("+0530 IST"): the offset says it exactly
    elif after_time and last and word.isascii() and len(word) <= 6:
        raise _Refused(f"unknown-zone: {raw!r}")
    else:
        raise _Refused(f"unreadable: unknown word {raw!r}")


def _hour_token(tokens: list[tuple[str, re.Match[str]]], i: int) -> bool:
    """Is token ``i`` a bare hour, as in "3pm"?"""
    return (tokens[i][0] == "num" and i + 1 < len(tokens) and tokens[i + 1][0] == "word"
            and fold(tokens[i + 1][1].group(0)) in ("am", "pm"))


def _read_time(parts: _Parts, kind: str, m: re.Match[str]) -> None:
    if parts.time is not None:
        raise _Refused("unreadable: two times")
    if kind == "num":
        parts.time = (int(m.group("num")), 0, 0, 0, "minute")
        return
    sec = m.group("sec")
    minute = int(m.group("mi") or m.group("mi2"))
    precision = "second" if sec else "minute"
    parts.time = (int(m.group("h")), minute, int(sec or 0), _fraction(m.group("f")), precision)


def _read_tokens(tokens: list[tuple[str, re.Match[str]]]) -> _Parts:
    parts = _Parts(numbers=[], months=[], weekdays=set())
    after_time = False  # past the time (or past the date when there is none): where a zone may follow
    for i, (kind, m) in enumerate(tokens):
        last = all(k in ("word", "offset") for k, _ in tokens[i + 1:])
        if kind == "word":
            _read_word(parts, m.group(0), after_time, last)
        elif kind == "time" or (_hour_token(tokens, i) and parts.time is None):
            _read_time(parts, kind, m)
            after_time = True
        elif kind == "offset":
            parts.offset = _offset_minutes(m.group(0))
        elif kind == "iana":
            parts.zone = ("iana", m.group(0))
        elif kind == "date3":
            if parts.date3 is not None:
                raise _Refused("unreadable: two dates")
            parts.date3 = m
            after_time = after_time or last
        else:
            parts.numbers.append(m.group("num"))
            after_time = after_time or (last and bool(parts.months))
    return parts


def _numeric_date(m: re.Match[str], weekdays: set[int]) -> tuple[int, int, int]:
    """Year, month, day of "30/06/2020", "2006/09/15", "11 04 2020", "10/30/23", "30.10.23"."""
    a, b, c, sep = m.group("a"), m.group("b"), m.group("c"), m.group("s").strip() or " "
    if len(a) == 3 or len(c) == 3:
        raise _Refused(f"unreadable: three-digit year in {m.group(0)!r}")
    if len(a) == 4:
        orders = [(a, b, c)]
    elif len(c) == 4 or sep == ".":
        if sep == " " and len(c) != 4:
            raise _Refused(f"unreadable: {m.group(0)!r}")
        orders = [(c, b, a)] if sep == "." else [(c, b, a), (c, a, b)]
    else:
        orders = [(a, b, c), (c, b, a), (c, a, b)]
    found: set[date] = set()
    for y, mo, d in orders:
        try:
            found.add(date(_two_digit_year(y), int(mo), int(d)))
        except ValueError:
            continue
    if weekdays and len(found) > 1:
        found = {d for d in found if d.weekday() in weekdays} or found
    if not found:
        raise _Refused(f"invalid-date: {m.group(0)!r}")
    if len(found) > 1:
        raise _Refused(f"ambiguous-order: {m.group(0)!r} reads as " + " or ".join(sorted(map(str, found))))
    (day,) = found
    return day.year, day.month, day.day


def _named_month_date(parts: _Parts) -> tuple[int, int, int, str]:
    """Year, month, day and precision when a month is written as a word."""
    months = [m for m, _ in parts.months]
    if len(months) > 1:  # "mar., 01 déc. 2020": "mar" is mardi when another word is only a month
        months = [m for m, weekday in parts.months if not weekday] or months
    if len(set(months)) != 1 or len(months[0]) != 1:
        raise _Refused("unreadable: no single month")
    (month,) = months[0]
    four = [n for n in parts.numbers if len(n) == 4]
    small = [n for n in parts.numbers if len(n) <= 2]
    if len(four) + len(small) != len(parts.numbers):
        raise _Refused("unreadable: a number that is neither day nor year")
    if len(four) == 1 and len(small) == 1:
        return int(four[0]), month, int(small[0]), "day"
    if len(four) == 1 and not small:
        return int(four[0]), month, 1, "month"
    if not four and len(small) == 2 and len(small[1]) == 2:
        return _two_digit_year(small[1]), month, int(small[0]), "day"
    if not four and len(small) <= 1:
        raise _Refused("missing-year")
    raise _Refused("unreadable: too many numbers")


def _read_words(text: str) -> _Fields:
    parts = _read_tokens(_tokens(text))
    if parts.date3 is not None:
        if parts.months or parts.numbers:
            raise _Refused("unreadable: a numeric date with more date words")
        year, month, day = _numeric_date(parts.date3, parts.weekdays)
        precision = "day"
    elif parts.months:
        year, month, day, precision = _named_month_date(parts)
    else:
        raise _Refused("unreadable: no date")
    try:
        date(year, month, day)
    except ValueError as exc:
        raise _Refused(f"invalid-date: {exc}") from None
    fields = _Fields(year, month, day, precision=precision)
    if parts.time is not None:
        hour, fields.minute, fields.second, fields.microsecond, fields.precision = parts.time
        fields.hour = _clock_hour(hour, parts.ampm)
    elif parts.ampm is not None and parts.ampm != "noon":
        raise _Refused("unreadable: am/pm without a time")
    if parts.offset is not None:
        fields.zone = ("offset", parts.offset)
    elif parts.zone is not None:
        fields.zone = parts.zone
    return fields


def _clock_hour(hour: int, ampm: str | None) -> int:
    """The 24-hour hour of a 12-hour clock reading ("12:05 am" -> 0, "1 pm" -> 13)."""
    if ampm is None or (ampm == "pm" and hour > 12):
        return hour  # "13:00 PM" says the same thing twice
    if ampm == "noon":
        return hour if hour >= 11 else hour + 12
    if not 1 <= hour <= 12:
        raise _Refused(f"invalid-date: hour {hour} {ampm}")
    return hour % 12 + (12 if ampm == "pm" else 0)


# ---------------------------------------------------------------------------------------------------
# Zones applied


def _zone(key: str) -> ZoneInfo | None:
    try:
        return ZoneInfo(key)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None


def _zone_offsets(zone: ZoneInfo, local: datetime) -> dict[str, set[int]]:
    """Abbreviation -> offsets (minutes) ``zone`` uses around ``local``'s date, both seasons."""
    seen: dict[str, set[int]] = {}
    seasons = (local.replace(month=1, day=15), local.replace(month=7, day=15))
    for probe in (local, local.replace(fold=1), *seasons):
        aware = probe.replace(tzinfo=zone)
        offset = aware.utcoffset()
        if offset is not None:
            seen.setdefault((aware.tzname() or "").casefold(), set()).add(int(offset.total_seconds() // 60))
    return seen


def _resolve_abbreviation(name: str, local: datetime, zones: list[tuple[str, ZoneInfo]]) -> tuple[int, str]:
    """Offset and reason for an ambiguous abbreviation, from the source's zone, then the script's."""
    for code, zone in zones:
        seen = _zone_offsets(zone, local)
        if len(seen.get(name, ())) == 1:
            return next(iter(seen[name])), f"{code}: {name.upper()} in {zone.key}"
        used = set().union(*seen.values()) & set(AMBIGUOUS_ZONES[name])
        if len(used) == 1:
            return used.pop(), f"{code}: {name.upper()} in {zone.key}"
    if name in RFC5322_ZONES:
        return RFC5322_ZONES[name], f"zone: {name.upper()} as RFC 5322 defines it"
    raise _Refused(f"ambiguous-zone: {name.upper()} has several meanings and no source zone resolves it")


def _in_zone(local: datetime, zone: ZoneInfo) -> datetime:
    """``local`` wall-clock time in ``zone``; refuses times skipped or repeated by a clock change."""
    aware = local.replace(tzinfo=zone)
    if aware.astimezone(UTC).astimezone(zone).replace(tzinfo=None) != local:
        raise _Refused(f"invalid-date: {local:%Y-%m-%d %H:%M} does not occur in {zone.key}")
    if aware.utcoffset() != local.replace(fold=1, tzinfo=zone).utcoffset():
        raise _Refused(f"ambiguous-time: {local:%Y-%m-%d %H:%M} occurs twice in {zone.key}")
    return aware.astimezone(UTC)


def _instant(fields: _Fields, default: ZoneInfo | None, named: str | None, hint: str | None) -> DateReading:
    """Apply the zone: the text's own, else the source's, else the script's, else UTC."""
    if not (fields.hour <= 23 and fields.minute <= 59 and fields.second <= 60):
        raise _Refused(f"invalid-date: time {fields.hour}:{fields.minute:02d}:{fields.second:02d}")
    local = datetime(fields.year, fields.month, fields.day, fields.hour, fields.minute, 0,
                     fields.microsecond) + timedelta(seconds=fields.second)  # 60 is a leap second
    kind, value = fields.zone or (("iana", named) if named else (None, None))
    hint_zone = _zone(hint) if hint else None
    if kind == "offset":
        return DateReading(_shift(local, int(value)), "offset", fields.precision)
    if kind == "fixed":
        table = FIXED_ZONE_OFFSETS if value in FIXED_ZONE_OFFSETS else MILITARY_ZONE_OFFSETS
        minutes = table[str(value)]
        return DateReading(_shift(local, minutes), f"zone: {str(value).upper()}", fields.precision)
    if kind == "abbr":
        zones = [(c, z) for c, z in (("zone-by-source", default), ("zone-by-script", hint_zone)) if z]
        minutes, reason = _resolve_abbreviation(str(value), local, zones)
        return DateReading(_shift(local, minutes), reason, fields.precision)
    if kind == "iana":
        zone = _zone(str(value))
        if zone is None:
            raise _Refused(f"unknown-zone: {value}")
        return DateReading(_in_zone(local, zone), f"zone: {zone.key}", fields.precision)
    for code, zone in (("no-zone-source", default), ("no-zone-script", hint_zone)):
        if zone is not None:
            return DateReading(_in_zone(local, zone), f"{code}: read in {zone.key}", fields.precision)
    return DateReading(local.replace(tzinfo=UTC), "no-zone-utc: read as UTC", fields.precision)


def _shift(local: datetime, minutes: int) -> datetime:
    return local.replace(tzinfo=timezone(timedelta(minutes=minutes))).astimezone(UTC)


_MAX_CHARS = 200  # the longest real date strings ("Thu Nov 12 2020 17:00:00 GMT+0000 (...)") are ~70


@lru_cache(maxsize=4096)
def read_date(text: str | None, *, default_tz: str | None = None) -> DateReading:
    """Read a feed or page date to an aware UTC instant, or say why it cannot be read with confidence.

    ``default_tz`` is the source's zoneinfo name (``Asia/Shanghai``): it resolves ambiguous
    abbreviations and dates written without a zone. Returns a :class:`DateReading` (unpacks as
    ``(value, reason)``); never raises for any text. Raises ``ValueError`` when ``default_tz`` is not
    a zoneinfo name. The forms read and refused are listed in the module docstring.
    """
    default = None
    if default_tz:
        default = _zone(default_tz)
        if default is None:
            raise ValueError(f"unknown time zone {default_tz!r}")
    if not isinstance(text, str) or not text.strip():
        return DateReading(None, "empty")
    if len(text) > _MAX_CHARS:
        return DateReading(None, f"unreadable: {len(text)} characters is not a date")
    prepared = _prepare(text)
    if _EPOCH.fullmatch(prepared):
        return DateReading(datetime.fromtimestamp(int(prepared), tz=UTC), "epoch", "second")
    try:
        prepared, named, hint = rewrite_cjk(prepared)
        prepared = " ".join(_COMMENT.sub(" ", prepared).split())
        if not prepared:
            return DateReading(None, "empty")
        if prepared.isdigit() and len(prepared) not in (4, 8):
            raise _Refused(f"unreadable: bare number {prepared!r}")
        fields = _read_iso(prepared) or _read_words(prepared)
        return _instant(fields, default, named, hint)
    except _Refused as refused:
        return DateReading(None, str(refused))
    except (ValueError, OverflowError) as exc:
        return DateReading(None, f"invalid-date: {exc}")
