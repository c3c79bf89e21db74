"""Quantities in English and Chinese text, their units and conversions."""

from __future__ import annotations

import json
import typing

import pytest

from chipwatch.paths import SCHEMA_DIR
from chipwatch.signals.definition import NumberBound, Unit
from chipwatch.text.normalize import normalize_text
from chipwatch.text.numbers import (
    BOUND_UNITS,
    Quantity,
    convert,
    extract_quantities,
    quantity_matches,
)


def only(text: str) -> Quantity:
    found = extract_quantities(text)
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize(
    ("text", "value", "unit"),
    [
        # power
        ("100MW", 100, "MW"),
        ("100 MW", 100, "MW"),
        ("100兆瓦", 100, "MW"),
        ("5 megawatts", 5, "MW"),
        ("0.1 GW", 0.1, "GW"),
        ("0.1吉瓦", 0.1, "GW"),
        ("1 gigawatt", 1, "GW"),
        ("2千兆瓦", 2, "GW"),
        ("5 kW", 5, "kW"),
        ("5千瓦", 5, "kW"),
        ("3 kilowatts", 3, "kW"),
        ("700 W", 700, "W"),
        ("700瓦", 700, "W"),
        ("550 watts", 550, "W"),
        # throughput and latency
        ("1,459 tok/s", 1459, "tok/s"),
        ("535 tokens/s", 535, "tok/s"),
        ("694 tokens per second", 694, "tok/s"),
        ("169 token/s", 169, "tok/s"),
        ("295 tokens/秒", 295, "tok/s"),
        ("100 tok/s/user", 100, "tok/s/user"),
        ("1459 tokens/s per user", 1459, "tok/s/user"),
        ("85,400 tok/s/kW", 85400, "tok/s/kW"),
        ("85,400 tokens per second per kilowatt", 85400, "tok/s/kW"),
        ("8.54万tok/s/kW", 85400, "tok/s/kW"),
        ("14 ms", 14, "ms"),
        ("21毫秒", 21, "ms"),
        ("14 milliseconds", 14, "ms"),
        # ratios
        ("104.3x", 104.3, "x"),
        ("104.3×", 104.3, "x"),
        ("104.3倍", 104.3, "x"),
        ("30 times", 30, "x"),
        ("10X", 10, "x"),
        # money: US dollars
        ("$20 billion", 20e9, "USD"),
        ("USD 20 billion", 20e9, "USD"),
        ("20 billion dollars", 20e9, "USD"),
        ("US$20bn", 20e9, "USD"),
        ("$20m", 20e6, "USD"),
        ("20亿美元", 2e9, "USD"),
        ("200亿美元", 20e9, "USD"),
        ("20多亿美元", 2e9, "USD"),
        # money: renminbi
        ("CNY 2 billion", 2e9, "CNY"),
        ("20亿元", 2e9, "CNY"),
        ("200亿元人民币", 20e9, "CNY"),
        ("2 billion yuan", 2e9, "CNY"),
        ("¥2 billion", 2e9, "CNY"),
        ("人民币20亿元", 2e9, "CNY"),
        ("4,499元", 4499, "CNY"),
        ("1.5万亿元", 1.5e12, "CNY"),
    ],
)
def test_extracts_value_and_canonical_unit(text: str, value: float, unit: str) -> None:
    q = only(text)
    assert q.unit == unit
    assert q.value == pytest.approx(value, rel=1e-12)
    assert q.raw == text


def test_figures_inside_english_and_chinese_sentences() -> None:
    text = "OpenAI的墨西哥辣椒芯片部署达到100兆瓦，峰值1,459 tok/s，是GB200的104.3倍"
    found = [(q.value, q.unit, q.raw) for q in extract_quantities(text)]
    assert found == [(100.0, "MW", "100兆瓦"), (1459.0, "tok/s", "1,459 tok/s"), (104.3, "x", "104.3倍")]

    text = "NVIDIA paid $20 billion for Groq; Jalapeño peaks near 700 W but sustains under 550 W."
    found = [(q.value, q.unit) for q in extract_quantities(text)]
    assert found == [(20e9, "USD"), (700.0, "W"), (550.0, "W")]


def test_spans_and_raw_refer_to_the_original_text() -> None:
    # Full-width digits and the ㎿ sign are normalised for reading, but spans still index the input.
    text = "目标：１００㎿ by year end"
    q = only(text)
    assert (q.value, q.unit) == (100.0, "MW")
    assert q.raw == "１００㎿"
    assert text[q.span[0] : q.span[1]] == "１００㎿"

    text = "Jalapen\u0303o hits 104.3x"  # decomposed ñ before the figure shifts offsets
    q = only(text)
    assert text[q.span[0] : q.span[1]] == "104.3x"


