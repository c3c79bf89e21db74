"""The writer of evaluation: record new evidence, move signals with a version check, write the events.

Every function takes the caller's session and only flushes: evidence rows, the signal's state, its
history row and the outbox events commit or roll back together with the change that caused them
(DESIGN.md "Data flow").

Rules applied here, on top of the pure state machine of ``state.py``:

- only evidence recorded by this evaluation can move a signal: a stored match that was already seen
  (or rejected by an analyst) never moves it again. Evidence rows are unique per signal, item or fact,
  side and condition, so two evaluations of the same item record it once and only one of them moves
  the signal;
- the write of a move is ``UPDATE signals ... WHERE id = ? AND version = ?``; an evaluation that lost a
  race re-reads the signal and decides again, so two evaluations never make two moves from one state;
- on a signal with a deadline, evidence published after the deadline day is recorded but does not
  decide (the question was about what happened by then);
- one story is one piece of evidence: items that share a normalised link or a distinctive title
  (``chipwatch.text.stories``) under the same signal, side and condition are one evidence row, whose
  ``sources`` lists every source that carried the story; a later copy from another source is added to
  that list, never recorded (or counted, or announced) as new evidence;
- evidence keeps accruing on resolved and pending signals; each new row writes ``signal.evidence_added``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from types import SimpleNamespace
from typing import Any

from sqlalchemy import and_, or_, select, update
from sqlalchemy.dialects import sqlite
from sqlmodel import Session

from chipwatch.kit.bulk import insert_from_arrays
from chipwatch.metrics import TRANSITIONS
from chipwatch.outbox.emit import emit, emit_many
from chipwatch.signals import state as sm
from chipwatch.signals.events import (
    EVIDENCE_ADDED,
    STATUS_CHANGED,
    evidence_added_data,
    status_changed_data,
)
from chipwatch.signals.models import Evidence, Signal, SignalHistory

__all__ = [
    "EVIDENCE_KEY",
    "MAX_RACE_RETRIES",
    "EvaluationReport",
    "Finding",
    "Plan",
    "SignalNotFound",
    "announce_move",
    "day_end",
    "day_start",
    "load_signal",
    "move_with_retry",
    "record_and_settle",
    "state_of",
]

log = logging.getLogger("chipwatch.signals")

EVIDENCE_BATCH = 1000
"""Evidence rows per INSERT (15 values each): under SQLite's bound-parameter limit (32,766)."""
MAX_RACE_RETRIES = 8
"""Lost version races retried before giving up (each retry means another process moved the signal)."""
EVIDENCE_KEY = ("signal_id", "ref_kind", "ref_id", "side", "condition_index")
"""The columns that make an evidence row unique (the table's unique constraint)."""


class SignalNotFound(LookupError):
    """No signal with this id."""

    def __init__(self, signal_id: str) -> None:
        super().__init__(signal_id)
        self.signal_id = signal_id


# ---------------------------------------------------------------------------------------------------
# Reports
# ---------------------------------------------------------------------------------------------------


@dataclass(slots=True)
class EvaluationReport:
    """What an evaluation did.

    ``items`` and ``facts`` count the rows read; ``matches`` the conditions they satisfied (already
    recorded ones included); ``evidence_ids`` the new evidence rows; ``transitions`` the history rows
    of the moves made; ``deadline_warnings`` the signals that got their ``signal.deadline_approaching``
    event.
    """

    items: int = 0
    facts: int = 0
    matches: int = 0
    evidence_ids: list[int] = field(default_factory=list)
    transitions: list[SignalHistory] = field(default_factory=list)
    deadline_warnings: list[str] = field(default_factory=list)

    def merge(self, other: EvaluationReport) -> EvaluationReport:
        """Add ``other``'s counts and lists to this report; returns ``self``."""
        self.items += other.items
        self.facts += other.facts
        self.matches += other.matches
        self.evidence_ids.extend(other.evidence_ids)
        self.transitions.extend(other.transitions)
        self.deadline_warnings.extend(other.deadline_warnings)
        return self


