"""Each spelling of a number read on its own: digits with separators, Chinese numerals, English words."""

from __future__ import annotations

import pytest

from chipwatch.text.numerals import read_chinese, read_digits, read_english


@pytest.mark.parametrize(
    ("token", "value"),
    [
        ("1200", 1200.0),
        ("1,200", 1200.0),
        ("1,200,000", 1_200_000.0),
        ("1.200.000", 1_200_000.0),
        ("1'200", 1200.0),
        ("1 200", 1200.0),
        ("1 200 000", 1_200_000.0),
        ("1,20,000", 120_000.0),
        ("1,234.5", 1234.5),
        ("1.234,5", 1234.5),
        ("1 234,5", 1234.5),
        ("1'234.5", 1234.5),
        ("1,5", 1.5),
        ("12,34", 12.34),
        ("0,500", 0.5),
        ("0.500", 0.5),
        ("1.2", 1.2),
        ("1234.567", 1234.567),
        # no single reading
        ("1.200", None),
        ("999.999", None),
        ("2025,100", None),
        ("1,2,3", None),
        ("1.2.3", None),
        ("1,234,5", None),
        ("1'2", None),
        ("01,200", None),
        ("1 234 5", None),
        ("1.234'5", None),
    ],
)
def test_digits(token: str, value: float | None) -> None:
    assert read_digits(token) == value


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("十", 10.0),
        ("十五", 15.0),
        ("二十", 20.0),
        ("一百", 100.0),
        ("一百零五", 105.0),
        ("一千二百", 1200.0),
        ("一千两百", 1200.0),
        ("两千", 2000.0),
        ("十万", 100_000.0),
        ("一百二十万", 1_200_000.0),
        ("三千万", 30_000_000.0),
        ("五亿", 500_000_000.0),
        ("两百亿", 20_000_000_000.0),
        ("一亿二千万", 120_000_000.0),
        ("一万亿", 1e12),
        ("零点五", 0.5),
        ("一点二", 1.2),
        ("一点二万", 12_000.0),
        ("十点五", 10.5),
        ("一二", None),
        ("二〇二六", None),
        ("百十", None),
        ("一亿亿", None),
    ],
)
def test_chinese(text: str, value: float | None) -> None:
    assert read_chinese(text) == value


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("one", 1.0),
        ("twelve", 12.0),
        ("twenty-five", 25.0),
        ("five hundred", 500.0),
        ("twelve hundred", 1200.0),
        ("one hundred and twenty", 120.0),
        ("one thousand two hundred", 1200.0),
        ("two billion", 2e9),
        ("Three Million", 3e6),
        ("one two", None),
        ("twenty thirty", None),
        ("one hundred hundred", None),
        ("one million one billion", None),
    ],
)
def test_english(text: str, value: float | None) -> None:
    assert read_english(text) == value
