"""Time, Retry-After and slugs: the small shared rules."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from chipwatch.kit.retry_after import parse_retry_after
from chipwatch.kit.time import as_utc, rfc3339, utcnow
from chipwatch.vocab.slugs import SLUG, slugify

NOW = datetime(2026, 8, 25, 12, 0, tzinfo=UTC)


def test_times_are_aware_utc_and_print_as_rfc3339():
    assert utcnow().tzinfo is UTC
    assert as_utc(datetime(2026, 8, 25, 12, 0)) == NOW
    assert as_utc(datetime(2026, 8, 25, 14, 0, tzinfo=timezone(timedelta(hours=2)))) == NOW
    assert as_utc(None) is None
    assert rfc3339(datetime(2026, 8, 25, 14, 0, 5, 120000, tzinfo=timezone(timedelta(hours=2)))) == (
        "2026-08-25T12:00:05.120000Z"
    )
    assert rfc3339(NOW.replace(microsecond=5), timespec="seconds") == "2026-08-25T12:00:00Z"
    assert rfc3339(date(2026, 8, 25)) == "2026-08-25"
    assert rfc3339(None) is None


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("120", 120.0),
        (" 0 ", 0.0),
        ("Tue, 25 Aug 2026 12:05:00 GMT", 300.0),
        ("Tue, 25 Aug 2026 11:00:00 GMT", 0.0),  # in the past
        ("soon", None),
        ("-5", None),
        ("", None),
        (None, None),
    ],
)
def test_retry_after_reads_seconds_and_http_dates(value, seconds):
    assert parse_retry_after(value, now=NOW) == seconds


@pytest.mark.parametrize(
    ("text", "slug"),
    [("Jalapeño", "jalapeno"), ("NVIDIA GB300 NVL72", "nvidia-gb300-nvl72"), ("  --Groq!! ", "groq"),
     ("希望", ""), ("a" * 80, "a" * 64)],
)
def test_slugify_gives_ids_the_slug_rule_accepts(text, slug):
    import re

    assert slugify(text) == slug
    assert slug == "" or re.fullmatch(SLUG, slug)