# ---------------------------------------------------------------------------------------------------
# Findings: satisfied conditions with what their evidence rows need
# ---------------------------------------------------------------------------------------------------


@dataclass(slots=True)
class Finding:
    """A satisfied condition with what its evidence row needs.

    ``published_at`` is the publication time shown as evidence (``None`` when unknown or estimated);
    ``latest`` bounds the publication time from above (an item's first-seen time when the feed gave
    none) and decides whether the match came in time for a deadline (``None``: unknown, counts).
    ``story_link`` and ``story_title`` are an item's story keys (``chipwatch.text.stories``), ``carrier``
    its entry in the evidence's ``sources`` list; all ``None`` for facts.
    """

    signal_id: str
    side: str
    condition_index: int
    reason: str
    ref_kind: str
    ref_id: str
    trust: str | None
    source_id: str | None
    title: str | None
    url: str | None
    published_at: datetime | None
    latest: datetime | None
    story_link: str | None = None
    story_title: str | None = None
    carrier: dict[str, Any] | None = None

    @property
    def key(self) -> tuple[str, str, str, str, int]:
        """The evidence row's unique key (``EVIDENCE_KEY`` order)."""
        return (self.signal_id, self.ref_kind, self.ref_id, self.side, self.condition_index)


_END_OF_TIME = datetime.max.replace(tzinfo=UTC)


def day_end(day: date) -> datetime:
    """The first moment (UTC) after ``day``; the end of time for the last representable date."""
    return (
        _END_OF_TIME if day == date.max else datetime.combine(day + timedelta(days=1), time.min, tzinfo=UTC)
    )


def day_start(day: date | None) -> datetime | None:
    """The first moment (UTC) of ``day``; ``None`` for ``None``."""
    return None if day is None else datetime.combine(day, time.min, tzinfo=UTC)


# ---------------------------------------------------------------------------------------------------
# Recording evidence
# ---------------------------------------------------------------------------------------------------


def _insert_ignoring_duplicates(session: Session, values: list[dict[str, Any]]) -> list[Any]:
    """Insert evidence rows, skipping those that exist; returns ``(id, key...)`` of the new ones.

    ``ON CONFLICT DO NOTHING`` (on any unique key: the evidence key or a story key) makes a concurrent
    evaluation of the same item or story wait for the first one and then skip the row instead of
    failing, so the row, and the move it causes, happen once. A new signal can match thousands of
    stored items, and this runs in the write transaction: on SQLite one Core statement executed for
    every row (SQLAlchemy sends them ``EVIDENCE_BATCH`` to a multi-row INSERT ... RETURNING, compiled
    once), on PostgreSQL one statement over column arrays (:func:`chipwatch.kit.bulk.insert_from_arrays`).
    """
    if not values:
        return []
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql":
        return insert_from_arrays(
            session.connection(), Evidence.__table__, values, ignore_conflicts=True,
            returning=("id", *EVIDENCE_KEY),
        )
    insert = sqlite.insert
    stmt = (
        insert(Evidence.__table__)
        .on_conflict_do_nothing()
        .returning(Evidence.id, *(getattr(Evidence, k) for k in EVIDENCE_KEY))
    )
    result = session.connection().execute(
        stmt.execution_options(insertmanyvalues_page_size=EVIDENCE_BATCH), values
    )
    return result.all()


def _evidence_values(f: Finding, now: datetime, copies: Sequence[Finding] = ()) -> dict[str, Any]:
    return {
        "signal_id": f.signal_id,
        "ref_kind": f.ref_kind,
        "ref_id": f.ref_id,
        "side": f.side,
        "condition_index": f.condition_index,
        "reason": f.reason,
        "trust": f.trust,
        "source_id": f.source_id,
        "title": f.title,
        "url": f.url,
        "published_at": f.published_at,
        "recorded_at": now,
        "story_link": f.story_link,
        "story_title": f.story_title,
        "sources": [c.carrier for c in (f, *copies) if c.carrier is not None],
    }


def _story_places(f: Finding) -> list[tuple[Any, ...]]:
    place = (f.signal_id, f.side, f.condition_index)
    return [(*place, kind, key) for kind, key in (("link", f.story_link), ("title", f.story_title)) if key]


