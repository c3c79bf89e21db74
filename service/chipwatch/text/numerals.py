"""Numbers as news writes them, read to a value or refused as ambiguous (pure: no I/O).

Three spellings, each with a regular-expression fragment that finds it and a reader that gives its value:

* digits with separators (:data:`DIGITS`, :func:`read_digits`): thousands grouped with a comma, a dot, an
  apostrophe or a space (any width: NFKC makes the no-break and narrow no-break spaces plain ones), the
  Indian lakh grouping (``1,20,000``), a decimal point or a decimal comma;
* Chinese numerals (:data:`CHINESE`, :func:`read_chinese`): ``一百二十``, ``两千``, ``三千万``, ``零点五``;
* English number words (:data:`ENGLISH`, :func:`read_english`): ``five hundred``, ``twenty-five``.

A reader returns ``None`` for a spelling that does not say one number: ``1.200`` (1,200 in Germany, 1.2 in
Britain), ``2025,100`` (a year and a number, or a decimal), ``1,2,3``, ``hundred`` without a count.
The fragments expect text already passed through :func:`chipwatch.text.normalize.normalize_text`.
"""

from __future__ import annotations

import re

__all__ = ["CHINESE", "DIGITS", "ENGLISH", "read_chinese", "read_digits", "read_english"]

# ---------------------------------------------------------------------------------------------------
# Digits

DIGITS = (
    # groups of three after a space ("1 200", "1 234,5"); the lookahead stops "1 2000" reading as "1 200"
    r"\d{1,3}(?: \d{3})+(?:[.,]\d+)?(?!\d)"
    # everything else: digits joined by commas, dots and apostrophes, checked by read_digits
    r"|\d+(?:[,.']\d+)*"
)
"""A figure written in digits: the separators are checked by :func:`read_digits`."""

_SEPARATOR = re.compile(r"[ ,.']")


def _grouped(groups: list[str]) -> bool:
    """Do ``groups`` (split on one grouping mark) form a thousands-grouped integer?"""
    head, rest = groups[0], groups[1:]
    if not 1 <= len(head) <= 3 or head.startswith("0"):
        return False
    return all(len(g) == 3 for g in rest)


def _lakh(groups: list[str]) -> bool:
    """``1,20,000`` and ``12,34,567``: the Indian grouping, two digits at a time before the last three."""
    head, middle, last = groups[0], groups[1:-1], groups[-1]
    return (
        len(groups) >= 3
        and 1 <= len(head) <= 2
        and not head.startswith("0")
        and all(len(g) == 2 for g in middle)
        and len(last) == 3
    )


def read_digits(token: str) -> float | None:
    """The value of a figure written in digits, or ``None`` when its separators do not say one value.

    - no separator: ``1200``;
    - one mark repeated, or a space: thousands groups (``1,200,000``, ``1.200.000``, ``1'200``,
      ``1 200``; commas also in the lakh grouping ``1,20,000``);
    - two different marks: the last one, written once, is the decimal mark (``1,234.5``, ``1.234,5``,
      ``1 234,5``, ``1'234.5``);
    - a single comma: thousands before three digits (``1,200``), a decimal comma otherwise (``1,5``,
      ``12,34``) and after a lone zero (``0,500``);
    - a single dot: a decimal point, except before exactly three digits after 1 to 3 digits other than
      ``0`` (``1.200``, ``2.500``): both readings are in use, so no value.
    """
    marks = _SEPARATOR.findall(token)
    parts = _SEPARATOR.split(token)
    if not marks:
        return float(token)
    if len(set(marks)) == 2:
        decimal, grouping = marks[-1], marks[0]
        if marks.count(decimal) != 1 or decimal in (" ", "'"):
            return None
        groups = parts[:-1]
        if not (_grouped(groups) or (grouping == "," and _lakh(groups))):
            return None
        return float("".join(groups) + "." + parts[-1])
    if len(set(marks)) > 2:
        return None
    (mark,) = set(marks)
    if len(marks) > 1 or mark in (" ", "'"):
        if _grouped(parts) or (mark == "," and _lakh(parts)):
            return float("".join(parts))
        return None
    head, tail = parts
    if mark == ",":
        if len(tail) == 3 and head != "0":
            return float(head + tail) if _grouped(parts) else None  # "2025,100": a year, then a number
        return float(f"{head}.{tail}")
    if len(tail) == 3 and head != "0" and len(head) <= 3:
        return None  # "1.200": a thousand and two hundred, or one point two
    return float(f"{head}.{tail}")


# ---------------------------------------------------------------------------------------------------
# Chinese numerals

_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
              "八": 8, "九": 9}
_CN_SMALL = {"十": 10, "百": 100, "千": 1000}
_CN_LARGE = {"万": 10_000, "亿": 100_000_000}

