"""Dates read to the instant they mean, or marked unknown with a reason; never a guess."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipwatch.text.dates import DateReading, read_date
from tests.fixtures.corpus import corpus_dir, requires_corpus


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


def check(text: str, tz: str | None, expected: str | None, code: str) -> DateReading:
    reading = read_date(text, default_tz=tz)
    assert reading.code == code, reading
    if expected is None:
        assert reading.value is None, reading
    else:
        assert reading.value == utc(expected), reading
        assert reading.value.tzinfo is UTC
    return reading


# (text, source zone, instant or None, reason code)
RFC822_ZONES = [
    # the case: CET is UTC+1, so 00:30 CET is 23:30 UTC the day before
    ("Mon, 30 Nov 2026 00:30:00 CET", None, "2026-11-29T23:30:00Z", "zone"),
    ("Mon, 30 Nov 2026 00:30:00 CEST", None, "2026-11-29T22:30:00Z", "zone"),
    ("Mon, 30 Nov 2026 00:30:00 MEZ", None, "2026-11-29T23:30:00Z", "zone"),
    ("Mon, 30 Nov 2026 00:30:00 MESZ", None, "2026-11-29T22:30:00Z", "zone"),
    ("Mon, 30 Nov 2026 00:30:00 EET", None, "2026-11-29T22:30:00Z", "zone"),
    ("Mon, 30 Nov 2026 00:30:00 WET", None, "2026-11-30T00:30:00Z", "zone"),
    ("Mon, 30 Nov 2026 00:30:00 MSK", None, "2026-11-29T21:30:00Z", "zone"),
    ("Mon, 30 Nov 2026 08:30:00 JST", None, "2026-11-29T23:30:00Z", "zone"),
    ("Mon, 30 Nov 2026 08:30:00 KST", None, "2026-11-29T23:30:00Z", "zone"),
    ("Mon, 30 Nov 2026 08:30:00 HKT", None, "2026-11-30T00:30:00Z", "zone"),
    ("Mon, 30 Nov 2026 08:30:00 SGT", None, "2026-11-30T00:30:00Z", "zone"),
    ("Mon, 30 Nov 2026 08:30:00 AEDT", None, "2026-11-29T21:30:00Z", "zone"),
    ("Mon, 30 Nov 2026 08:30:00 NZDT", None, "2026-11-29T19:30:00Z", "zone"),
    ("Mon, 30 Nov 2026 08:30:00 NPT", None, "2026-11-30T02:45:00Z", "zone"),
    ("Mon, 30 Nov 2026 08:30:00 NST", None, "2026-11-30T12:00:00Z", "zone"),
    ("Mon, 30 Nov 2026 08:30:00 HST", None, "2026-11-30T18:30:00Z", "zone"),
    ("Mon, 30 Nov 2026 08:30:00 GMT", None, "2026-11-30T08:30:00Z", "zone"),
    ("Mon, 30 Nov 2026 08:30:00 UT", None, "2026-11-30T08:30:00Z", "zone"),
    ("Mon, 30 Nov 2026 08:30:00 utc", None, "2026-11-30T08:30:00Z", "zone"),
    # the eight zones RFC 5322 defines, when no source zone says otherwise
    ("Mon, 30 Nov 2026 00:30:00 EST", None, "2026-11-30T05:30:00Z", "zone"),
    ("Mon, 30 Nov 2026 00:30:00 EDT", None, "2026-11-30T04:30:00Z", "zone"),
    ("Mon, 30 Nov 2026 00:30:00 CST", None, "2026-11-30T06:30:00Z", "zone"),
    ("Mon, 30 Nov 2026 00:30:00 CDT", None, "2026-11-30T05:30:00Z", "zone"),
    ("Mon, 30 Nov 2026 00:30:00 MST", None, "2026-11-30T07:30:00Z", "zone"),
    ("Mon, 30 Nov 2026 00:30:00 MDT", None, "2026-11-30T06:30:00Z", "zone"),
    ("Mon, 30 Nov 2026 00:30:00 PST", None, "2026-11-30T08:30:00Z", "zone"),
    ("Mon, 30 Nov 2026 00:30:00 PDT", None, "2026-11-30T07:30:00Z", "zone"),
    # ambiguous abbreviations resolved by the source's zone
    ("Mon, 30 Nov 2026 08:30:00 CST", "Asia/Shanghai", "2026-11-30T00:30:00Z", "zone-by-source"),
    ("Mon, 30 Nov 2026 08:30:00 CST", "Asia/Taipei", "2026-11-30T00:30:00Z", "zone-by-source"),
    ("Mon, 30 Nov 2026 08:30:00 CST", "America/Chicago", "2026-11-30T14:30:00Z", "zone-by-source"),
    ("Mon, 30 Nov 2026 08:30:00 CST", "America/Havana", "2026-11-30T13:30:00Z", "zone-by-source"),
    ("Mon, 30 Nov 2026 08:30:00 IST", "Asia/Kolkata", "2026-11-30T03:00:00Z", "zone-by-source"),
    ("Tue, 30 Jun 2026 08:30:00 IST", "Europe/Dublin", "2026-06-30T07:30:00Z", "zone-by-source"),
    ("Tue, 30 Jun 2026 08:30:00 IST", "Asia/Jerusalem", "2026-06-30T06:30:00Z", "zone-by-source"),  # +02:00
    ("Tue, 30 Jun 2026 08:30:00 BST", "Europe/London", "2026-06-30T07:30:00Z", "zone-by-source"),
    ("Tue, 30 Jun 2026 08:30:00 BST", "Asia/Dhaka", "2026-06-30T02:30:00Z", "zone-by-source"),
    ("Tue, 30 Jun 2026 08:30:00 AST", "America/Halifax", "2026-06-30T12:30:00Z", "zone-by-source"),
    ("Tue, 30 Jun 2026 08:30:00 AST", "Asia/Riyadh", "2026-06-30T05:30:00Z", "zone-by-source"),
    ("Tue, 30 Jun 2026 08:30:00 PST", "Asia/Manila", "2026-06-30T00:30:00Z", "zone-by-source"),
    ("Tue, 30 Jun 2026 08:30:00 EST", "Australia/Sydney", "2026-06-29T22:30:00Z", "zone-by-source"),
    ("Tue, 30 Jun 2026 08:30:00 GST", "Asia/Dubai", "2026-06-30T04:30:00Z", "zone-by-source"),
    # a source zone that does not use the abbreviation leaves it to RFC 5322 or to "unknown"
    ("Mon, 30 Nov 2026 08:30:00 CST", "Europe/Berlin", "2026-11-30T14:30:00Z", "zone"),
    ("Mon, 30 Nov 2026 08:30:00 IST", "Europe/Berlin", None, "ambiguous-zone"),
    ("Mon, 30 Nov 2026 08:30:00 IST", None, None, "ambiguous-zone"),
    ("Tue, 30 Jun 2026 08:30:00 BST", None, None, "ambiguous-zone"),
    ("Tue, 30 Jun 2026 08:30:00 AST", None, None, "ambiguous-zone"),
    ("Tue, 30 Jun 2026 08:30:00 SST", None, None, "ambiguous-zone"),
    # generic names follow daylight saving
    ("Tue, 30 Jun 2026 08:30:00 ET", None, "2026-06-30T12:30:00Z", "zone"),
    ("Mon, 30 Nov 2026 08:30:00 ET", None, "2026-11-30T13:30:00Z", "zone"),
    ("Tue, 30 Jun 2026 08:30:00 PT", None, "2026-06-30T15:30:00Z", "zone"),
    # military letters (RFC 1123 §5.2.14: A is +01:00, N is -01:00)
    ("Tue, 30 Jun 2026 08:30:00 Z", None, "2026-06-30T08:30:00Z", "zone"),
    ("Tue, 30 Jun 2026 08:30:00 A", None, "2026-06-30T07:30:00Z", "zone"),
    ("Tue, 30 Jun 2026 08:30:00 M", None, "2026-06-29T20:30:00Z", "zone"),
    ("Tue, 30 Jun 2026 08:30:00 N", None, "2026-06-30T09:30:00Z", "zone"),
    ("Tue, 30 Jun 2026 08:30:00 Y", None, "2026-06-30T20:30:00Z", "zone"),
    ("Tue, 30 Jun 2026 08:30:00 J", None, None, "unknown-zone"),
    # IANA names
    ("Tue, 30 Jun 2026 08:30:00 Europe/Paris", None, "2026-06-30T06:30:00Z", "zone"),
    ("Tue, 30 Jun 2026 08:30:00 Asia/Shanghai", None, "2026-06-30T00:30:00Z", "zone"),
    ("Tue, 30 Jun 2026 08:30:00 Etc/GMT-8", None, "2026-06-30T00:30:00Z", "zone"),
    # unknown abbreviations are unknown, never UTC
    ("Mon, 30 Nov 2026 00:30:00 XYZ", None, None, "unknown-zone"),
    ("Mon, 30 Nov 2026 00:30:00 FOO", "Asia/Shanghai", None, "unknown-zone"),
    ("Mon, 30 Nov 2026 00:30:00 Mars/Olympus", None, None, "unknown-zone"),
]

OFFSETS = [
    ("Mon, 30 Nov 2026 00:30:00 +0100", None, "2026-11-29T23:30:00Z", "offset"),
    ("Mon, 30 Nov 2026 00:30:00 +01:00", None, "2026-11-29T23:30:00Z", "offset"),
    ("Mon, 30 Nov 2026 00:30:00 -0000", None, "2026-11-30T00:30:00Z", "offset"),
    ("Mon, 30 Nov 2026 00:30:00 +0530", None, "2026-11-29T19:00:00Z", "offset"),
    ("Mon, 30 Nov 2026 00:30:00 +0545", None, "2026-11-29T18:45:00Z", "offset"),
    ("Mon, 30 Nov 2026 00:30:00 -0930", None, "2026-11-30T10:00:00Z", "offset"),
    ("Mon, 30 Nov 2026 00:30:00 +14:00", None, "2026-11-29T10:30:00Z", "offset"),
    ("Mon, 30 Nov 2026 00:30:00 GMT+8", None, "2026-11-29T16:30:00Z", "offset"),
    ("Mon, 30 Nov 2026 00:30:00 GMT+08:00", None, "2026-11-29T16:30:00Z", "offset"),
    ("Mon, 30 Nov 2026 00:30:00 UTC-05:00", None, "2026-11-30T05:30:00Z", "offset"),
    ("Mon, 30 Nov 2026 00:30:00 UTC+0530", None, "2026-11-29T19:00:00Z", "offset"),
    # a numeric offset beats the name written after it
    ("Mon, 30 Nov 2026 00:30:00 +0530 IST", None, "2026-11-29T19:00:00Z", "offset"),
    ("Mon, 30 Nov 2026 00:30:00 -0500 (EST)", None, "2026-11-30T05:30:00Z", "offset"),
    ("Mon, 30 Nov 2026 00:30:00 +0100 Textra", None, None, "unknown-zone"),
    # offsets no zone uses
    ("Mon, 30 Nov 2026 00:30:00 +1500", None, None, "bad-offset"),
    ("Mon, 30 Nov 2026 00:30:00 -1300", None, None, "bad-offset"),
    ("Mon, 30 Nov 2026 00:30:00 +0175", None, None, "bad-offset"),
]

ISO_8601 = [
    ("2026-11-30T08:30:00Z", None, "2026-11-30T08:30:00Z", "offset"),
    ("2026-11-30T08:30:00z", None, "2026-11-30T08:30:00Z", "offset"),
    ("2026-11-30t08:30:00+08:00", None, "2026-11-30T00:30:00Z", "offset"),
    ("2026-11-30T08:30:00.123456-03:30", None, "2026-11-30T12:00:00.123456Z", "offset"),
    ("2026-11-30T08:30:00,5+0800", None, "2026-11-30T00:30:00.5Z", "offset"),
    ("2026-11-30T08:30+08", None, "2026-11-30T00:30:00Z", "offset"),
    ("2026-11-30 08:30:00 +08:00", None, "2026-11-30T00:30:00Z", "offset"),
    ("2026-11-30T08:30:00+08:00Z", None, "2026-11-30T00:30:00Z", "offset"),
    ("20261130T083000Z", None, "2026-11-30T08:30:00Z", "offset"),
    ("20261130T083000+0800", None, "2026-11-30T00:30:00Z", "offset"),
    ("20261130", None, "2026-11-30T00:00:00Z", "no-zone-utc"),
    ("2026-11-30", None, "2026-11-30T00:00:00Z", "no-zone-utc"),
    ("2026-11-30", "Asia/Shanghai", "2026-11-29T16:00:00Z", "no-zone-source"),
    ("2026-11-30T08:30", "Europe/Berlin", "2026-11-30T07:30:00Z", "no-zone-source"),
    ("2026-11", None, "2026-11-01T00:00:00Z", "no-zone-utc"),
    ("2026", None, "2026-01-01T00:00:00Z", "no-zone-utc"),
    ("2026-334", None, "2026-11-30T00:00:00Z", "no-zone-utc"),
    ("2026-W49-1", None, "2026-11-30T00:00:00Z", "no-zone-utc"),
    ("2026W491", None, "2026-11-30T00:00:00Z", "no-zone-utc"),
    ("2016-12-31T23:59:60Z", None, "2017-01-01T00:00:00Z", "offset"),  # a leap second
    ("2026-02-30T08:30:00Z", None, None, "invalid-date"),
    ("2026-13-01", None, None, "invalid-date"),
    ("2026-367", None, None, "invalid-date"),
    ("2026-11-30T24:00:00Z", None, None, "invalid-date"),
    ("2026-11-30T08:30:00+25:00", None, None, "bad-offset"),
    ("2026-11-30T08", None, None, "unreadable"),
]

OTHER_SHAPES = [
    # asctime and JavaScript Date
    ("Mon Nov 30 08:30:00 2026", None, "2026-11-30T08:30:00Z", "no-zone-utc"),
    ("Mon Nov 30 08:30:00 +0800 2026", None, "2026-11-30T00:30:00Z", "offset"),
    ("Mon Nov 30 2026 08:30:00 GMT+0800 (China Standard Time)", None, "2026-11-30T00:30:00Z", "offset"),
    # RFC 850, ordinals, 12-hour clocks, words between the parts
    ("Monday, 30-Nov-26 08:30:00 GMT", None, "2026-11-30T08:30:00Z", "zone"),
    ("Monday, November 30th, 2026 at 8:30 PM EST", None, "2026-12-01T01:30:00Z", "zone"),
    ("Nov 30, 2026, 8:30 a.m.", None, "2026-11-30T08:30:00Z", "no-zone-utc"),
    ("Nov 30, 2026, 12:05 a.m.", None, "2026-11-30T00:05:00Z", "no-zone-utc"),
    ("Nov 30, 2026, 12:05 p.m.", None, "2026-11-30T12:05:00Z", "no-zone-utc"),
    ("30 November 2026 3pm", None, "2026-11-30T15:00:00Z", "no-zone-utc"),
    ("30 November 2026 15h30", "Europe/Paris", "2026-11-30T14:30:00Z", "no-zone-source"),
    ("November 2026", None, "2026-11-01T00:00:00Z", "no-zone-utc"),
    # numeric dates: the numbers, the separator or the weekday fix the order, else unknown
    ("2026/11/30 08:30", None, "2026-11-30T08:30:00Z", "no-zone-utc"),
    ("30/11/2026", None, "2026-11-30T00:00:00Z", "no-zone-utc"),
    ("11/30/2026 8:30 PM", None, "2026-11-30T20:30:00Z", "no-zone-utc"),
    ("30.11.2026 08:30", "Europe/Berlin", "2026-11-30T07:30:00Z", "no-zone-source"),
    ("04.05.2026", None, "2026-05-04T00:00:00Z", "no-zone-utc"),
    ("30-11-2026", None, "2026-11-30T00:00:00Z", "no-zone-utc"),
    ("2026. 11. 30.", None, "2026-11-30T00:00:00Z", "no-zone-utc"),
    ("Mon, 04/05/2026", None, "2026-05-04T00:00:00Z", "no-zone-utc"),
    ("Sun, 04/05/2026", None, "2026-04-05T00:00:00Z", "no-zone-utc"),
    ("04/05/2026", None, None, "ambiguous-order"),
    ("04-05-2026", None, None, "ambiguous-order"),
    ("03-12-31", None, None, "ambiguous-order"),
    ("13/13/2026", None, None, "invalid-date"),
    ("5/30/7", None, None, "invalid-date"),  # a one-digit year
    ("12/31/99", None, "1999-12-31T00:00:00Z", "no-zone-utc"),  # RFC 5322: 50-99 are 1950-1999
    # other languages
    ("lun., 30 nov. 2026 08:30:00 +0100", None, "2026-11-30T07:30:00Z", "offset"),
    ("Mo, 30 Nov 2026 08:30:00 MEZ", None, "2026-11-30T07:30:00Z", "zone"),
    ("am 30. November 2026 um 08:30 Uhr", "Europe/Berlin", "2026-11-30T07:30:00Z", "no-zone-source"),
    ("lunes, 30 de noviembre de 2026 a las 08:30", "Europe/Madrid", "2026-11-30T07:30:00Z", "no-zone-source"),
    ("segunda-feira, 30 de novembro de 2026 08:30", "America/Sao_Paulo", "2026-11-30T11:30:00Z",
     "no-zone-source"),
    ("lunedì 30 novembre 2026 08:30", "Europe/Rome", "2026-11-30T07:30:00Z", "no-zone-source"),
    ("maandag 30 november 2026 08:30", "Europe/Amsterdam", "2026-11-30T07:30:00Z", "no-zone-source"),
    ("2026. november 30. 08:30", "Europe/Budapest", "2026-11-30T07:30:00Z", "no-zone-source"),
    ("Δευ, 30 Νοε 2026 08:30:00 +0200", None, "2026-11-30T06:30:00Z", "offset"),
    ("понедельник, 30 ноября 2026 г. 08:30", "Europe/Moscow", "2026-11-30T05:30:00Z", "no-zone-source"),
    # ten-digit Unix seconds
    ("1764491400", None, "2025-11-30T08:30:00Z", "epoch"),
    # what is not there is not made up
    ("Nov 30", None, None, "missing-year"),
    ("30 November 08:30", None, None, "missing-year"),
    ("Monday", None, None, "unreadable"),
    ("2026 Nov 30 32", None, None, "unreadable"),
    ("soon", None, None, "unreadable"),
    ("031231", None, None, "unreadable"),
    ("", None, None, "empty"),
    ("   ", None, None, "empty"),
    ("Sun, 1 Nov 2026 01:30:00 ET", None, None, "ambiguous-time"),  # 01:30 happens twice that night
    ("2026-11-01 01:30", "America/New_York", None, "ambiguous-time"),
    ("2026-03-08 02:30", "America/New_York", None, "invalid-date"),  # skipped by the clock change
]

CHINESE_AND_CJK = [
    ("2026年11月30日 08:30", "Asia/Shanghai", "2026-11-30T00:30:00Z", "no-zone-source"),
    ("2026年11月30日 08:30:15", "Asia/Shanghai", "2026-11-30T00:30:15Z", "no-zone-source"),
    ("2026年11月30日08:30", "Asia/Shanghai", "2026-11-30T00:30:00Z", "no-zone-source"),
    ("2026年11月30日8时30分", "Asia/Shanghai", "2026-11-30T00:30:00Z", "no-zone-source"),
    ("2026年11月30日 8点30分15秒", "Asia/Shanghai", "2026-11-30T00:30:15Z", "no-zone-source"),
    ("2026年11月30日 下午3:30", "Asia/Shanghai", "2026-11-30T07:30:00Z", "no-zone-source"),
    ("2026年11月30日 下午3点半", "Asia/Shanghai", "2026-11-30T07:30:00Z", "no-zone-source"),
    ("2026年11月30日 上午10点", "Asia/Shanghai", "2026-11-30T02:00:00Z", "no-zone-source"),
    ("2026年11月30日 凌晨1点", "Asia/Shanghai", "2026-11-29T17:00:00Z", "no-zone-source"),
    ("2026年11月30日 中午12点", "Asia/Shanghai", "2026-11-30T04:00:00Z", "no-zone-source"),
    ("2026年11月30日 中午1点", "Asia/Shanghai", "2026-11-30T05:00:00Z", "no-zone-source"),
    ("2026年11月30日 晚上11点", "Asia/Shanghai", "2026-11-30T15:00:00Z", "no-zone-source"),
    ("2026年11月30日 星期一 08:30", "Asia/Shanghai", "2026-11-30T00:30:00Z", "no-zone-source"),
    ("2026年11月30日（周一）08:30", "Asia/Shanghai", "2026-11-30T00:30:00Z", "no-zone-source"),
    ("2026年11月30号 08:30", "Asia/Shanghai", "2026-11-30T00:30:00Z", "no-zone-source"),
    ("２０２６年１１月３０日　０８：３０", "Asia/Shanghai", "2026-11-30T00:30:00Z", "no-zone-source"),
    ("二〇二六年十一月三十日", "Asia/Shanghai", "2026-11-29T16:00:00Z", "no-zone-source"),
    ("二〇二六年十一月三十日上午十点", "Asia/Shanghai", "2026-11-30T02:00:00Z", "no-zone-source"),
    ("2026年11月", "Asia/Shanghai", "2026-10-31T16:00:00Z", "no-zone-source"),
    ("2026-11-30 08:30", "Asia/Shanghai", "2026-11-30T00:30:00Z", "no-zone-source"),
    ("2026/11/30 08:30:00", "Asia/Shanghai", "2026-11-30T00:30:00Z", "no-zone-source"),
    ("2026.11.30", "Asia/Shanghai", "2026-11-29T16:00:00Z", "no-zone-source"),
    ("民国115年11月30日", "Asia/Taipei", "2026-11-29T16:00:00Z", "no-zone-source"),
    # the text names its zone
    ("北京时间2026年11月30日08:30", None, "2026-11-30T00:30:00Z", "zone"),
    ("2026-11-30 08:30:00 北京时间", "America/New_York", "2026-11-30T00:30:00Z", "zone"),
    ("2026年11月30日 08:30 UTC+8", None, "2026-11-30T00:30:00Z", "offset"),
    ("2026年11月30日 08:30 GMT+08:00", None, "2026-11-30T00:30:00Z", "offset"),
    ("2026-11-30T08:30:00+08:00", None, "2026-11-30T00:30:00Z", "offset"),
    # CST next to Chinese is China Standard Time even without a source zone
    ("2026年11月30日 08:30 CST", None, "2026-11-30T00:30:00Z", "zone-by-script"),
    # no zone and no source zone: the script's zone
    ("2026年11月30日 08:30", None, "2026-11-30T00:30:00Z", "no-zone-script"),
    ("2026年11月30日(月) 8時30分", None, "2026-11-29T23:30:00Z", "no-zone-script"),
    ("令和8年11月30日", None, "2026-11-29T15:00:00Z", "no-zone-script"),
    ("2026년 11월 30일 오후 3시 30분", None, "2026-11-30T06:30:00Z", "no-zone-script"),
    # the source's zone wins over the script's
    ("2026年11月30日 08:30", "Europe/London", "2026-11-30T08:30:00Z", "no-zone-source"),
    # unknown rather than guessed
    ("11月30日 08:30", "Asia/Shanghai", None, "missing-year"),
    ("2026年13月30日", "Asia/Shanghai", None, "invalid-date"),
    ("2026年11月31日", "Asia/Shanghai", None, "invalid-date"),
    ("2026年11月30日 某时", "Asia/Shanghai", None, "unreadable"),
    ("115年11月30日", "Asia/Taipei", None, "unreadable"),
]


@pytest.mark.parametrize(("text", "tz", "expected", "code"), RFC822_ZONES)
def test_zone_names(text: str, tz: str | None, expected: str | None, code: str) -> None:
    check(text, tz, expected, code)


@pytest.mark.parametrize(("text", "tz", "expected", "code"), OFFSETS)
def test_offsets(text: str, tz: str | None, expected: str | None, code: str) -> None:
    check(text, tz, expected, code)


@pytest.mark.parametrize(("text", "tz", "expected", "code"), ISO_8601)
def test_iso_8601(text: str, tz: str | None, expected: str | None, code: str) -> None:
    check(text, tz, expected, code)


@pytest.mark.parametrize(("text", "tz", "expected", "code"), OTHER_SHAPES)
def test_other_shapes(text: str, tz: str | None, expected: str | None, code: str) -> None:
    check(text, tz, expected, code)


@pytest.mark.parametrize(("text", "tz", "expected", "code"), CHINESE_AND_CJK)
def test_chinese_japanese_korean(text: str, tz: str | None, expected: str | None, code: str) -> None:
    check(text, tz, expected, code)


@pytest.mark.parametrize(
    ("text", "precision"),
    [
        ("2026-11-30T08:30:00Z", "second"),
        ("Mon, 30 Nov 2026 08:30 GMT", "minute"),
        ("2026-11-30", "day"),
        ("2026-W49", "week"),
        ("Nov. 2026", "month"),
        ("2026", "year"),
        ("bogus", None),
    ],
)
def test_precision(text: str, precision: str | None) -> None:
    assert read_date(text).precision == precision


def test_unpacks_as_value_and_reason() -> None:
    value, reason = read_date("Mon, 30 Nov 2026 00:30:00 XYZ")
    assert value is None
    assert reason == "unknown-zone: 'XYZ'"
    value, reason = read_date("2026-11-30T00:30:00+01:00")
    assert value == datetime(2026, 11, 29, 23, 30, tzinfo=UTC)
    assert reason == "offset"


def test_an_unknown_source_zone_is_a_configuration_error() -> None:
    with pytest.raises(ValueError, match="Mars/Olympus"):
        read_date("2026-11-30", default_tz="Mars/Olympus")


def test_long_text_is_not_read() -> None:
    assert read_date("Mon, 30 Nov 2026 00:30:00 GMT " + "x" * 300).code == "unreadable"


_DATE_CHARACTERS = "0123456789 :-+/.,TZ年月日时分AMPamp一二十〇CESTGMUJanNovMon()"


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(_DATE_CHARACTERS), max_size=40))
def test_never_raises_and_always_answers_in_utc(text: str) -> None:
    reading = read_date(text)
    assert (reading.value is None) == (reading.precision is None)
    if reading.value is not None:
        assert reading.value.utcoffset() is not None and reading.value.utcoffset().total_seconds() == 0
    else:
        assert reading.code in {
            "empty", "unreadable", "invalid-date", "ambiguous-order", "missing-year", "unknown-zone",
            "ambiguous-zone", "ambiguous-time", "bad-offset",
        }


# ---------------------------------------------------------------------------------------------------
# The corpus: feedparser's and Miniflux's own date vectors

# Where this reader and a vector's expected value part, and why. Everything else must match exactly.
FEEDPARSER_DEPARTURES = {
    # Two-digit-year forms of ISO 8601:2000 (deleted in 2004). As bare numbers or hyphenated pairs they
    # also read as day-first or month-first dates, or as ids; feedparser fills the century from the clock.
    "031231": "unreadable",
    "03335": "unreadable",
    "03-12-31": "ambiguous-order",
}


def _feedparser_vectors() -> list[dict]:
    path = corpus_dir() / "feedparser-tests" / "date_vectors.json"
    return json.loads(path.read_text("utf-8"))["vectors"] if path.is_file() else []


@requires_corpus
@pytest.mark.parametrize(
    "vector", _feedparser_vectors(), ids=lambda v: f"{v['feedparser_function']}:{v['input_value']!r}"
)
def test_feedparser_date_vectors(vector: dict) -> None:
    reading = read_date(vector["input_value"])
    if vector["input_value"] in FEEDPARSER_DEPARTURES:
        assert reading.value is None and reading.code == FEEDPARSER_DEPARTURES[vector["input_value"]]
    elif vector["expected_value"] is None:
        assert reading.value is None, reading
    else:
        year, month, day, hour, minute, second = vector["expected_value"][:6]
        # the vectors are struct_time tuples, which drop fractions of a second
        assert reading.value is not None, reading
        expected = datetime(year, month, day, hour, minute, second, tzinfo=UTC)
        assert reading.value.replace(microsecond=0) == expected, reading


def test_feedparser_departures_are_few() -> None:
    vectors = _feedparser_vectors()
    if vectors:
        read = [v for v in vectors if v["expected_value"] is not None]
        assert len(vectors) == 72 and len(read) == 46 and len(FEEDPARSER_DEPARTURES) == 3


def _miniflux() -> dict:
    path = corpus_dir() / "miniflux-testdata" / "date_strings.json"
    return json.loads(path.read_text("utf-8")) if path.is_file() else {}


# Miniflux only says these must parse; the instant each one means, worked out by hand.
MINIFLUX_MUST_PARSE = {
    "Sun, 17 Dec 2017 1:55 PM EST": "2017-12-17T18:55:00Z",
    "9 Dec 2016 12:00 GMT": "2016-12-09T12:00:00Z",
    "Friday, December 22, 2017 - 3:09pm": "2017-12-22T15:09:00Z",
    "Friday, December 8, 2017 - 3:07pm": "2017-12-08T15:07:00Z",
    "Thu, 25 Feb 2016 00:00:00 Europe/Brussels": "2016-02-24T23:00:00Z",
    "Mon, 09 Apr 2018, 16:04": "2018-04-09T16:04:00Z",
    "Di, 23 Jan 2018 00:00:00 +0100": "2018-01-22T23:00:00Z",
    "Do, 29 Mär 2018 00:00:00 +0200": "2018-03-28T22:00:00Z",
    "mer, 9 avr 2018 00:00:00 +0200": "2018-04-08T22:00:00Z",
    "1520932969": "2018-03-13T09:22:49Z",
    "Tue 16 Feb 2016, 23:16:00 EDT": "2016-02-17T03:16:00Z",
    "Tue, 16 Feb 2016 23:16:00 EDT": "2016-02-17T03:16:00Z",
    "Tue, Feb 16 2016 23:16:00 EDT": "2016-02-17T03:16:00Z",
    "March 30 2020 07:02:38 PM": "2020-03-30T19:02:38Z",
    "Mon, 30 Mar 2020 19:53 +0000": "2020-03-30T19:53:00Z",
    "Mon, 03/30/2020 - 19:19": "2020-03-30T19:19:00Z",
    "2018-12-12T12:12": "2018-12-12T12:12:00Z",
    "2020-11-08T16:20:00-05:00Z": "2020-11-08T21:20:00Z",
    "Nov. 16, 2020, 10:57 a.m.": "2020-11-16T10:57:00Z",
    "Friday 06 November 2020": "2020-11-06T00:00:00Z",
    "Mon, November 16, 2020, 11:12 PM EST": "2020-11-17T04:12:00Z",
    "Lundi, 16. Novembre 2020 - 15:54": "2020-11-16T15:54:00Z",
    "Thu Nov 12 2020 17:00:00 GMT+0000 (Coordinated Universal Time)": "2020-11-12T17:00:00Z",
    "Sat, 11 04 2020 08:51:49 +0100": "2020-04-11T07:51:49Z",  # 11 April 2020 was the Saturday
    "Mon, 16th Nov 2020 13:16:28 GMT": "2020-11-16T13:16:28Z",
    "Nov. 2020": "2020-11-01T00:00:00Z",
    "ven., 03 juil. 2020 15:09:58 +0000": "2020-07-03T15:09:58Z",
    "Fri, 26/06/2020": "2020-06-26T00:00:00Z",
    "Thu, 29 Oct 2020 07:36:03 GMT-07:00": "2020-10-29T14:36:03Z",
    "jeu., 02 avril 2020 00:00:00 +0200": "2020-04-01T22:00:00Z",
    "Jan. 4, 2016, 12:37 p.m.": "2016-01-04T12:37:00Z",
    "2018-10-23 04:07:42 +00:00": "2018-10-23T04:07:42Z",
    "5 August, 2019": "2019-08-05T00:00:00Z",
    "mar., 01 déc. 2020 16:11:02 +0000": "2020-12-01T16:11:02Z",  # "mar." is mardi here
    "Thurs, 15 Oct 2020 00:00:39 +0000": "2020-10-15T00:00:39Z",
    "Thur, 19 Nov 2020 00:00:39 +0000": "2020-11-19T00:00:39Z",
    "26 Sep 2022 GMT": "2022-09-26T00:00:00Z",
    "Thu, June 22, 2023 at 01:11 PM EDT": "2023-06-22T17:11:00Z",
    "Apr 16, 2023 08:01 GMT": "2023-04-16T08:01:00Z",
    "Jun 23, 2023 19:00 GMT": "2023-06-23T19:00:00Z",
    "09/15/2014 4:20 pm PST": "2014-09-16T00:20:00Z",
    "Fri, 23rd Jun 2023 09:32:20 GMT": "2023-06-23T09:32:20Z",
    "Sat, Oct 28 2023 08:28:28 PM": "2023-10-28T20:28:28Z",
    "Monday, October 6, 2023 - 16:29\n": "2023-10-06T16:29:00Z",
    "10/30/23 21:55:58": "2023-10-30T21:55:58Z",
    "30.10.23": "2023-10-30T00:00:00Z",
}


@requires_corpus
def test_miniflux_exact_vectors() -> None:
    vectors = _miniflux()["exact_vectors"]
    assert len(vectors) == 6
    for vector in vectors:
        reading = read_date(vector["input"])
        assert reading.value is not None and reading.value.timestamp() == vector["expected_unix"], vector


@requires_corpus
def test_miniflux_real_world_strings() -> None:
    strings = _miniflux()["must_parse_real_world_strings"]
    assert sorted(strings) == sorted(MINIFLUX_MUST_PARSE)
    for text in strings:
        reading = read_date(text)
        assert reading.value == utc(MINIFLUX_MUST_PARSE[text]), (text, reading)


@requires_corpus
def test_miniflux_offsets_no_zone_uses_are_unknown_not_utc() -> None:
    # Miniflux reads these as UTC; an offset no zone uses is a broken date, and a guess is no evidence.
    for text in _miniflux()["timezone_out_of_range_should_parse_with_offset_0"]:
        assert read_date(text).code == "bad-offset", text


@requires_corpus
def test_miniflux_must_fail() -> None:
    for text in _miniflux()["must_fail"]:
        assert read_date(text).value is None, text


@requires_corpus
def test_every_date_in_the_corpus_feeds_reads_as_feedparser_reads_it() -> None:
    """The real feeds of the corpus: no date becomes unknown or moves where feedparser reads one."""
    import warnings

    import feedparser

    root = corpus_dir()
    seen: dict[str, datetime] = {}
    for path in sorted([*root.rglob("*.xml"), *root.rglob("*.rdf")]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            doc = feedparser.parse(path.read_bytes())
        for node in (doc.feed, *doc.entries):
            for key in ("published", "updated", "created", "expired"):
                # dict.get: feedparser's own get() maps a missing "published" to "updated"
                raw, parsed = dict.get(node, key), dict.get(node, f"{key}_parsed")
                if isinstance(raw, str) and parsed:
                    seen[raw] = datetime(*parsed[:6], tzinfo=UTC)
    assert len(seen) > 250  # distinct date strings across feedparser's, Miniflux's and the chip feeds
    wrong = {raw: read_date(raw) for raw, instant in seen.items()
             if (read_date(raw).value or datetime.min.replace(tzinfo=UTC)).replace(microsecond=0) != instant}
    assert wrong == {}