def _stories(ordered: Sequence[Finding]) -> tuple[list[Finding], dict[tuple, list[Finding]]]:
    """Group findings of one story under the same signal, side and condition: the first of each story
    (in ``ordered`` order) and, by its key, the other findings of that story."""
    first_of: dict[tuple[Any, ...], Finding] = {}
    leaders: list[Finding] = []
    copies: dict[tuple, list[Finding]] = {}
    for f in ordered:
        places = _story_places(f)
        leader = next((first_of[p] for p in places if p in first_of), None)
        if leader is None:
            leaders.append(f)
            copies[f.key] = []
            leader = f
        else:
            copies[leader.key].append(f)
        for p in places:
            first_of.setdefault(p, leader)
    return leaders, copies


def _add_carriers(session: Session, f: Finding, copies: Sequence[Finding]) -> None:
    """A story already recorded (by an earlier evaluation, or a concurrent one that won the insert): add
    the sources of ``f`` and ``copies`` that its row does not list yet."""
    carriers = [c.carrier for c in (f, *copies) if c.carrier is not None]
    if not carriers:
        return
    same_place = and_(
        Evidence.signal_id == f.signal_id,
        Evidence.side == f.side,
        Evidence.condition_index == f.condition_index,
    )
    ways = [and_(Evidence.ref_kind == f.ref_kind, Evidence.ref_id == f.ref_id)]
    ways += [getattr(Evidence, f"story_{kind}") == key for *_p, kind, key in _story_places(f)]
    stmt = select(Evidence).where(same_place, or_(*ways)).order_by(Evidence.id).limit(1)
    if session.get_bind().dialect.name == "postgresql":
        stmt = stmt.with_for_update()
    row = session.scalars(stmt).first()
    if row is None:
        return
    listed = {(c.get("source_id"), c.get("item_id")) for c in row.sources or []}
    added = [c for c in carriers if (c["source_id"], c["item_id"]) not in listed]
    if added:
        row.sources = [*(row.sources or []), *added]
        session.flush()


def _record(
    session: Session, found: Sequence[Finding], now: datetime
) -> dict[str, list[tuple[Any, Finding]]]:
    """Write the evidence rows that are new, one per story; returns them per signal with their finding.

    A finding whose story is already recorded adds its source to that row (:func:`_add_carriers`).
    """
    unique: dict[tuple[str, str, str, str, int], Finding] = {}
    for f in found:
        unique.setdefault(f.key, f)
    if not unique:
        return {}
    # One global order for every writer, so concurrent evaluations take row locks in the same order.
    leaders, copies = _stories([unique[k] for k in sorted(unique)])
    new: dict[str, list[tuple[Any, Finding]]] = {}
    values = [_evidence_values(f, now, copies[f.key]) for f in leaders]
    for row in _insert_ignoring_duplicates(session, values):
        f = unique[(row.signal_id, row.ref_kind, row.ref_id, row.side, row.condition_index)]
        # A plain record of the row, not an ORM object: enough for the payload builders, it keeps the
        # session's map clean, and costs microseconds where a model instance costs a millisecond (this
        # runs under the write lock, for every row a new signal matches).
        ev = SimpleNamespace(id=row.id, **_evidence_values(f, now, copies[f.key]))
        new.setdefault(f.signal_id, []).append((ev, f))
    inserted = {f.key for rows in new.values() for _ev, f in rows}
    for f in leaders:
        if f.key not in inserted:
            _add_carriers(session, f, copies[f.key])
    for rows in new.values():
        rows.sort(key=lambda pair: pair[0].id or 0)
    return new


# ---------------------------------------------------------------------------------------------------
# Moves: versioned writes, history rows, events
# ---------------------------------------------------------------------------------------------------


def load_signal(session: Session, signal_id: str) -> Signal:
    """The signal as committed now (``populate_existing``: never a stale copy from this session).

    Raises ``SignalNotFound``.
    """
    signal = session.get(Signal, signal_id, populate_existing=True)
    if signal is None:
        raise SignalNotFound(signal_id)
    return signal


