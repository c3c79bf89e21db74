"""Quantities with units in English and Chinese news text (pure: no I/O).

``extract_quantities`` finds figures such as "100 MW", "1 200 MW", "100兆瓦", "一百二十万千瓦", "0.1 GW",
"1,459 tok/s", "104.3x", "104.3倍", "$20 billion", "20亿美元", "五亿美元" or "200亿元人民币" and returns them
with a canonical unit; a figure that could be read two ways is not returned.
``quantity_matches`` checks one against a ``number`` bound of the signal language, converting power units
(W, kW, MW, GW) into each other; other units, currencies included, compare only with themselves.
Text is read through ``chipwatch.text.normalize`` first, the normalisation the phrase matcher uses.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from chipwatch.text.normalize import map_span, normalize_with_offsets
from chipwatch.text.numerals import CHINESE, DIGITS, ENGLISH, read_chinese, read_digits, read_english

__all__ = [
    "BOUND_UNITS",
    "POWER_UNITS_W",
    "Quantity",
    "Unit",
    "convert",
    "extract_from_normalized",
    "extract_quantities",
    "quantity_matches",
    "unit_family",
]

Unit = Literal["MW", "GW", "kW", "W", "tok/s", "tok/s/user", "ms", "x", "USD", "CNY"]
BOUND_UNITS: tuple[Unit, ...] = get_args(Unit)
"""Units a ``number`` condition may name (the enum of ``schema/signal.schema.json``)."""

POWER_UNITS_W: dict[str, float] = {"W": 1.0, "kW": 1e3, "MW": 1e6, "GW": 1e9}
"""Watts per unit: the one dimension whose units convert into each other."""


@dataclass(frozen=True, slots=True)
class Quantity:
    """A figure read from text.

    ``value`` is in ``unit`` with multipliers applied (20亿美元 -> 2e9, USD). ``unit`` is one of
    ``BOUND_UNITS`` or a compound throughput unit (``tok/s/kW``, ``tok/s/MW``) that no bound names but
    that must not be mistaken for plain ``tok/s``. ``raw`` is the matched text and ``span`` its
    ``(start, end)`` offsets, both in the text given to ``extract_quantities``. Both ends of a range
    ("1.5 to 1.9x") are returned, each with the span of the whole range.
    """

    value: float
    unit: str
    raw: str
    span: tuple[int, int]


def unit_family(unit: str) -> str:
    """Units that convert into each other share a family (``power``); every other unit is its own."""
    return "power" if unit in POWER_UNITS_W else unit


# ---------------------------------------------------------------------------------------------------
# The quantity pattern
# ---------------------------------------------------------------------------------------------------

# A figure: digits with separators, Chinese numerals or English number words (chipwatch.text.numerals
# reads each). Digits are not read after a letter, a digit or a separator, so the 200 of "GB200" and the
# 4 of "V4" are not figures, and nothing is read from the middle of a malformed "1,2,3". A comma blocks a
# figure only after a digit, a letter or a point: the Chinese comma, normalised to ",", often opens a
# clause with its figure ("投运，300兆瓦").
_NUM_START = r"(?<![0-9A-Za-z.'])(?<![0-9A-Za-z.],)"
_DIGIT_NUM = rf"{_NUM_START}(?:{DIGITS})"
_RANGE_SEP = r"\s*(?:-|~|to|至|到)\s*"
_APPROX = r"(?:多|余)?"  # "20多亿", "100余兆瓦": more than the figure; the figure is kept
# A unit follows its figure after spaces or joined by a hyphen ("a 100-MW plant").
_JOIN = r"(?P<{tag}join>-|\s*)"

_CJK_MULTIPLIERS: dict[str, float] = {
    "万亿": 1e12,
    "千亿": 1e11,
    "百亿": 1e10,
    "十亿": 1e9,
    "亿": 1e8,
    "千万": 1e7,
    "百万": 1e6,
    "十万": 1e5,
    "万": 1e4,
    "千": 1e3,
}
_WORD_MULTIPLIERS: dict[str, float] = {
    "thousand": 1e3,
    "million": 1e6,
    "billion": 1e9,
    "trillion": 1e12,
}
# Abbreviations are only trusted next to a currency ("$20bn", "20m dollars"): next to a physical unit an
# "m" or "k" is a metric prefix ("100 mW" is milliwatts, not a million watts).
_MONEY_ABBREVIATIONS: dict[str, float] = {
    "k": 1e3,
    "m": 1e6,
    "mn": 1e6,
    "mln": 1e6,
    "b": 1e9,
    "bn": 1e9,
    "tn": 1e12,
}


def _alternation(words: list[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


_CJK_MULT = _alternation(list(_CJK_MULTIPLIERS))
_WORD_MULT = rf"(?i:{_alternation(list(_WORD_MULTIPLIERS))})(?![A-Za-z])"
_MONEY_MULT = rf"{_CJK_MULT}|{_WORD_MULT}|(?i:{_alternation(list(_MONEY_ABBREVIATIONS))})(?![A-Za-z])"
_GENERAL_MULT = rf"{_CJK_MULT}|{_WORD_MULT}"

_TOK = r"(?i:tok(?:en)?s?\s*/\s*s(?:ec(?:ond)?)?)"
_TOK_WORDS = r"(?i:tokens?\s+per\s+second)"
_PER = r"(?:\s*/\s*|\s+(?i:per)\s+)"

# (pattern, canonical unit), longest and most specific first: alternation takes the first that fits.
_UNIT_SPECS: list[tuple[str, str]] = [
    (rf"(?:{_TOK}|{_TOK_WORDS}){_PER}(?i:user)s?(?![A-Za-z])", "tok/s/user"),
    (rf"(?:{_TOK}|{_TOK_WORDS}){_PER}(?:kW|KW|(?i:kilowatts?))(?![A-Za-z])", "tok/s/kW"),
    (rf"(?:{_TOK}|{_TOK_WORDS}){_PER}(?:MW|(?i:megawatts?))(?![A-Za-z])", "tok/s/MW"),
    # "tok/s/GPU" and the like are per-device rates: refused rather than read as tok/s.
    (rf"{_TOK}(?![A-Za-z/])|{_TOK_WORDS}(?![A-Za-z])|(?i:tokens?)\s*/\s*秒", "tok/s"),
    (r"GW(?![A-Za-z])|千兆瓦(?!时)|吉瓦(?!时)|(?i:gigawatts?)(?![A-Za-z])", "GW"),
    (r"MW(?![A-Za-z])|兆瓦(?!时)|(?i:megawatts?)(?![A-Za-z])", "MW"),
    (r"(?:kW|KW)(?![A-Za-z])|千瓦(?!时)|(?i:kilowatts?)(?![A-Za-z])", "kW"),
    (r"W(?![A-Za-z])|瓦特?(?!时)|(?i:watts?)(?![A-Za-z])", "W"),
    (r"ms(?![A-Za-z])|毫秒|(?i:milliseconds?)(?![A-Za-z])", "ms"),
    # "x" and "times" are never joined by a hyphen ("GPT-4-x" names no ratio); "3-fold" is English
    (r"(?<!-)[xX×](?![A-Za-z0-9])|倍|(?<!-)(?i:times)(?![A-Za-z])|(?i:fold)(?![A-Za-z])", "x"),
]

_USD_PREFIX = r"(?i:US\$|USD|US\s+dollars?)|\$"
_CNY_PREFIX = r"(?i:CNY|RMB)|¥|人民币"
_USD_SUFFIX = r"美元|美金|(?i:US\s+dollars?|dollars?|USD)(?![A-Za-z])"
_CNY_SUFFIX = r"元人民币|人民币|元(?!器|件|素)|(?i:yuan|CNY|RMB)(?![A-Za-z])"


def _num_range(tag: str, number: str, *, between: bool = False) -> str:
    """A figure or a range of two ("100-200", "100至200"; with ``between``, "between 100 and 200"),
    groups ``<tag>a`` and ``<tag>b``."""
    if between:
        start, sep = rf"(?P<{tag}bw>(?i:between)\s+)?", rf"(?({tag}bw)\s+(?i:and)\s+|{_RANGE_SEP})"
    else:
        start, sep = "", _RANGE_SEP
    return rf"{start}(?P<{tag}a>{number})(?:{sep}(?P<{tag}b>{number}))?(?!\d){_APPROX}"


_UNIT_GROUPS = "|".join(f"(?P<u{i}>{pattern})" for i, (pattern, _unit) in enumerate(_UNIT_SPECS))


def _shapes(number: str, *, between: bool, prefix: bool) -> str:
    """The quantity shapes over figures written as ``number``:

    p: currency first       "$20 billion", "US$20bn", "USD 20 billion", "¥2 billion", "人民币20亿元"
    u: figure, unit         "100 MW", "0.1吉瓦", "1,459 tok/s", "104.3倍", "8.54万 tok/s/kW", "100-MW"
    s: figure, currency     "20 billion dollars", "20亿美元", "200亿元人民币", "two billion yuan"
    """
    shapes = []
    if prefix:
        shapes.append(
            rf"(?:(?P<pusd>{_USD_PREFIX})|(?P<pcny>{_CNY_PREFIX}))\s*{_num_range('p', _DIGIT_NUM)}"
            rf"(?:\s*(?P<pm>{_MONEY_MULT}){_APPROX})?(?:\s*(?:元|美元|(?i:dollars?)(?![A-Za-z])))?"
        )
    shapes.append(
        rf"{_num_range('u', number, between=between)}(?:\s*(?P<um>{_GENERAL_MULT}){_APPROX})??"
        rf"{_JOIN.format(tag='u')}(?:{_UNIT_GROUPS})"
    )
    shapes.append(
        rf"{_num_range('s', number, between=between)}\s*(?:(?P<sm>{_MONEY_MULT}){_APPROX}\s*)?"
        rf"(?:(?P<susd>{_USD_SUFFIX})|(?P<scny>{_CNY_SUFFIX}))"
    )
    return "|".join(shapes)


# Two scans. The first reads figures in digits and Chinese numerals; every shape starts with a digit, a
# numeral or a currency prefix, and testing that first lets most positions fail in one step.
_QUANTITY_START = r"(?=[\d$¥零〇一二两三四五六七八九十]|人民币|(?<![A-Za-z])(?i:us|cny|rmb))"
_QUANTITY_RE = re.compile(
    rf"{_QUANTITY_START}(?:{_shapes(rf'{_DIGIT_NUM}|{CHINESE}', between=False, prefix=True)})"
)
# The second reads English number words and "between X and Y" ranges. Checking each word start for them
# would double the cost of the first scan, so it runs only on text that names a unit such figures use.
_WORDED_RE = re.compile(
    r"(?<![A-Za-z])(?=(?i:between|zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
    r"|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty"
    r"|seventy|eighty|ninety)(?![a-z]))"
    rf"(?:{_shapes(rf'{_DIGIT_NUM}|{CHINESE}|{ENGLISH}', between=True, prefix=False)})"
)
_WORDED_HINTS = ("between", "watt", "dollar", "yuan", "token", "second", "mw", "gw", "kw", "fold", "美元",
                 "元", "瓦")


def _figure(text: str) -> float | None:
    """The value of one figure of a match, by how it is written; ``None`` when it is ambiguous."""
    if text[0].isdigit():
        return read_digits(text)
    if text[0].isascii():
        return read_english(text)
    return read_chinese(text)


def _readable(groups: dict[str, str | None], tag: str, unit: str) -> bool:
    """May this match be read at all? Some spellings are only trusted with some units."""
    first = groups[f"{tag}a"] or ""
    if first[0].isascii() and not first[0].isdigit() and unit == "x":
        return False  # "three times" is as often "on three occasions" as "3x"
    if not first[0].isascii() and len(first) == 1 and unit in ("USD", "CNY") and not groups.get(f"{tag}m"):
        return False  # "三元", "二元": words (ternary, binary) more often than sums of money
    if groups.get(f"{tag}join") == "-" and " " in first:
        return False  # "2 100-MW units": two units of 100 MW, or one of 2,100 MW
    return True


def _multiplier(word: str | None) -> float:
    if not word:
        return 1.0
    if word in _CJK_MULTIPLIERS:
        return _CJK_MULTIPLIERS[word]
    lowered = word.lower()
    return _WORD_MULTIPLIERS.get(lowered) or _MONEY_ABBREVIATIONS[lowered]


def _read_match(m: re.Match[str]) -> list[tuple[float, str, tuple[int, int]]]:
    """The figures of one match (two for a range), or none when a figure is ambiguous."""
    groups = m.groupdict()
    if groups.get("pa") is not None:
        tag, unit = "p", ("USD" if groups["pusd"] else "CNY")
    elif groups["ua"] is not None:
        tag = "u"
        unit = next(u for i, (_p, u) in enumerate(_UNIT_SPECS) if groups[f"u{i}"] is not None)
    else:
        tag, unit = "s", ("USD" if groups["susd"] else "CNY")
    if not _readable(groups, tag, unit):
        return []
    mult = _multiplier(groups[f"{tag}m"])
    values = [_figure(groups[part]) for part in (f"{tag}a", f"{tag}b") if groups[part] is not None]
    if any(v is None for v in values):
        return []  # one end of a range that cannot be read makes the whole range unreadable
    return [(v * mult, unit, m.span()) for v in values if v is not None]


def _quantities_in(norm: str) -> list[tuple[float, str, tuple[int, int]]]:
    """Scan normalised text; return ``(value, unit, span-in-normalised-text)`` triples in text order."""
    found = [q for m in _QUANTITY_RE.finditer(norm) for q in _read_match(m)]
    lowered = norm.lower()
    if not any(hint in lowered for hint in _WORDED_HINTS):
        return found
    worded = [(m.span(), _read_match(m)) for m in _WORDED_RE.finditer(norm)]
    if not worded:
        return found
    # A worded match covers the figures the first scan read inside it ("200 MW" of "between 100 and
    # 200 MW"): the longer reading wins, and an unreadable one still hides what it covers.
    spans = [span for span, _q in worded]
    kept = [q for q in found if not any(a <= q[2][0] < b for a, b in spans)]
    return sorted(kept + [q for _span, qs in worded for q in qs], key=lambda q: q[2][0])


def extract_quantities(text: str) -> list[Quantity]:
    """Every figure with a recognised unit in ``text``, in reading order.

    Units are normalised: MW/兆瓦/megawatt -> ``MW``; GW/吉瓦/千兆瓦/gigawatt -> ``GW``; kW/千瓦/kilowatt ->
    ``kW``; W/瓦/watt -> ``W``; tok/s, tokens/s, tokens per second -> ``tok/s``; tok/s/user, tokens/s per
    user -> ``tok/s/user``; ms/毫秒/milliseconds -> ``ms``; x/×/times/fold/倍 -> ``x``; $, US$, USD,
    dollars, 美元 -> ``USD``; CNY, RMB, ¥, yuan, 元, 人民币 -> ``CNY`` (in this domain ¥ is the renminbi).
    A unit may be joined to its figure by a hyphen ("a 100-MW plant"; never "x" or "times").
    Multipliers 万, 亿 (and their compounds), thousand/million/billion/trillion, and next to a currency
    k/m/mn/bn/b/tn are applied to ``value``.

    Figures are read in digits with any locale's grouping and decimal mark, in Chinese numerals
    (一千二百兆瓦, 五亿美元, 零点五吉瓦) and in English words (five hundred megawatts; not with x/times,
    and not before a bare "W"); see :mod:`chipwatch.text.numerals`. Ranges ("100-200 MW", "100至200兆瓦",
    "between 100 and 200 MW") give both ends. Nothing is returned for a figure whose spelling is
    ambiguous ("1.200 MW", "2025,100 MW"), for an order of magnitude (数百兆瓦, hundreds of megawatts), for
    a space-grouped figure with a hyphen-joined unit ("2 100-MW units"), for bare numbers without a unit,
    or for energy units (kWh, 兆瓦时).
    """
    norm, starts, ends = normalize_with_offsets(text)
    out: list[Quantity] = []
    for value, unit, span in _quantities_in(norm):
        a, b = map_span(span, starts, ends)
        out.append(Quantity(value=value, unit=unit, raw=text[a:b], span=(a, b)))
    return out


def extract_from_normalized(norm: str) -> list[Quantity]:
    """Like ``extract_quantities`` for text already passed through ``normalize_text``.

    Spans and ``raw`` then refer to ``norm``. The rule matcher uses this to normalise an item once.
    """
    return [Quantity(value=v, unit=u, raw=norm[a:b], span=(a, b)) for v, u, (a, b) in _quantities_in(norm)]


# ---------------------------------------------------------------------------------------------------
# Bounds
# ---------------------------------------------------------------------------------------------------


def convert(value: float, from_unit: str, to_unit: str) -> float | None:
    """``value`` in ``from_unit`` expressed in ``to_unit``; ``None`` when the units do not convert.

    Only power converts (W, kW, MW, GW); every other unit, each currency included, converts to itself.
    """
    if from_unit == to_unit:
        return value
    if from_unit in POWER_UNITS_W and to_unit in POWER_UNITS_W:
        return value * POWER_UNITS_W[from_unit] / POWER_UNITS_W[to_unit]
    return None


def _bound_value(bound: Any, key: str) -> Any:
    return bound.get(key) if isinstance(bound, Mapping) else getattr(bound, key, None)


def _close(a: float, b: float) -> bool:
    # Unit conversion leaves float noise (0.1 GW -> 100.00000000000001 MW): compare with a relative epsilon.
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def quantity_matches(q: Quantity, bound: Any) -> bool:
    """Does ``q`` satisfy every bound of ``bound`` once converted to the bound's unit?

    ``bound`` is a ``NumberBound`` or a mapping with ``unit`` and any of ``gte``, ``gt``, ``lte``,
    ``lt``, ``eq``. A quantity in a unit that does not convert to the bound's unit never matches.
    """
    unit = _bound_value(bound, "unit")
    value = convert(q.value, q.unit, unit) if unit else None
    if value is None:
        return False
    checks = {
        "gte": lambda b: value > b or _close(value, b),
        "gt": lambda b: value > b and not _close(value, b),
        "lte": lambda b: value < b or _close(value, b),
        "lt": lambda b: value < b and not _close(value, b),
        "eq": lambda b: _close(value, b),
    }
    for key, check in checks.items():
        b = _bound_value(bound, key)
        if b is not None and not check(float(b)):
            return False
    return True