def test_ranges_give_both_ends() -> None:
    assert [(q.value, q.unit) for q in extract_quantities("2.7–4.1倍")] == [(2.7, "x"), (4.1, "x")]
    assert [(q.value, q.unit) for q in extract_quantities("1.5 to 1.9x")] == [(1.5, "x"), (1.9, "x")]
    assert [(q.value, q.unit) for q in extract_quantities("1.5x to 1.9x")] == [(1.5, "x"), (1.9, "x")]
    assert [(q.value, q.unit) for q in extract_quantities("30%至60%")] == []


@pytest.mark.parametrize(
    "text",
    [
        "85,400",  # a bare number has no unit
        "the GB200 NVL72 rack",  # digits glued to letters are a name
        "DeepSeek V4 Pro",
        "100 kWh",  # energy, not power
        "20兆瓦时",
        "100 mW",  # milliwatts: never read as a million watts
        "1000 tok/s/GPU",  # a per-device rate is not a plain tok/s figure
        "8xH100",
        "多元化的元器件",
        "20亿",  # a multiplier without a currency or unit
    ],
)
def test_not_quantities(text: str) -> None:
    assert extract_quantities(text) == []


def test_compound_throughput_is_not_plain_tok_s() -> None:
    q = only("about 85,400 tok/s/kW on GPT-OSS 120B")
    assert q.unit == "tok/s/kW"
    assert not quantity_matches(q, {"unit": "tok/s", "gte": 1})
    assert not quantity_matches(q, {"unit": "kW", "gte": 1})


@pytest.mark.parametrize(
    ("text", "bound", "expected"),
    [
        ("100 MW", {"unit": "MW", "gte": 100}, True),
        ("100MW", {"unit": "MW", "gt": 100}, False),
        ("0.1 GW", {"unit": "MW", "gte": 100}, True),
        ("0.1吉瓦", {"unit": "MW", "gte": 100}, True),
        ("100,000 kW", {"unit": "MW", "gte": 100}, True),
        ("99 MW", {"unit": "MW", "gte": 100}, False),
        ("99.9兆瓦", {"unit": "MW", "gte": 100}, False),
        ("1 GW", {"unit": "MW", "eq": 1000}, True),
        ("700 W", {"unit": "kW", "lt": 1}, True),
        ("1,200 W", {"unit": "kW", "lte": 1}, False),
        ("104.3x", {"unit": "x", "eq": 104.3}, True),
        ("104.3倍", {"unit": "x", "gte": 100, "lte": 110}, True),
        ("30 times", {"unit": "x", "gte": 27, "lte": 33}, True),
        ("14毫秒", {"unit": "ms", "lt": 21}, True),
        ("1459 tok/s", {"unit": "tok/s", "gte": 1000}, True),
        ("1459 tok/s", {"unit": "tok/s/user", "gte": 1000}, False),
        ("20亿美元", {"unit": "USD", "eq": 2e9}, True),
        ("20亿美元", {"unit": "CNY", "gte": 1}, False),  # currencies do not convert
        ("20亿元", {"unit": "USD", "gte": 1}, False),
        ("200亿元人民币", {"unit": "CNY", "gte": 10e9}, True),
        ("100 MW", {"unit": "x", "gte": 1}, False),  # different dimensions
    ],
)
def test_quantity_matches(text: str, bound: dict, expected: bool) -> None:
    q = only(text)
    assert quantity_matches(q, bound) is expected
    assert quantity_matches(q, NumberBound(**bound)) is expected


def test_convert() -> None:
    assert convert(0.1, "GW", "MW") == pytest.approx(100.0)
    assert convert(700, "W", "kW") == pytest.approx(0.7)
    assert convert(5, "MW", "MW") == 5
    assert convert(1, "USD", "CNY") is None
    assert convert(1, "x", "MW") is None


def test_normalize_text_folds_width_accents_and_typography() -> None:
    assert normalize_text("ＧＢ３００") == "GB300"
    assert normalize_text("Jalapeño") == "Jalapeno"
    assert normalize_text("Jalapen\u0303o") == "Jalapeno"
    assert normalize_text("couldn’t — GPT‑OSS") == "couldn't - GPT-OSS"
    assert normalize_text("英伟达") == "英伟达"
    # Kana keep their voicing marks: only Latin letters lose accents.
    assert normalize_text("ガ") == "ガ"


def test_bound_units_agree_with_schema_and_model() -> None:
    schema = json.loads((SCHEMA_DIR / "signal.schema.json").read_text(encoding="utf-8"))
    assert tuple(schema["$defs"]["number"]["properties"]["unit"]["enum"]) == BOUND_UNITS
    assert typing.get_args(Unit) == BOUND_UNITS
