"""Signal queries: the board, one signal with its evidence, its history, and watch health."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlmodel import Session

from chipwatch.signals.models import Evidence, Signal, SignalHistory
from chipwatch.sources.models import FEED_KINDS, Source

STATUSES = ("open", "pending_review", "resolved")
OUTCOMES = ("yes", "no", "annulled")


def feed_sources_for(signal: Signal, feeds: list[Source]) -> list[Source]:
    """The enabled feed sources that can feed ``signal``'s item conditions.

    A condition that names ``sources`` is fed by those; one that names ``source_trust`` by the feeds of
    that trust; one with neither by every feed.  Signals with only fact conditions are fed by every feed,
    since facts reach the knowledge base through the same news.
    """
    chosen: dict[str, Source] = {}
    item_conditions = [c["item"] for c in (*signal.yes_when, *signal.no_when) if "item" in c]
    if not item_conditions:
        return feeds
    for cond in item_conditions:
        ids = set(cond.get("sources") or [])
        trusts = set(cond.get("source_trust") or [])
        for src in feeds:
            if (ids and src.id in ids) or (not ids and (not trusts or src.trust in trusts)):
                chosen[src.id] = src
    return list(chosen.values())


def watch_health(signal: Signal, feeds: list[Source]) -> str:
    """``ok``, ``degraded`` (some of its feeds failing) or ``blind`` (all failing, or none to watch)."""
    mine = feed_sources_for(signal, feeds)
    if not mine:
        return "blind"
    failing = sum(1 for s in mine if s.consecutive_failures > 0)
    if failing == 0:
        return "ok"
    return "blind" if failing == len(mine) else "degraded"


def enabled_feeds(*, session: Session) -> list[Source]:
    """Every enabled source that is a feed (seed articles and reports are not watched)."""
    stmt = select(Source).where(
        Source.enabled.is_(True), Source.kind.in_(FEED_KINDS), Source.url.is_not(None)
    )
    return list(session.scalars(stmt))


def signal_summary(signal: Signal, feeds: list[Source]) -> dict[str, Any]:
    """The board view of a signal (JSON-ready dict)."""
    return {
        "id": signal.id,
        "question": signal.question,
        "status": signal.status,
        "outcome": signal.outcome,
        "version": signal.version,
        "review": signal.review,
        "opened_on": signal.opened_on.isoformat(),
        "deadline": signal.deadline.isoformat() if signal.deadline else None,
        "on_deadline": signal.on_deadline,
        "resolved_at": signal.resolved_at.isoformat() if signal.resolved_at else None,
        "known_at": signal.known_at.isoformat() if signal.known_at else None,
        "subjects": signal.subjects,
        "watch_health": watch_health(signal, feeds),
    }


def list_signals(
    *, session: Session, status: str | None, outcome: str | None, limit: int, after_id: str | None
) -> tuple[list[dict[str, Any]], str | None]:
    """One page of board rows ordered by id and the last id when another page follows."""
    stmt = select(Signal)
    if status:
        stmt = stmt.where(Signal.status == status)
    if outcome:
        stmt = stmt.where(Signal.outcome == outcome)
    if after_id:
        stmt = stmt.where(Signal.id > after_id)
    rows = list(session.scalars(stmt.order_by(Signal.id).limit(limit + 1)))
    more = len(rows) > limit
    rows = rows[:limit]
    feeds = enabled_feeds(session=session)
    return [signal_summary(s, feeds) for s in rows], (rows[-1].id if more and rows else None)


def evidence_view(ev: Evidence) -> dict[str, Any]:
    """JSON-ready evidence row."""
    return {
        "id": ev.id,
        "ref_kind": ev.ref_kind,
        "ref_id": ev.ref_id,
        "side": ev.side,
        "condition_index": ev.condition_index,
        "reason": ev.reason,
        "trust": ev.trust,
        "source_id": ev.source_id,
        "title": ev.title,
        "url": ev.url,
        "published_at": ev.published_at.isoformat() if ev.published_at else None,
        "recorded_at": ev.recorded_at.isoformat(),
    }


def signal_detail(*, session: Session, signal: Signal) -> dict[str, Any]:
    """A signal with its definition and every evidence row (oldest first)."""
    feeds = enabled_feeds(session=session)
    evidence = session.scalars(
        select(Evidence).where(Evidence.signal_id == signal.id).order_by(Evidence.id)
    ).all()
    return {
        **signal_summary(signal, feeds),
        "description": signal.description,
        "tags": signal.tags,
        "yes_when": signal.yes_when,
        "no_when": signal.no_when,
        "watched_sources": sorted(s.id for s in feed_sources_for(signal, feeds)),
        "evidence": [evidence_view(e) for e in evidence],
    }


def history_view(row: SignalHistory) -> dict[str, Any]:
    """JSON-ready history row."""
    return {
        "id": row.id,
        "version": row.version,
        "from_status": row.from_status,
        "to_status": row.to_status,
        "from_outcome": row.from_outcome,
        "to_outcome": row.to_outcome,
        "cause": row.cause,
        "note": row.note,
        "evidence_ids": row.evidence_ids,
        "known_at": row.known_at.isoformat() if row.known_at else None,
        "at": row.at.isoformat(),
    }


def signal_history(*, session: Session, signal_id: str) -> list[dict[str, Any]]:
    """Every transition of a signal, oldest first."""
    rows = session.scalars(
        select(SignalHistory).where(SignalHistory.signal_id == signal_id).order_by(SignalHistory.id)
    ).all()
    return [history_view(r) for r in rows]
