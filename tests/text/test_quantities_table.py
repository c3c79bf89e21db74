"""Every way English and Chinese news writes a quantity, with the value it means; ambiguity is no quantity.

Each row is ``(text, quantities)``: the figures ``extract_quantities`` must return, in reading order, as
``(value, unit)``. Power is compared in watts, so "2 GW" and "2000 MW" are the same answer. A range
gives both ends. An empty list means the text holds no quantity that can be read with confidence.
"""

from __future__ import annotations

import math

import pytest

from chipwatch.text.normalize import normalize_text
from chipwatch.text.numbers import (
    POWER_UNITS_W,
    convert,
    extract_from_normalized,
    extract_quantities,
    quantity_matches,
)

NNBSP, NBSP, THIN = "\u202f", "\u00a0", "\u2009"


def p(text: str, quantities: list[tuple[float, str]]) -> object:
    return pytest.param(text, quantities, id=text)


CASES = [
    # --- thousands separators of each script and locale ------------------------------------------------
    p("1,200 MW", [(1200, "MW")]),
    p("1,200MW", [(1200, "MW")]),
    p("1,200,000 W", [(1_200_000, "W")]),
    p("1 200 MW", [(1200, "MW")]),
    p(f"1{NNBSP}200 MW", [(1200, "MW")]),
    p(f"1{NBSP}200 MW", [(1200, "MW")]),
    p(f"1{THIN}200 MW", [(1200, "MW")]),
    p(f"1{NNBSP}200{NNBSP}000 W", [(1_200_000, "W")]),
    p("1 200 000 kW", [(1_200_000, "kW")]),
    p("1'200 MW", [(1200, "MW")]),
    p("1\u2019200 MW", [(1200, "MW")]),
    p("1.200.000 W", [(1_200_000, "W")]),
    p("1.234,5 MW", [(1234.5, "MW")]),
    p("1,234.5 MW", [(1234.5, "MW")]),
    p("1 234,5 MW", [(1234.5, "MW")]),
    p(f"1{NNBSP}234,5 MW", [(1234.5, "MW")]),
    p("1,20,000 W", [(120_000, "W")]),
    p("12,34,567 W", [(1_234_567, "W")]),
    p("1,20,000.5 W", [(120_000.5, "W")]),
    p("1'234.5 MW", [(1234.5, "MW")]),
    p("1.234.567,89 W", [(1_234_567.89, "W")]),
    p(f"1{NNBSP}234{NNBSP}567,89 W", [(1_234_567.89, "W")]),
    p("\u3000１２０ＭＷ", [(120, "MW")]),
    p("１，２００ＭＷ", [(1200, "MW")]),
    # a group of four digits is no thousands group: "in 2026 200 MW" is 200 MW
    p("in 2026 200 MW", [(200, "MW")]),
    # --- decimal commas where unambiguous (not three digits after the comma) ---------------------------
    p("1,5 GW", [(1.5, "GW")]),
    p("0,5 GW", [(0.5, "GW")]),
    p("12,34 MW", [(12.34, "MW")]),
    p("1,2345 MW", [(1.2345, "MW")]),
    p("0,500 GW", [(0.5, "GW")]),  # a number never starts with a 0 group
    p("10,5 MW", [(10.5, "MW")]),
    # --- decimal points ------------------------------------------------------------------------------
    p("1.2 GW", [(1.2, "GW")]),
    p("1.2GW", [(1.2, "GW")]),
    p("0.1吉瓦", [(0.1, "GW")]),
    p("104.3x", [(104.3, "x")]),
    p("0.500 GW", [(0.5, "GW")]),
    p("１．２ＧＷ", [(1.2, "GW")]),
    p("about 1.2 GW", [(1.2, "GW")]),
    # --- ambiguous forms yield no quantity -------------------------------------------------------------
    p("1.200 MW", []),  # 1,200 in Germany, 1.2 in Britain
    p("2.500 MW", []),
    p("10.000 MW", []),
    p("100.000 tok/s", []),
    p("1,234,5 MW", []),  # grouped, then a comma that is neither a group nor a decimal mark
    p("1.234.5 MW", []),
    p("1,234.567.8 MW", []),
    p("1,2345,678 W", []),
    p("in 2025,100 MW", []),  # a year and a figure, or 2025.1: no guess
    p("1'2 MW", []),
    p("01,200 MW", []),
    p("2 100-MW units", []),  # two units of 100 MW, or one of 2,100 MW
    p("hundred megawatts", []),
    p("one two megawatts", []),
    p("twenty thirty megawatts", []),
    p("three times", []),  # "on three occasions" as often as 3x
    p("GPT-4-x", []),
    p("第一兆瓦", []),
    p("统一兆瓦级", []),
    p("三元", []),
    p("二元结构", []),
    p("好几百兆瓦", []),
    p("近千兆瓦", []),
    p("1.2.3 MW", []),
    p("1,2,3 MW", []),
    p("several hundred MW", []),
    p("hundreds of megawatts", []),
    p("数百兆瓦", []),
    p("几十兆瓦", []),
    p("数万千瓦", []),
    p("上千兆瓦", []),
    # --- ranges: both ends --------------------------------------------------------------------------
    p("100-200 MW", [(100, "MW"), (200, "MW")]),
    p("100–200 MW", [(100, "MW"), (200, "MW")]),
    p("100 - 200 MW", [(100, "MW"), (200, "MW")]),
    p("100 to 200 MW", [(100, "MW"), (200, "MW")]),
    p("100~200兆瓦", [(100, "MW"), (200, "MW")]),
    p("100至200兆瓦", [(100, "MW"), (200, "MW")]),
    p("100到200兆瓦", [(100, "MW"), (200, "MW")]),
    p("100MW-200MW", [(100, "MW"), (200, "MW")]),
    p("1,000–1,200 MW", [(1000, "MW"), (1200, "MW")]),
    p("1.5-1.9x", [(1.5, "x"), (1.9, "x")]),
    p("between 100 and 200 MW", [(100, "MW"), (200, "MW")]),
    p("Between 1 and 2 GW", [(1, "GW"), (2, "GW")]),
    p("between 100 MW and 200 MW", [(100, "MW"), (200, "MW")]),
    p("between one and two gigawatts", [(1, "GW"), (2, "GW")]),
    p("one to two gigawatts", [(1, "GW"), (2, "GW")]),
    p("1,5-1,9 GW", [(1.5, "GW"), (1.9, "GW")]),
    p("100-1.200 MW", []),  # one unreadable end: no range
    p("1 000 to 1 200 MW", [(1000, "MW"), (1200, "MW")]),
    # --- units joined by a hyphen or written out ----------------------------------------------------
    p("a 100-MW plant", [(100, "MW")]),
    p("a 1.2-GW campus", [(1.2, "GW")]),
    p("a 100-megawatt plant", [(100, "MW")]),
    p("a 1.2-gigawatt campus", [(1.2, "GW")]),
    p("a 500\u2011kilowatt rack", [(500, "kW")]),
    p("100 megawatts", [(100, "MW")]),
    p("1.2 gigawatts", [(1.2, "GW")]),
    p("one gigawatt", [(1, "GW")]),
    p("two gigawatts", [(2, "GW")]),
    p("five hundred megawatts", [(500, "MW")]),
    p("Five Hundred Megawatts", [(500, "MW")]),
    p("twenty-five megawatts", [(25, "MW")]),
    p("one hundred and twenty megawatts", [(120, "MW")]),
    p("twelve hundred megawatts", [(1200, "MW")]),
    p("one thousand two hundred megawatts", [(1200, "MW")]),
    p("a one-gigawatt campus", [(1, "GW")]),
    p("two billion dollars", [(2e9, "USD")]),
    p("ten thousand tokens per second", [(10_000, "tok/s")]),
    p("3-fold", [(3, "x")]),
    p("a 10-ms stall", [(10, "ms")]),
    # --- full-width digits and letters --------------------------------------------------------------
    p("１２０ＭＷ", [(120, "MW")]),
    p("１２０ ＭＷ", [(120, "MW")]),
    p("１２０兆瓦", [(120, "MW")]),
    p("１２０㎿", [(120, "MW")]),
    # --- Chinese numerals and multipliers, with and without digits -----------------------------------
    p("一百兆瓦", [(100, "MW")]),
    p("十兆瓦", [(10, "MW")]),
    p("二十五兆瓦", [(25, "MW")]),
    p("一百二十兆瓦", [(120, "MW")]),
    p("一千二百兆瓦", [(1200, "MW")]),
    p("一千两百兆瓦", [(1200, "MW")]),
    p("两千兆瓦", [(2000, "MW")]),  # 两千 MW or 两 GW: the same power
    p("一百多兆瓦", [(100, "MW")]),
    p("零点五吉瓦", [(0.5, "GW")]),
    p("一点二吉瓦", [(1.2, "GW")]),
    p("十点五兆瓦", [(10.5, "MW")]),
    p("一百零五兆瓦", [(105, "MW")]),
    p("一千零五十兆瓦", [(1050, "MW")]),
    p("二〇〇兆瓦", []),  # digits read one by one (a year's spelling), not a number
    p("一点二万千瓦", [(12_000, "kW")]),
    p("一亿二千万美元", [(1.2e8, "USD")]),
    p("一万亿元", [(1e12, "CNY")]),
    p("二十多亿美元", [(2e9, "USD")]),
    p("一百至二百兆瓦", [(100, "MW"), (200, "MW")]),
    p("120万千瓦", [(1_200_000, "kW")]),
    p("12万千瓦", [(120_000, "kW")]),
    p("1.2万千瓦", [(12_000, "kW")]),
    p("一百二十万千瓦", [(1_200_000, "kW")]),
    p("十万千瓦", [(100_000, "kW")]),
    p("8.54万tok/s/kW", [(85_400, "tok/s/kW")]),
    p("20亿美元", [(2e9, "USD")]),
    p("五亿美元", [(5e8, "USD")]),
    p("十亿美元", [(1e9, "USD")]),
    p("三千万美元", [(3e7, "USD")]),
    p("二十亿元", [(2e9, "CNY")]),
    p("两百亿元人民币", [(2e10, "CNY")]),
    p("1.5万亿元", [(1.5e12, "CNY")]),
    p("100亿元", [(1e10, "CNY")]),
    p("104.3倍", [(104.3, "x")]),
    p("三倍", [(3, "x")]),
    # --- money with grouped thousands ---------------------------------------------------------------
    p("$1,200 million", [(1.2e9, "USD")]),
    p("$1 200 million", [(1.2e9, "USD")]),
    p("US$1.2 billion", [(1.2e9, "USD")]),
]