def state_of(signal: Signal) -> sm.State:
    """The state-machine view of a stored signal (status, outcome, version)."""
    return sm.State(signal.status, signal.outcome, signal.version)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class Plan:
    """A move to write, the evidence that decided it and the ``known_at`` it records."""

    move: sm.Move
    evidence_ids: tuple[int, ...] = ()
    known_at: datetime | None = None


def _write_move(
    session: Session, signal: Signal, before: sm.State, plan: Plan, now: datetime
) -> SignalHistory | None:
    """Apply ``plan`` if the signal still has the version of ``before``; else ``None`` (a lost race)."""
    move = plan.move
    values: dict[str, Any] = {
        "status": move.to_status,
        "outcome": move.to_outcome,
        "version": before.version + 1,
        "known_at": None if move.to_status == "open" else plan.known_at,
        "resolved_at": now if move.to_status == "resolved" else None,
    }
    result = session.execute(
        update(Signal)
        .where(Signal.id == signal.id, Signal.version == before.version)
        .values(**values)
        .execution_options(synchronize_session=False)
    )
    if result.rowcount != 1:
        return None
    history = SignalHistory(
        signal_id=signal.id,
        version=before.version + 1,
        from_status=before.status,
        to_status=move.to_status,
        from_outcome=before.outcome,
        to_outcome=move.to_outcome,
        cause=move.cause,
        note=move.note,
        evidence_ids=list(plan.evidence_ids),
        known_at=plan.known_at,
        at=now,
    )
    session.add(history)
    session.flush()
    session.refresh(signal)
    TRANSITIONS.labels(cause=move.cause.split(":")[0], to_status=move.to_status).inc()
    return history


def _evidence_rows(session: Session, ids: Sequence[int], known: dict[int, Any] | None = None) -> list[Any]:
    """The evidence rows with ``ids`` (in that order) as plain rows: a move can cite every match of a
    new signal, and model instances cost a millisecond each under the write lock. Rows in ``known``
    (just written by this transaction, by id) are not read again."""
    if not ids:
        return []
    table = Evidence.__table__
    rows: dict[int, Any] = {i: known[i] for i in ids if known and i in known}
    ordered = [i for i in ids if i not in rows]
    for start in range(0, len(ordered), EVIDENCE_BATCH):
        chunk = ordered[start : start + EVIDENCE_BATCH]
        rows.update((row.id, row) for row in session.execute(select(table).where(table.c.id.in_(chunk))))
    return [rows[i] for i in ids if i in rows]


def announce_move(
    session: Session,
    signal: Signal,
    history: SignalHistory,
    report: EvaluationReport | None,
    known: dict[int, Any] | None = None,
) -> None:
    """Write ``signal.status_changed`` for the move in ``history``, log it and add it to ``report``.

    ``known`` maps ids of evidence rows this transaction just wrote to those rows (the deciding ones
    are not read back)."""
    evidence = _evidence_rows(session, history.evidence_ids, known)
    emit(session, STATUS_CHANGED, status_changed_data(signal, history, evidence), signal_id=signal.id)
    log.info(
        "signal moved",
        extra={
            "signal_id": signal.id,
            "version": history.version,
            "to_status": history.to_status,
            "outcome": history.to_outcome,
            "cause": history.cause,
        },
    )
    if report is not None:
        report.transitions.append(history)


def move_with_retry(
    session: Session,
    signal_id: str,
    plan_for: Callable[[Signal], Plan | None],
    now: datetime,
    loaded: Signal | None = None,
) -> tuple[Signal, sm.State, SignalHistory | None]:
    """Read, decide with ``plan_for``, write with a version check; on a lost race read and decide again.

    ``loaded`` is the signal when the caller has just read it (first attempt only). Returns the signal
    after the call, its state when the last decision was taken, and the history row written (``None``
    when no move was due); the caller announces the move. ``plan_for`` may raise
    (``TransitionNotAllowed``). Raises ``SignalNotFound``, or ``RuntimeError`` after
    ``MAX_RACE_RETRIES`` lost races.
    """
    for attempt in range(MAX_RACE_RETRIES):
        signal = loaded if attempt == 0 and loaded is not None else load_signal(session, signal_id)
        before = state_of(signal)
        plan = plan_for(signal)
        if plan is None:
            return signal, before, None
        history = _write_move(session, signal, before, plan, now)
        if history is not None:
            return signal, before, history
        log.info("signal version race lost; deciding again", extra={"signal_id": signal_id})
    raise RuntimeError(f"signal {signal_id!r} kept changing under {MAX_RACE_RETRIES} evaluations")


