"""A date condition never holds on a guess: a month is its whole month, a time without a zone is any of the
26 hours the world's zones allow; only what holds for every reading of the date is evidence."""

from __future__ import annotations

import hashlib
import itertools
from datetime import UTC, date, datetime

import pytest

from chipwatch.db import session_scope
from chipwatch.sources.models import Item
from tests.fixtures.signals import create, evaluate, evidence, state

_seq = itertools.count(1)


def store(published_at: datetime, precision: str, reason: str, first_seen: datetime | None = None) -> int:
    n = next(_seq)
    with session_scope() as session:
        item = Item(
            source_id="press-feed", guid=f"d-{n}", link=f"https://press-feed.example/{n}",
            content_hash=hashlib.sha256(f"d{n}".encode()).hexdigest(), title="Jalapeño shipped", summary="",
            published_at=published_at, published_precision=precision, published_reason=reason,
            first_seen_at=first_seen or datetime(2026, 12, 20, tzinfo=UTC),
        )
        session.add(item)
        session.flush()
        return item.id


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


# (stored date, precision, reason, published_after, does the condition hold)
CASES = [
    (utc(2026, 11, 30, 0, 30), "second", "zone: CET", "2026-11-30", True),
    (utc(2026, 11, 29, 23, 30), "second", "zone: CET", "2026-11-30", False),  # 00:30 CET on the 30th
    (utc(2026, 11, 30, 0, 30), "minute", "no-zone-utc: read as UTC", "2026-11-30", False),
    (utc(2026, 11, 30, 0, 30), "minute", "no-zone-utc: read as UTC", "2026-11-29", True),
    (utc(2026, 11, 30, 15, 0), "minute", "no-zone-utc: read as UTC", "2026-11-30", True),
    (utc(2026, 11, 30, 13, 59), "second", "no-zone-utc: read as UTC", "2026-11-30", False),
    (utc(2026, 11, 30, 14, 0), "second", "no-zone-utc: read as UTC", "2026-11-30", True),
    (utc(2026, 11, 30), "day", "no-zone-utc: read as UTC", "2026-11-30", True),  # the day as written
    (utc(2026, 11, 30, 0, 30), "minute", "no-zone-source: read in Asia/Shanghai", "2026-11-30", True),
    (utc(2026, 11, 1), "month", "no-zone-utc: read as UTC", "2026-11-15", False),
    (utc(2026, 11, 1), "month", "no-zone-utc: read as UTC", "2026-11-01", True),
    (utc(2026, 1, 1), "year", "no-zone-utc: read as UTC", "2026-06-01", False),
]


@pytest.mark.parametrize(("published", "precision", "reason", "after", "holds"), CASES)
def test_published_after(feeds, published, precision, reason, after, holds) -> None:
    create("dated", yes=[{"item": {"terms_any": ["shipped"], "published_after": after}}])
    evaluate(store(published, precision, reason))
    assert len(evidence("dated")) == (1 if holds else 0)


@pytest.mark.parametrize(
    ("published", "precision", "reason", "first_seen", "decides"),
    [
        # a November date is before the end of a 30 November deadline, whichever day it was
        (utc(2026, 11, 1), "month", "no-zone-utc: read as UTC", utc(2026, 12, 5), True),
        # a December date is not, though its first instant is the deadline's end
        (utc(2026, 12, 1), "month", "no-zone-utc: read as UTC", utc(2026, 12, 20), False),
        # 23:00 without a zone on the deadline day may be the next day in UTC
        (utc(2026, 11, 30, 23, 0), "minute", "no-zone-utc: read as UTC", utc(2026, 12, 5), False),
        (utc(2026, 11, 30, 11, 0), "minute", "no-zone-utc: read as UTC", utc(2026, 12, 5), True),
        (utc(2026, 11, 30, 23, 0), "minute", "zone: GMT", utc(2026, 12, 5), True),
    ],
)
def test_in_time_for_a_deadline(feeds, published, precision, reason, first_seen, decides) -> None:
    create("by-deadline", yes=[{"item": {"terms_any": ["shipped"]}}], deadline="2026-11-30",
           today=date(2026, 11, 1))
    evaluate(store(published, precision, reason, first_seen))
    assert len(evidence("by-deadline")) == 1  # recorded either way
    assert state("by-deadline")[:2] == (("resolved", "yes") if decides else ("open", None))