def _in_watts(value: float, unit: str) -> tuple[float, str]:
    if unit in POWER_UNITS_W:
        return value * POWER_UNITS_W[unit], "W"
    return value, unit


def _same(found: list[tuple[float, str]], expected: list[tuple[float, str]]) -> bool:
    if len(found) != len(expected):
        return False
    for (fv, fu), (ev, eu) in zip(found, expected, strict=True):
        (fv, fu), (ev, eu) = _in_watts(fv, fu), _in_watts(ev, eu)
        if fu != eu or not math.isclose(fv, ev, rel_tol=1e-9):
            return False
    return True


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_quantity_table(text: str, expected: list[tuple[float, str]]) -> None:
    found = [(q.value, q.unit) for q in extract_quantities(text)]
    assert _same(found, expected), found
    # the rule matcher reads normalised text: it must find the same figures
    from_normalised = [(q.value, q.unit) for q in extract_from_normalized(normalize_text(text))]
    assert _same(from_normalised, expected), from_normalised


@pytest.mark.parametrize(
    ("text", "raw"),
    [
        pytest.param("the 1,200 MW campus", "1,200 MW", id="comma"),
        pytest.param("the 1 200 MW campus", "1 200 MW", id="space"),
        pytest.param(f"the 1{NNBSP}200 MW campus", f"1{NNBSP}200 MW", id="narrow-nbsp"),
    ],
)
def test_span_covers_the_whole_figure(text: str, raw: str) -> None:
    (q,) = extract_quantities(text)
    assert q.raw == raw and text[q.span[0] : q.span[1]] == raw


def test_gigawatts_convert_to_megawatts() -> None:
    (q,) = extract_quantities("a 1.2 GW campus")
    assert math.isclose(convert(q.value, q.unit, "MW"), 1200)
    assert quantity_matches(q, {"unit": "MW", "gte": 1200, "lte": 1200})
    assert not quantity_matches(q, {"unit": "MW", "lt": 1200})


# The signal conditions: "lte: 500" must not fire on 1,200 MW, "gte: 1000" must.
@pytest.mark.parametrize(
    "text",
    [
        pytest.param("1,200 MW", id="comma"),
        pytest.param("1 200 MW", id="space"),
        pytest.param(f"1{NNBSP}200 MW", id="narrow-nbsp"),
        pytest.param("1.2 GW", id="gigawatts"),
        pytest.param("120万千瓦", id="wan-kilowatts"),
        pytest.param("一千二百兆瓦", id="chinese-numerals"),
    ],
)
def test_bounds_on_1200_megawatts(text: str) -> None:
    quantities = extract_quantities(text)
    assert quantities
    assert not any(quantity_matches(q, {"unit": "MW", "lte": 500}) for q in quantities)
    assert any(quantity_matches(q, {"unit": "MW", "gte": 1000}) for q in quantities)
