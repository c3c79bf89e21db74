"""Counts and sums in news text (pure): counted units ("10,000 B200 GPUs", "one million TPUs", "1万张"),
sums of money (USD and CNY from the quantity reader signals use; euros, pounds, Hong Kong dollars, yen
and won read here with the same numeral reader) and sums written without their currency ("估值200亿").
The sign "¥" is both the yen and the yuan: the item's words decide (:func:`yen_sign_currency`), and a sum
whose currency they leave open is not read at all, since an amount is never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chipwatch.candidates.textparts import Part
from chipwatch.text.numerals import CHINESE, DIGITS, ENGLISH, read_chinese, read_digits, read_english

_UNIT_NOUNS = (
    r"(?!(?i:gigawatts?|megawatts?|GW|MW|kW|percent|billion|million|times)\b)"
    # up to four words of name: "24,000 Nvidia GH200 Grace Hopper superchips"
    r"(?:[A-Za-z0-9][\w.-]*\s){0,4}?(?:GPUs?|chips?|accelerators?|TPUs?|LPUs?|NPUs?|XPUs?|APUs?|IPUs?|RDUs?|systems?|racks?"
    r"|servers?|cards?|units?|superchips?|processors?"
    # "20,000 B200s": a plural model designation counts its units
    r"|[A-Z][A-Za-z]{0,4}-?\d+[A-Za-z0-9]*s)\b"
)
_CN_COUNTERS = r"(?:张|颗|块|台|套|片)|卡"
_CN_NUMERAL_CHARS = "零〇一二两三四五六七八九十百千万亿"
_COUNT = re.compile(
    rf"(?<![\w.,])(?P<num>{DIGITS}|{ENGLISH})(?:\s*(?P<mult>thousand|million|billion))?\s+(?={_UNIT_NOUNS})"
    # "a 10,000-GPU cluster"
    rf"|(?<![\w.,])(?P<hnum>{DIGITS})-(?=(?:GPU|chip|TPU|accelerator|card|NPU)s?\b)"
    rf"|(?P<cnum>\d+(?:\.\d+)?|{CHINESE})(?P<cmult>万|亿|千)?(?P<counter>{_CN_COUNTERS})"
    # "哈尔滨万卡集群": a cluster of ten thousand cards, the size written without a numeral (not "上万卡",
    # "数千卡": about, more than; not "首个自研万卡集群", "国产万卡集群": a class of cluster, no count)
    rf"|(?<![\d{_CN_NUMERAL_CHARS}几数上近超逾余多的个研产])(?P<bare>万|千)卡(?=集群|规模|级)"
)
_CN_BARE = {"万": 1e4, "千": 1e3}
_MULT = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "万": 1e4, "亿": 1e8, "千": 1e3}


def _read_number(text: str) -> float | None:
    if text[0].isdigit():
        return read_digits(text)
    if text[0].isascii():
        return read_english(text)
    return read_chinese(text)


def counts(part: Part, a: int, b: int) -> list[tuple[float, int, int]]:
    """Counted units in ``norm[a:b]`` (see :func:`_counts`), read once per sentence."""
    return part.per_sentence("counts", a, b, lambda s, e: _counts(part, s, e))


def _counts(part: Part, a: int, b: int) -> list[tuple[float, int, int]]:
    """Counted units in ``norm[a:b]`` ("10,000 B200 GPUs", "one million TPUs", "1万张", "3万卡"):
    ``(count, start, end)`` in reading order. Years ("2026 chips") are not counts."""
    out = []
    for m in _COUNT.finditer(part.norm, a, b):
        if m.group("bare"):
            out.append((_CN_BARE[m.group("bare")], m.start(), m.end()))
            continue
        text = m.group("num") or m.group("hnum") or m.group("cnum")
        value = _read_number(text)
        if value is None:
            continue
        value *= _MULT.get(m.group("mult") or m.group("cmult") or "", 1.0)
        if m.group("num") and re.fullmatch(r"20\d\d", text):
            continue
        out.append((value, m.start(), m.end()))
    return out


_OTHER_MONEY = re.compile(
    rf"(?P<sym>€|£|₩|HK\$|S\$|A\$|C\$|NT\$|EUR\s?|GBP\s?|HKD\s?|JPY\s?|KRW\s?|SGD\s?|CHF\s?|CAD\s?"
    rf"|AUD\s?|TWD\s?)(?P<num>{DIGITS})\s*"
    rf"(?P<mult>(?i:trillion|billion|million)|bn|tn|m|b)?\b"
    # "170 billion won", "19 billion yen": the currency written after its figure
    rf"|(?<![\w.,])(?P<wnum>{DIGITS})\s*(?P<wmult>(?i:trillion|billion|million))?\s+(?P<wsym>won|yen)\b"
    rf"|(?P<cnum>{DIGITS}|{CHINESE})(?P<cmult>万亿|亿|万)?(?P<csym>港元|港币|欧元|英镑|日元|韩元)"
)
_OTHER_CURRENCY = {"€": "EUR", "EUR": "EUR", "£": "GBP", "GBP": "GBP", "HK$": "HKD", "HKD": "HKD",
                   "JPY": "JPY", "KRW": "KRW", "won": "KRW", "yen": "JPY", "₩": "KRW", "S$": "SGD",
                   "SGD": "SGD", "A$": "AUD", "AUD": "AUD", "C$": "CAD", "CAD": "CAD", "NT$": "TWD",
                   "TWD": "TWD", "CHF": "CHF",
                   "港元": "HKD", "港币": "HKD", "欧元": "EUR", "英镑": "GBP", "日元": "JPY", "韩元": "KRW"}
_MONEY_MULT = {
    "trillion": 1e12, "tn": 1e12, "billion": 1e9, "bn": 1e9, "b": 1e9, "million": 1e6, "m": 1e6,
    "万亿": 1e12, "亿": 1e8, "万": 1e4,
}
# What tells the yen sign from the yuan sign: words of Japan or of China in the item.
_JAPANESE = re.compile(
    r"\b(?:Japan|Japanese|Tokyo|Osaka|Yokohama|Kyoto|Nagoya|Hokkaido|Nikkei|yen|JPY|K\.K\.)\b"
    r"|日本|日元|东京|東京|大阪|株式会社|[\u3040-\u30ff]"
)
_CHINESE_WORDS = re.compile(
    r"\b(?:China|Chinese|yuan|RMB|CNY|renminbi|Beijing|Shanghai|Shenzhen|Hangzhou|Hong Kong|STAR Market)\b"
    r"|[\u4e00-\u9fff]"
)


def yen_sign_currency(text: str) -> str | None:
    """The currency the sign "¥" stands for in an item whose words are ``text``: ``JPY`` when they speak
    of Japan (and not of China), ``CNY`` when they speak of China or are Chinese (and not Japanese), else
    None (the sign alone does not say; Japanese kana count as Japan)."""
    japan = _JAPANESE.search(text) is not None
    china = _CHINESE_WORDS.search(_JAPANESE.sub(" ", text)) is not None
    if japan != china:
        return "JPY" if japan else "CNY"
    return None


@dataclass(frozen=True, slots=True)
class Money:
    value: float
    currency: str
    start: int
    end: int


def money(part: Part, a: int, b: int) -> list[Money]:
    """Sums of money in ``norm[a:b]`` in reading order: USD and CNY from the quantity reader, euros,
    pounds, Hong Kong dollars, yen and won read here with the same numeral reader. A sum written with
    "¥" takes the currency ``part.yen`` names (see :func:`yen_sign_currency`), and none is read when
    that is None."""
    out = []
    for q in part.quantities_in(a, b):
        if q.unit not in ("USD", "CNY"):
            continue
        if q.raw.lstrip().startswith("$") and part.norm[max(0, q.span[0] - 1) : q.span[0]].isalpha():
            continue  # "S$", "NT$", "HK$": another dollar, read below
        currency = q.unit
        if q.raw.lstrip().startswith("¥") and not re.search(r"元|yuan|RMB|CNY", q.raw, re.IGNORECASE):
            currency = part.yen
            if currency is None:
                continue  # the sign alone: yen or yuan, so no amount
        out.append(Money(q.value, currency, *q.span))
    for m in _OTHER_MONEY.finditer(part.norm, a, b):
        text = m.group("num") or m.group("wnum") or m.group("cnum")
        value = _read_number(text)
        if value is None:
            continue
        mult = (m.group("mult") or m.group("wmult") or m.group("cmult") or "").lower()
        currency = _OTHER_CURRENCY[(m.group("sym") or m.group("wsym") or m.group("csym")).strip()]
        out.append(Money(value * _MONEY_MULT.get(mult, 1.0), currency, m.start(), m.end()))
    out.sort(key=lambda x: x.start)
    return out


_BARE_AMOUNT = re.compile(rf"(?P<num>{DIGITS}|{CHINESE})(?P<mult>万亿|亿|万)(?![元美港欧英])")


def bare_amount(part: Part, pos: int, hi: int) -> tuple[float, int, int] | None:
    """A sum written without its currency right after ``pos`` ("估值200亿"): ``(value, start, end)``."""
    m = _BARE_AMOUNT.match(part.norm, pos, hi)
    if m is None:
        m = re.compile(r"[约近超逾达为至]{1,2}").match(part.norm, pos, hi)
        if m is None:
            return None
        return bare_amount(part, m.end(), hi)
    value = _read_number(m.group("num"))
    if value is None:
        return None
    return value * _MONEY_MULT[m.group("mult")], m.start(), m.end()



__all__ = ["Money", "bare_amount", "counts", "money", "yen_sign_currency"]