# ---------------------------------------------------------------------------------------------------
# Settling: what new evidence does to its signal
# ---------------------------------------------------------------------------------------------------


def _decisive(signal: Signal, ref_kind: str, latest: datetime | None) -> bool:
    if ref_kind == "item" and signal.require_fact:
        return False  # the signal waits for an accepted fact; the item stays as evidence
    if signal.deadline is None or latest is None:
        return True
    return latest < day_end(signal.deadline)


def evidence_plan(signal: Signal, rows: list[tuple[Evidence, str, datetime | None]]) -> Plan | None:
    """The move evidence makes on ``signal`` as it is now (``None``: no move).

    ``rows`` pairs each evidence row with its reference kind and the latest time its publication can
    have been (``None``: unknown, which counts as in time). Both fresh evidence and evidence left
    standing after a retraction are decided here, so the deadline and ``require_fact`` rules are the
    same for both.
    """
    candidates = [
        sm.Candidate(
            key=ev.id or 0,
            side=ev.side,  # type: ignore[arg-type]
            condition_index=ev.condition_index,
            published_at=ev.published_at,
            decisive=_decisive(signal, ref_kind, latest),
            reason=ev.reason,
        )
        for ev, ref_kind, latest in rows
    ]
    decision = sm.decide_on_evidence(state_of(signal), signal.review, candidates)
    if decision.move is None:
        return None
    return Plan(decision.move, decision.deciding, decision.known_at)


def _settle(
    session: Session,
    signal_id: str,
    new: list[tuple[Any, Finding]],
    now: datetime,
    report: EvaluationReport,
    loaded: Signal | None = None,
) -> None:
    """Decide what ``new`` evidence does to the signal, write the move and the events."""
    # The move is decided first so that a lost race cannot leave events describing a stale state; the
    # evidence events carry the state the evidence arrived in and precede the status change in the
    # outbox, which is delivered in id order.
    rows = [(ev, f.ref_kind, f.latest) for ev, f in new]
    signal, before, history = move_with_retry(
        session, signal_id, lambda current: evidence_plan(current, rows), now, loaded
    )
    arrived = SimpleNamespace(
        id=signal.id,
        question=signal.question,
        status=before.status,
        outcome=before.outcome,
        version=before.version,
    )
    # One insert for all of them: a new signal can match hundreds of stored items at once.
    datas = [evidence_added_data(arrived, ev) for ev, _f in new]
    emit_many(session, EVIDENCE_ADDED, datas, signal_id=signal_id)
    report.evidence_ids.extend(ev.id or 0 for ev, _f in new)
    if history is not None:
        announce_move(session, signal, history, report, {ev.id: ev for ev, _f in new})


def record_and_settle(
    session: Session, found: Sequence[Finding], now: datetime, report: EvaluationReport
) -> None:
    """Record the new evidence among ``found``, then move each signal it touches and write the events.

    Findings already stored as evidence are skipped (they never move a signal twice). Adds the new
    evidence ids and the moves to ``report``.
    """
    new = _record(session, found, now)
    if not new:
        return
    # One read for every signal the new evidence touches, after the evidence is written; a signal that
    # changes after this read loses its version check and is read again.
    loaded = {
        signal.id: signal
        for signal in session.scalars(
            select(Signal).where(Signal.id.in_(sorted(new))).execution_options(populate_existing=True)
        )
    }
    for signal_id in sorted(new):
        _settle(session, signal_id, new[signal_id], now, report, loaded.get(signal_id))
