"""Helpers for the signal tests: feed and item rows, facts, signal definitions, and read-backs."""

from __future__ import annotations

import hashlib
import itertools
from datetime import UTC, date, datetime
from typing import Any

import pytest
from sqlalchemy import select

from chipwatch.db import session_scope
from chipwatch.outbox.models import Event
from chipwatch.signals import deadlines as signal_deadlines
from chipwatch.signals import evaluation
from chipwatch.signals.models import Evidence, Signal, SignalHistory
from chipwatch.signals.record import EvaluationReport
from chipwatch.sources.models import Item, ItemMention, Source

AFTER = datetime(2026, 9, 3, 8, 30, tzinfo=UTC)
"""A publication time after every seed signal's ``published_after`` (2026-08-29)."""

_seq = itertools.count(1)


@pytest.fixture
def feeds(db):
    """One feed source per trust level: ``vendor-feed``, ``press-feed``, ``analyst-feed``, ``lab-feed``."""
    with session_scope() as session:
        for source_id, trust in (
            ("vendor-feed", "vendor"),
            ("press-feed", "press"),
            ("analyst-feed", "analyst"),
            ("lab-feed", "independent"),
        ):
            session.add(
                Source(
                    id=source_id,
                    name=source_id,
                    url=f"https://{source_id}.example/rss",
                    kind="rss",
                    trust=trust,
                )
            )
    return db


def add_item(
    title: str,
    text: str = "",
    *,
    source: str = "press-feed",
    published_at: datetime | None = AFTER,
    estimated: bool = False,
    mentions: tuple[str, ...] = (),
    first_seen_at: datetime | None = None,
) -> int:
    """Store one item (and its mention rows) as the sources store would; returns its id."""
    n = next(_seq)
    with session_scope() as session:
        item = Item(
            source_id=source,
            guid=f"guid-{n}",
            link=f"https://{source}.example/{n}",
            content_hash=hashlib.sha256(f"{n}{title}{text}".encode()).hexdigest(),
            title=title,
            summary=text,
            content=text,
            published_at=published_at if not estimated else (first_seen_at or published_at),
            published_is_estimated=estimated,
            first_seen_at=first_seen_at or datetime.now(UTC),
        )
        session.add(item)
        session.flush()
        for entity in mentions:
            session.add(ItemMention(item_id=item.id, entity_id=entity, entity_kind="chips"))
        return item.id


def evaluate(*item_ids: int, now: datetime | None = None) -> EvaluationReport:
    """Run ``evaluate_items`` in its own committed transaction."""
    with session_scope() as session:
        return evaluation.evaluate_items(session=session, item_ids=list(item_ids), now=now)


def publish(title: str, text: str = "", **kw: Any) -> EvaluationReport:
    """Store one item and evaluate it, as a feed check does."""
    return evaluate(add_item(title, text, **kw))


def deadlines(today: date) -> EvaluationReport:
    with session_scope() as session:
        return signal_deadlines.evaluate_deadlines(session=session, today=today)


def definition(sid: str = "test-signal", yes: list | None = None, no: list | None = None, **kw: Any) -> dict:
    """A valid definition dict (auto review, subject jalapeno) with the given conditions."""
    return {
        "id": sid,
        "question": kw.pop("question", "Does it happen?"),
        "opened_on": kw.pop("opened_on", "2026-08-25"),
        "review": kw.pop("review", "auto"),
        "subjects": kw.pop("subjects", ["jalapeno"]),
        "yes_when": yes
        if yes is not None
        else [{"item": {"mentions_all": ["jalapeno"], "terms_any": ["shipped"]}}],
        "no_when": no or [],
        **kw,
    }


def create(
    sid: str = "test-signal",
    yes: list | None = None,
    no: list | None = None,
    *,
    today: date | None = None,
    **kw: Any,
) -> EvaluationReport:
    """Create a signal through the service (validated, evaluated) in its own transaction."""
    from chipwatch.signals import service

    with session_scope() as session:
        _row, report = service.create_signal(
            session=session, signal_in=definition(sid, yes, no, **kw), today=today or date(2026, 9, 1)
        )
    return report


def signal(sid: str) -> Signal:
    with session_scope(write=False) as session:
        row = session.get(Signal, sid)
        assert row is not None
        return row


def history(sid: str) -> list[SignalHistory]:
    with session_scope(write=False) as session:
        return list(
            session.scalars(
                select(SignalHistory).where(SignalHistory.signal_id == sid).order_by(SignalHistory.id)
            )
        )


def evidence(sid: str) -> list[Evidence]:
    with session_scope(write=False) as session:
        return list(session.scalars(select(Evidence).where(Evidence.signal_id == sid).order_by(Evidence.id)))


def events(sid: str | None = None, type_: str | None = None) -> list[Event]:
    with session_scope(write=False) as session:
        stmt = select(Event).order_by(Event.id)
        if sid is not None:
            stmt = stmt.where(Event.signal_id == sid)
        if type_ is not None:
            stmt = stmt.where(Event.type == type_)
        return list(session.scalars(stmt))


def state(sid: str) -> tuple[str, str | None, int]:
    row = signal(sid)
    return row.status, row.outcome, row.version
