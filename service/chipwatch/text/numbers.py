"""Quantities with units in English and Chinese news text (pure: no I/O).

``extract_quantities`` finds figures such as "100 MW", "100兆瓦", "0.1 GW", "1,459 tok/s", "104.3x",
"104.3倍", "$20 billion", "20亿美元" or "200亿元人民币" and returns them with a canonical unit.
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

# A number: "1,459" (thousands separators), "104.3", "100". Not preceded by a letter or digit, so the
# 200 of "GB200" and the 4 of "V4" are not read as figures.
_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_NUM_START = r"(?<![0-9A-Za-z.,])"
_RANGE_SEP = r"\s*(?:-|~|to|至|到)\s*"
_APPROX = r"(?:多|余)?"  # "20多亿", "100余兆瓦": more than the figure; the figure is kept

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
    (r"[xX×](?![A-Za-z0-9])|倍|(?i:times|fold)(?![A-Za-z])", "x"),
]

_USD_PREFIX = r"(?i:US\$|USD|US\s+dollars?)|\$"
_CNY_PREFIX = r"(?i:CNY|RMB)|¥|人民币"
_USD_SUFFIX = r"美元|美金|(?i:US\s+dollars?|dollars?|USD)(?![A-Za-z])"
_CNY_SUFFIX = r"元人民币|人民币|元(?!器|件|素)|(?i:yuan|CNY|RMB)(?![A-Za-z])"


def _num_range(tag: str) -> str:
    return rf"{_NUM_START}(?P<{tag}a>{_NUM})(?:{_RANGE_SEP}(?P<{tag}b>{_NUM}))?(?!\d){_APPROX}"


_UNIT_GROUPS = "|".join(f"(?P<u{i}>{pattern})" for i, (pattern, _unit) in enumerate(_UNIT_SPECS))

# One pattern, three shapes, so each text is scanned once:
#   p: currency first       "$20 billion", "US$20bn", "USD 20 billion", "¥2 billion", "人民币20亿元"
#   u: figure, unit         "100 MW", "0.1吉瓦", "1,459 tok/s", "104.3倍", "8.54万 tok/s/kW"
#   s: figure, currency     "20 billion dollars", "20亿美元", "200亿元人民币", "2 billion yuan"
# Every shape starts with a digit or a currency prefix; testing that first lets most positions of a text
# fail in one step instead of entering each shape (about three times faster on news text).
_QUANTITY_START = r"(?=[\d$¥]|人民币|(?i:us|cny|rmb))"
_QUANTITY_RE = re.compile(
    rf"{_QUANTITY_START}(?:"
    rf"(?:(?P<pusd>{_USD_PREFIX})|(?P<pcny>{_CNY_PREFIX}))\s*{_num_range('p')}"
    rf"(?:\s*(?P<pm>{_MONEY_MULT}){_APPROX})?(?:\s*(?:元|美元|(?i:dollars?)(?![A-Za-z])))?"
    rf"|{_num_range('u')}\s*(?:(?P<um>{_GENERAL_MULT}){_APPROX}\s*)??(?:{_UNIT_GROUPS})"
    rf"|{_num_range('s')}\s*(?:(?P<sm>{_MONEY_MULT}){_APPROX}\s*)?"
    rf"(?:(?P<susd>{_USD_SUFFIX})|(?P<scny>{_CNY_SUFFIX}))"
    r")"
)


def _multiplier(word: str | None) -> float:
    if not word:
        return 1.0
    if word in _CJK_MULTIPLIERS:
        return _CJK_MULTIPLIERS[word]
    lowered = word.lower()
    return _WORD_MULTIPLIERS.get(lowered) or _MONEY_ABBREVIATIONS[lowered]


def _to_float(number: str) -> float:
    return float(number.replace(",", ""))


def _quantities_in(norm: str) -> list[tuple[float, str, tuple[int, int]]]:
    """Scan normalised text once; return ``(value, unit, span-in-normalised-text)`` triples."""
    found: list[tuple[float, str, tuple[int, int]]] = []
    for m in _QUANTITY_RE.finditer(norm):
        groups = m.groupdict()
        if groups["pa"] is not None:
            tag, unit = "p", ("USD" if groups["pusd"] else "CNY")
            mult = _multiplier(groups["pm"])
        elif groups["ua"] is not None:
            tag = "u"
            unit = next(u for i, (_p, u) in enumerate(_UNIT_SPECS) if groups[f"u{i}"] is not None)
            mult = _multiplier(groups["um"])
        else:
            tag, unit = "s", ("USD" if groups["susd"] else "CNY")
            mult = _multiplier(groups["sm"])
        for part in (f"{tag}a", f"{tag}b"):
            if groups[part] is not None:
                found.append((_to_float(groups[part]) * mult, unit, m.span()))
    return found


def extract_quantities(text: str) -> list[Quantity]:
    """Every figure with a recognised unit in ``text``, in reading order.

    Units are normalised: MW/兆瓦/megawatt -> ``MW``; GW/吉瓦/千兆瓦/gigawatt -> ``GW``; kW/千瓦/kilowatt ->
    ``kW``; W/瓦/watt -> ``W``; tok/s, tokens/s, tokens per second -> ``tok/s``; tok/s/user, tokens/s per
    user -> ``tok/s/user``; ms/毫秒/milliseconds -> ``ms``; x/×/times/倍 -> ``x``; $, US$, USD, dollars,
    美元 -> ``USD``; CNY, RMB, ¥, yuan, 元, 人民币 -> ``CNY`` (in this domain ¥ is the renminbi).
    Multipliers 万, 亿 (and their compounds), thousand/million/billion/trillion, and next to a currency
    k/m/mn/bn/b/tn are applied to ``value``. Bare numbers without a unit and energy units (kWh, 兆瓦时)
    are not returned. Chinese numerals written in characters (一百兆瓦) are not read.
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