CHINESE = (
    # Not after 几/数/上/好/近 ("几十", "数百", "上千": an order of magnitude, not a number), 第 (an ordinal)
    # or the first character of a word that ends in 一 (统一, 唯一, 之一, 同一, 逐一, 单一, 划一, 均一, 万一).
    r"(?<![几数上好近第余多统唯之同逐单划均万])"
    r"[零〇一二两三四五六七八九十]"
    # 千 before 瓦 or 兆瓦 is the unit's prefix (千瓦 kW, 千兆瓦 GW), not part of the number
    r"(?:[零〇一二两三四五六七八九十百万亿]|千(?!瓦|兆瓦))*"
    r"(?:点[零〇一二三四五六七八九]+(?:[万亿])?)?"
)
"""A number written in Chinese numerals, with 万 and 亿 inside it (``一百二十万``)."""


def _chinese_section(text: str) -> int | None:
    """Value of a numeral below 10,000 (``一千二百``, ``二十五``, ``十``, ``一百零五``)."""
    total, digit, last_unit = 0, None, 100_000
    for ch in text:
        if ch in _CN_DIGITS:
            value = _CN_DIGITS[ch]
            # Two digits in a row ("一二", "二〇二六") spell digits, not a number; only 零 after a unit
            # marks a gap ("一百零五").
            if digit is not None and not (digit == 0 and last_unit < 100_000 and value != 0):
                return None
            digit = value
        else:
            unit = _CN_SMALL[ch]
            if unit >= last_unit or (digit is None and (unit != 10 or total)):
                return None  # "百十", "一百十": a unit without its digit (only a leading 十 has none)
            total += (1 if digit is None else digit) * unit
            digit, last_unit = None, unit
    if digit:
        total += digit
    return total


def read_chinese(text: str) -> float | None:
    """The value of a Chinese numeral (``一千二百`` 1200, ``两百亿`` 2e10, ``零点五`` 0.5), or ``None``."""
    whole, _, fraction = text.partition("点")
    scale = 1
    if fraction and fraction[-1] in _CN_LARGE:
        fraction, scale = fraction[:-1], _CN_LARGE[fraction[-1]]
    total, pending = 0, whole
    # Split at 亿 then 万, highest first ("三千万" = 3000 x 万, "一亿二千万" = 1 x 亿 + 2000 x 万).
    for mark in ("亿", "万"):
        if mark in pending:
            head, _, pending = pending.partition(mark)
            if mark in pending or not head:
                return None
            value = read_chinese(head) if "万" in head else _chinese_section(head)
            if value is None:
                return None
            total += int(value) * _CN_LARGE[mark]
    if pending:
        rest = _chinese_section(pending)
        if rest is None:
            return None
        total += rest
    if fraction:
        digits = "".join(str(_CN_DIGITS[ch]) for ch in fraction)
        return float(f"{total}.{digits}") * scale
    return float(total) * scale


# ---------------------------------------------------------------------------------------------------
# English number words

_EN_ONES = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}
_EN_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
            "ninety": 90}
_EN_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000,
              "trillion": 1_000_000_000_000}


def _words(words) -> str:
    return "|".join(sorted(words, key=len, reverse=True))


_EN_COUNT = rf"(?:{_words(_EN_TENS)})(?:-(?:{_words(_EN_ONES)}))?|(?:{_words(_EN_ONES)})"
ENGLISH = (
    rf"(?<![A-Za-z\-])(?i:(?:{_EN_COUNT})(?:[ -](?:{_words(_EN_SCALES)})(?: and(?= ))?|[ -](?:{_EN_COUNT}))*)"
    r"(?![A-Za-z])"
)
"""A number in English words that starts with a count ("five hundred", never "hundred" alone); "and" only
after a scale word ("one hundred and twenty"), so "one and two" stays two numbers."""


def read_english(text: str) -> float | None:
    """The value of English number words (``five hundred`` 500, ``twenty-five`` 25), or ``None``."""
    total, current, seen_scale = 0, None, 10**15
    for word in re.split(r"[ -]+", text.lower()):
        if word == "and":
            continue
        if word in _EN_ONES or word in _EN_TENS:
            value = _EN_ONES.get(word, _EN_TENS.get(word))
            if current is not None and (current % 100 >= 20 and value >= 10 or current % 100 < 20
                                        and current % 100 != 0):
                return None  # "one two", "twenty thirty": a list, not a number
            current = (current or 0) + value
        else:
            scale = _EN_SCALES[word]
            if current is None:
                return None
            if scale == 100:
                if current >= 100:
                    return None
                current *= 100
            else:
                if scale >= seen_scale:
                    return None
                total += current * scale
                current, seen_scale = None, scale
    return float(total + (current or 0))
