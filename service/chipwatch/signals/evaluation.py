"""Signal evaluation: match new items and facts, record evidence, move signals, write events.

Every entry point takes a keyword-only ``session`` and only flushes: evidence rows, the signal's state,
its history row and the outbox events (``chipwatch.events.emit``) commit or roll back together with the
change that caused them (DESIGN.md "Data flow").

When evaluation runs (issue 4, DESIGN.md "Signals"):

- ``evaluate_items``: right after the sources store flushed new or updated items;
- ``evaluate_fact``: when a result or deployment is written (registered in
  ``chipwatch.knowledge.service.fact_listeners`` when this module is imported);
- ``evaluate_signal``: when a signal is created or its definition changes (all stored items and facts);
- ``evaluate_deadlines``: at creation, at start-up and from the ``signals.deadlines`` job.

Rules applied here, on top of the pure state machine of ``state.py``:

- only evidence recorded by this evaluation can move a signal: a stored match that was already seen
  (or rejected by an analyst) never moves it again. Evidence rows are unique per signal, item or fact,
  side and condition, so two evaluations of the same item record it once and only one of them moves
  the signal;
- the write of a move is ``UPDATE signals ... WHERE id = ? AND version = ?``; an evaluation that lost a
  race re-reads the signal and decides again, so two evaluations never make two moves from one state;
- on a signal with a deadline, evidence published after the deadline day is recorded but does not
  decide (the question was about what happened by then). An item's publication time is bounded by the
  time it was first seen when the feed gave none;
- evidence keeps accruing on resolved and pending signals; each new row writes ``signal.evidence_added``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from types import SimpleNamespace
from typing import Any

from sqlalchemy import and_, delete, func, or_, select, union_all, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session

from chipwatch.config import get_settings
from chipwatch.events import emit
from chipwatch.knowledge.models import Benchmark, Chip, Deployment, Model, Result, Vendor, utcnow
from chipwatch.metrics import TRANSITIONS
from chipwatch.signals import state as sm
from chipwatch.signals.definition import DefinitionError, ItemCondition, SignalDefinition
from chipwatch.signals.models import Evidence, Signal, SignalHistory
from chipwatch.signals.rules import CompiledRules, Entity, FactView, ItemView, Match, compile_signals
from chipwatch.sources.models import Item, Source
from chipwatch.webhooks.service import (
    deadline_approaching_data,
    evidence_added_data,
    status_changed_data,
)

__all__ = [
    "DEFINITION_COLUMNS",
    "EvaluationReport",
    "SignalNotFound",
    "TransitionRecord",
    "all_entity_ids",
    "apply_manual",
    "clear_rules_cache",
    "compiled_rules",
    "definition_document",
    "definition_of",
    "entities_for",
    "evaluate_deadlines",
    "evaluate_fact",
    "evaluate_items",
    "evaluate_seeded",
    "evaluate_signal",
    "rules_compilations",
]

log = logging.getLogger("chipwatch.signals")

DEFINITION_COLUMNS = (
    "id",
    "question",
    "description",
    "tags",
    "opened_on",
    "deadline",
    "on_deadline",
    "review",
    "subjects",
    "yes_when",
    "no_when",
)
"""Signal columns that hold the definition (the rest is state owned by this module)."""

ENTITY_TABLES = (Vendor, Chip, Model, Benchmark)
FACT_TABLES: dict[str, tuple[str, type[Result] | type[Deployment]]] = {
    "results": ("result", Result),
    "deployments": ("deployment", Deployment),
}
"""Knowledge-base kind (API path segment) -> (evidence ``ref_kind``, table) for the kinds conditions read."""

ITEM_BATCH = 500
"""Items read per query; keeps IN lists well under SQLite's bound-parameter limit."""
EVIDENCE_BATCH = 200
MAX_RACE_RETRIES = 8
"""Lost version races retried before giving up (each retry means another process moved the signal)."""


class SignalNotFound(LookupError):
    """No signal with this id."""

    def __init__(self, signal_id: str) -> None:
        super().__init__(signal_id)
        self.signal_id = signal_id


# ---------------------------------------------------------------------------------------------------
# Reports
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TransitionRecord:
    """One move made by an evaluation or an analyst (mirrors the history row written)."""

    signal_id: str
    version: int
    from_status: str
    from_outcome: str | None
    to_status: str
    to_outcome: str | None
    cause: str
    history_id: int


@dataclass(slots=True)
class EvaluationReport:
    """What an evaluation did.

    ``items`` and ``facts`` count the rows read; ``matches`` the conditions they satisfied (already
    recorded ones included); ``evidence_ids`` the new evidence rows; ``transitions`` the moves made;
    ``deadline_warnings`` the signals that got their ``signal.deadline_approaching`` event.
    """

    items: int = 0
    facts: int = 0
    matches: int = 0
    evidence_ids: list[int] = field(default_factory=list)
    transitions: list[TransitionRecord] = field(default_factory=list)
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
# Definitions and entities
# ---------------------------------------------------------------------------------------------------


def definition_document(signal: Signal) -> dict[str, Any]:
    """The signal's definition as a JSON-ready dict (the shape ``POST /v1/signals`` takes)."""
    doc: dict[str, Any] = {}
    for column in DEFINITION_COLUMNS:
        value = getattr(signal, column)
        if isinstance(value, date):
            value = value.isoformat()
        if value is None and column == "description":
            continue
        doc[column] = value
    return doc


def definition_of(signal: Signal) -> SignalDefinition:
    """The validated model of a stored signal's definition.

    Stored definitions passed ``validate_definition`` when written, so only the models run here (the
    schema check is skipped). Raises ``DefinitionError`` if the row was edited into an invalid shape.
    """
    try:
        return SignalDefinition.model_validate(definition_document(signal))
    except ValueError as exc:
        raise DefinitionError("", f"stored signal {signal.id!r} is invalid: {exc}") from exc


def _entity_rows(session: Session, ids: Iterable[str] | None) -> list[tuple[str, str, tuple[str, ...]]]:
    """``(id, name, aliases)`` of the named entities (every entity when ``ids`` is None), sorted."""
    wanted = None if ids is None else sorted(set(ids))
    if wanted == []:
        return []
    selects = []
    for table in ENTITY_TABLES:
        stmt = select(table.id, table.name, table.aliases)
        if wanted is not None:
            stmt = stmt.where(table.id.in_(wanted))
        selects.append(stmt)
    rows = session.execute(union_all(*selects)).all()
    return sorted((r[0], r[1], tuple(r[2] or ())) for r in rows)


def entities_for(*, session: Session, entity_ids: Iterable[str] | None = None) -> list[Entity]:
    """Matcher entities (id, name and aliases) for ``entity_ids`` (every KB entity when None)."""
    return [Entity(i, (name, *aliases)) for i, name, aliases in _entity_rows(session, entity_ids)]


def all_entity_ids(*, session: Session) -> set[str]:
    """Every vendor, chip, model and benchmark id (what signal definitions may name)."""
    return {i for i, _n, _a in _entity_rows(session, None)}


# ---------------------------------------------------------------------------------------------------
# The compiled-rules cache
# ---------------------------------------------------------------------------------------------------


class _RulesCache:
    """Process-wide compiled rules, rebuilt only when the definitions or the names they use change.

    The fingerprint is two cheap reads: ``count(*), max(updated_at)`` of the signals (every definition
    write bumps ``updated_at``: this module, the API and the seed loader do) and the name and aliases of
    the entities the definitions name. It is read from the database on every call, so a definition or
    alias written by another process (API replica, worker) is picked up at once.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._signals_key: tuple[Any, ...] | None = None
        self._defs: list[SignalDefinition] = []
        self._entity_ids: set[str] = set()
        self._entity_key: tuple[Any, ...] | None = None
        self._rules: CompiledRules | None = None
        self.compilations = 0

    def get(self, session: Session) -> CompiledRules:
        url = str(session.get_bind().engine.url)
        count, latest = session.execute(select(func.count(), func.max(Signal.updated_at))).one()
        signals_key = (url, count, latest)
        with self._lock:
            same_defs = signals_key == self._signals_key
            defs, entity_ids = (self._defs, self._entity_ids) if same_defs else (None, None)
        if defs is None or entity_ids is None:
            defs = self._load_definitions(session)
            entity_ids = set().union(*(d.entity_ids() for d in defs)) if defs else set()
        rows = _entity_rows(session, entity_ids)
        entity_key = tuple(rows)
        with self._lock:
            if same_defs and entity_key == self._entity_key and self._rules is not None:
                return self._rules
        rules = _compile_tolerant(defs, [Entity(i, (n, *a)) for i, n, a in rows])
        with self._lock:
            self._signals_key, self._defs, self._entity_ids = signals_key, defs, entity_ids
            self._entity_key, self._rules = entity_key, rules
            self.compilations += 1
        log.info("signal rules compiled", extra={"signals": len(rules.signal_ids)})
        return rules

    @staticmethod
    def _load_definitions(session: Session) -> list[SignalDefinition]:
        defs = []
        for signal in session.scalars(select(Signal).order_by(Signal.id)):
            try:
                defs.append(definition_of(signal))
            except DefinitionError:
                log.exception("stored signal definition skipped", extra={"signal_id": signal.id})
        return defs

    def clear(self) -> None:
        with self._lock:
            self._signals_key = self._entity_key = self._rules = None
            self._defs, self._entity_ids = [], set()


def _compile_tolerant(defs: Sequence[SignalDefinition], entities: Sequence[Entity]) -> CompiledRules:
    """Compile every definition; one that names a vanished entity is left out (logged), not fatal."""
    try:
        return compile_signals(defs, entities)
    except DefinitionError:
        kept = []
        for defn in defs:
            try:
                compile_signals([defn], entities)
                kept.append(defn)
            except DefinitionError as exc:
                log.error("signal left out of matching: %s", exc, extra={"signal_id": defn.id})
        return compile_signals(kept, entities)


_rules_cache = _RulesCache()


def compiled_rules(*, session: Session) -> CompiledRules:
    """The compiled rules of every stored signal (cached process-wide; see ``_RulesCache``)."""
    return _rules_cache.get(session)


def clear_rules_cache() -> None:
    """Forget the compiled rules (tests; the fingerprint makes this unnecessary in service)."""
    _rules_cache.clear()


def rules_compilations() -> int:
    """How many times the process compiled the full rule set (tests check the cache with it)."""
    return _rules_cache.compilations


# ---------------------------------------------------------------------------------------------------
# Matches to record
# ---------------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Found:
    """A satisfied condition with what its evidence row needs.

    ``published_at`` is the publication time shown as evidence (``None`` when unknown or estimated);
    ``latest`` bounds the publication time from above (an item's first-seen time when the feed gave
    none) and decides whether the match came in time for a deadline (``None``: unknown, counts).
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

    @property
    def key(self) -> tuple[str, str, str, str, int]:
        return (self.signal_id, self.ref_kind, self.ref_id, self.side, self.condition_index)


def _item_text(summary: str | None, content: str | None) -> str:
    # Feeds often repeat the summary as the start of the content: read it once.
    summary, content = summary or "", content or ""
    if not content or summary in content:
        return content or summary
    if content in summary:
        return summary
    return f"{summary}\n{content}"


_ITEM_COLUMNS = (
    Item.id,
    Item.source_id,
    Item.title,
    Item.summary,
    Item.content,
    Item.link,
    Item.published_at,
    Item.published_is_estimated,
    Item.first_seen_at,
    Source.trust,
)


def _item_found(row: Any, match: Match) -> _Found:
    estimated = bool(row.published_is_estimated)
    return _Found(
        signal_id=match.signal_id,
        side=match.side,
        condition_index=match.condition_index,
        reason=match.reason,
        ref_kind="item",
        ref_id=str(row.id),
        trust=row.trust,
        source_id=row.source_id,
        title=row.title or None,
        url=row.link,
        published_at=None if estimated or row.published_at is None else row.published_at,
        latest=row.published_at if row.published_at is not None and not estimated else row.first_seen_at,
    )


def _item_view(row: Any) -> ItemView:
    return ItemView(
        id=row.id,
        source_id=row.source_id,
        source_trust=row.trust,
        title=row.title or "",
        text=_item_text(row.summary, row.content),
        published_at=row.published_at,
        published_is_estimated=bool(row.published_is_estimated),
    )


def _match_rows(rules: CompiledRules, rows: Iterable[Any], report: EvaluationReport) -> list[_Found]:
    found = []
    for row in rows:
        report.items += 1
        for match in rules.match_item(_item_view(row)):
            found.append(_item_found(row, match))
    report.matches += len(found)
    return found


_END_OF_TIME = datetime.max.replace(tzinfo=UTC)


def _day_end(day: date) -> datetime:
    """The first moment (UTC) after ``day``; the end of time for the last representable date."""
    return (
        _END_OF_TIME if day == date.max else datetime.combine(day + timedelta(days=1), time.min, tzinfo=UTC)
    )


def _day_start(day: date | None) -> datetime | None:
    return None if day is None else datetime.combine(day, time.min, tzinfo=UTC)


def _fact_found(session: Session, ref_kind: str, row: Any, match: Match) -> _Found:
    # A fact's trust is how far it has been checked (vendor_reported, witnessed, independent).
    day_precise = getattr(row, "published_on_precision", "day") == "day"
    published = _day_start(row.published_on) if day_precise else None
    held = row.published_on if day_precise and row.published_on else getattr(row, "as_of", None)
    source = session.get(Source, row.source_id) if row.source_id else None
    return _Found(
        signal_id=match.signal_id,
        side=match.side,
        condition_index=match.condition_index,
        reason=match.reason,
        ref_kind=ref_kind,
        ref_id=str(row.id),
        trust=row.verification,
        source_id=row.source_id,
        title=_fact_title(ref_kind, row),
        url=source.url if source is not None else None,
        published_at=published,
        latest=_day_end(held) - timedelta(microseconds=1) if held else None,
    )


def _fact_title(ref_kind: str, row: Any) -> str:
    if ref_kind == "result":
        chips = ", ".join(row.chip_ids or []) or "?"
        versus = f" vs {', '.join(row.baseline_ids)}" if row.baseline_ids else ""
        value = row.value if row.value is not None else row.value_min
        figure = "" if value is None else f" = {value:g}{(' ' + row.unit) if row.unit else ''}"
        bench = f" on {row.benchmark_id}" if row.benchmark_id else ""
        return f"result {row.id}: {chips}{versus} {row.metric}{figure}{bench} ({row.verification})"
    capacity = f", {row.capacity_mw:g} MW reached" if row.capacity_mw is not None else ""
    return f"deployment {row.id}: {row.chip_id or row.system_label or '?'} {row.status}{capacity}"


# ---------------------------------------------------------------------------------------------------
# Recording evidence
# ---------------------------------------------------------------------------------------------------

_EVIDENCE_KEY = ["signal_id", "ref_kind", "ref_id", "side", "condition_index"]


def _insert_ignoring_duplicates(session: Session, values: list[dict[str, Any]]) -> list[Any]:
    """Insert evidence rows, skipping those that exist; returns ``(id, key...)`` of the new ones.

    ``ON CONFLICT DO NOTHING`` makes a concurrent evaluation of the same item wait for the first one and
    then skip the row instead of failing, so the row, and the move it causes, happen once.
    """
    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    out = []
    for start in range(0, len(values), EVIDENCE_BATCH):
        stmt = (
            insert(Evidence)
            .values(values[start : start + EVIDENCE_BATCH])
            .on_conflict_do_nothing(index_elements=_EVIDENCE_KEY)
            .returning(Evidence.id, *(getattr(Evidence, k) for k in _EVIDENCE_KEY))
        )
        out.extend(session.execute(stmt).all())
    return out


def _record(
    session: Session, found: Sequence[_Found], now: datetime
) -> dict[str, list[tuple[Evidence, _Found]]]:
    """Write the evidence rows that are new; returns them per signal with their match."""
    unique: dict[tuple[str, str, str, str, int], _Found] = {}
    for f in found:
        unique.setdefault(f.key, f)
    if not unique:
        return {}
    # One global order for every writer, so concurrent evaluations take row locks in the same order.
    ordered = [unique[k] for k in sorted(unique)]
    values = [
        {
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
        }
        for f in ordered
    ]
    new: dict[str, list[tuple[Evidence, _Found]]] = {}
    for row in _insert_ignoring_duplicates(session, values):
        f = unique[(row.signal_id, row.ref_kind, row.ref_id, row.side, row.condition_index)]
        # A detached row object: enough for payload builders, and it keeps the session's map clean.
        ev = Evidence(
            id=row.id,
            signal_id=f.signal_id,
            ref_kind=f.ref_kind,
            ref_id=f.ref_id,
            side=f.side,
            condition_index=f.condition_index,
            reason=f.reason,
            trust=f.trust,
            source_id=f.source_id,
            title=f.title,
            url=f.url,
            published_at=f.published_at,
            recorded_at=now,
        )
        new.setdefault(f.signal_id, []).append((ev, f))
    for rows in new.values():
        rows.sort(key=lambda pair: pair[0].id or 0)
    return new


# ---------------------------------------------------------------------------------------------------
# Moves: versioned writes, history rows, events
# ---------------------------------------------------------------------------------------------------


def _load(session: Session, signal_id: str) -> Signal:
    """The signal as committed now (``populate_existing``: never a stale copy from this session)."""
    signal = session.get(Signal, signal_id, populate_existing=True)
    if signal is None:
        raise SignalNotFound(signal_id)
    return signal


def _state(signal: Signal) -> sm.State:
    return sm.State(signal.status, signal.outcome, signal.version)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class _Plan:
    move: sm.Move
    evidence_ids: tuple[int, ...] = ()
    known_at: datetime | None = None


def _write_move(
    session: Session, signal: Signal, before: sm.State, plan: _Plan, now: datetime
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


def _evidence_rows(session: Session, ids: Sequence[int]) -> list[Evidence]:
    if not ids:
        return []
    rows = {e.id: e for e in session.scalars(select(Evidence).where(Evidence.id.in_(list(ids))))}
    return [rows[i] for i in ids if i in rows]


def _announce_move(
    session: Session, signal: Signal, history: SignalHistory, report: EvaluationReport | None
) -> None:
    evidence = _evidence_rows(session, history.evidence_ids)
    emit(
        session, "signal.status_changed", status_changed_data(signal, history, evidence), signal_id=signal.id
    )
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
        report.transitions.append(
            TransitionRecord(
                signal_id=signal.id,
                version=history.version,
                from_status=history.from_status,
                from_outcome=history.from_outcome,
                to_status=history.to_status,
                to_outcome=history.to_outcome,
                cause=history.cause,
                history_id=history.id or 0,
            )
        )


def _move_with_retry(
    session: Session,
    signal_id: str,
    plan_for: Callable[[Signal], _Plan | None],
    now: datetime,
    loaded: Signal | None = None,
) -> tuple[Signal, sm.State, SignalHistory | None]:
    """Read, decide with ``plan_for``, write with a version check; on a lost race read and decide again.

    ``loaded`` is the signal when the caller has just read it (first attempt only). Returns the signal
    after the call, its state when the last decision was taken, and the history row written (``None``
    when no move was due); the caller announces the move. ``plan_for`` may raise
    (``TransitionNotAllowed``). Raises ``RuntimeError`` after ``MAX_RACE_RETRIES`` lost races.
    """
    for attempt in range(MAX_RACE_RETRIES):
        signal = loaded if attempt == 0 and loaded is not None else _load(session, signal_id)
        before = _state(signal)
        plan = plan_for(signal)
        if plan is None:
            return signal, before, None
        history = _write_move(session, signal, before, plan, now)
        if history is not None:
            return signal, before, history
        log.info("signal version race lost; deciding again", extra={"signal_id": signal_id})
    raise RuntimeError(f"signal {signal_id!r} kept changing under {MAX_RACE_RETRIES} evaluations")


def _decisive(signal: Signal, f: _Found) -> bool:
    if signal.deadline is None or f.latest is None:
        return True
    return f.latest < _day_end(signal.deadline)


def _settle(
    session: Session,
    signal_id: str,
    new: list[tuple[Evidence, _Found]],
    now: datetime,
    report: EvaluationReport,
    loaded: Signal | None = None,
) -> None:
    """Decide what ``new`` evidence does to the signal, write the move and the events."""

    def plan_for(signal: Signal) -> _Plan | None:
        candidates = [
            sm.Candidate(
                key=ev.id or 0,
                side=ev.side,  # type: ignore[arg-type]
                condition_index=ev.condition_index,
                published_at=ev.published_at,
                decisive=_decisive(signal, f),
                reason=ev.reason,
            )
            for ev, f in new
        ]
        decision = sm.decide_on_evidence(_state(signal), signal.review, candidates)
        if decision.move is None:
            return None
        return _Plan(decision.move, decision.deciding, decision.known_at)

    # The move is decided first so that a lost race cannot leave events describing a stale state; the
    # evidence events carry the state the evidence arrived in and precede the status change in the
    # outbox, which is delivered in id order.
    signal, before, history = _move_with_retry(session, signal_id, plan_for, now, loaded)
    arrived = SimpleNamespace(
        id=signal.id,
        question=signal.question,
        status=before.status,
        outcome=before.outcome,
        version=before.version,
    )
    for ev, _f in new:
        emit(session, "signal.evidence_added", evidence_added_data(arrived, ev), signal_id=signal_id)
        report.evidence_ids.append(ev.id or 0)
    if history is not None:
        _announce_move(session, signal, history, report)


def _record_and_settle(
    session: Session, found: Sequence[_Found], now: datetime, report: EvaluationReport
) -> None:
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


# ---------------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------------


def _now(now: datetime | None) -> datetime:
    return now if now is not None else utcnow()


def evaluate_items(
    *, session: Session, item_ids: Iterable[int], now: datetime | None = None
) -> EvaluationReport:
    """Match stored items against every signal; record new evidence and move the signals it decides.

    ``item_ids`` are ids of ``items`` rows already flushed in ``session`` (new or updated by a feed
    check). Each item's title and text are read once through the compiled rules, whatever the number of
    signals. Matches already recorded are skipped, so calling it again for the same items changes
    nothing. ``now`` (UTC) stamps evidence and history rows (default: the clock).

    Returns an ``EvaluationReport``. Raises nothing of its own; database errors propagate and the
    caller's transaction rolls back with the items.
    """
    ids = sorted({int(i) for i in item_ids})
    report = EvaluationReport()
    if not ids:
        return report
    now = _now(now)
    rules = compiled_rules(session=session)
    found: list[_Found] = []
    for start in range(0, len(ids), ITEM_BATCH):
        chunk = ids[start : start + ITEM_BATCH]
        stmt = select(*_ITEM_COLUMNS).join(Source, Source.id == Item.source_id).where(Item.id.in_(chunk))
        found.extend(_match_rows(rules, session.execute(stmt), report))
    _record_and_settle(session, found, now, report)
    return report


def _fact_view(fact_kind: str, row: Any) -> FactView:
    return FactView(fact_kind, row.id, row.model_dump())  # type: ignore[arg-type]


def evaluate_fact(*, session: Session, kind: str, row: Any, now: datetime | None = None) -> EvaluationReport:
    """Match one written knowledge-base row against every signal's result and deployment conditions.

    ``kind`` is the knowledge-base kind (``results``, ``deployments``; other kinds return an empty
    report: entity names reach the matcher through the rules cache's fingerprint). ``row`` is the
    flushed table row. Returns an ``EvaluationReport``.
    """
    report = EvaluationReport()
    spec = FACT_TABLES.get(kind)
    if spec is None:
        return report
    ref_kind, _table = spec
    now = _now(now)
    rules = compiled_rules(session=session)
    report.facts = 1
    matches = rules.match_fact(_fact_view(ref_kind, row))
    report.matches = len(matches)
    _record_and_settle(session, [_fact_found(session, ref_kind, row, m) for m in matches], now, report)
    return report


def _item_prefilter(conditions: list[ItemCondition]) -> Any:
    """A SQL condition no item matching any of ``conditions`` can fail (``None``: no filter).

    It only states what each condition demands of the source and the publication date, so it never
    hides a match; the compiled rules still decide every row it lets through.
    """
    alternatives = []
    for cond in conditions:
        parts = []
        if cond.sources:
            parts.append(Item.source_id.in_(cond.sources))
        if cond.source_trust:
            parts.append(Source.trust.in_(cond.source_trust))
        if cond.published_after is not None:
            # An estimated publication date never satisfies published_after (see rules.ItemView).
            parts.append(Item.published_at >= _day_start(cond.published_after))
            parts.append(Item.published_is_estimated.is_(False))
        if not parts:
            return None
        alternatives.append(and_(*parts))
    return or_(*alternatives) if alternatives else None


def _all_item_rows(session: Session, defn: SignalDefinition) -> Iterator[Any]:
    conditions = [c.item for _s, _i, c in defn.conditions() if c.item is not None]
    if not conditions:
        return
    stmt = select(*_ITEM_COLUMNS).join(Source, Source.id == Item.source_id).order_by(Item.id)
    narrowing = _item_prefilter(conditions)
    if narrowing is not None:
        stmt = stmt.where(narrowing)
    yield from session.execute(stmt.execution_options(yield_per=ITEM_BATCH))


def evaluate_signal(
    *,
    session: Session,
    signal_id: str,
    today: date | None = None,
    now: datetime | None = None,
    drop_unmatched: bool = False,
) -> EvaluationReport:
    """Check one signal against every stored item and fact, then its deadline.

    Run when a signal is created or its definition changes. The signal is compiled on its own, items are
    narrowed in SQL by what every item condition demands of the source and the date (never by text), and
    each remaining item is read once. ``today`` (UTC date, default: the clock's) decides the deadline.
    With ``drop_unmatched`` (after the conditions changed), evidence that no move used and that the
    current conditions no longer match is deleted first; evidence that still matches stays as it is and
    is not announced again.

    Returns an ``EvaluationReport``. Raises ``SignalNotFound``, or ``DefinitionError`` when the stored
    definition names an entity that no longer exists.
    """
    now = _now(now)
    today = today or now.astimezone(UTC).date()
    signal = _load(session, signal_id)
    defn = definition_of(signal)
    rules = compile_signals([defn], entities_for(session=session, entity_ids=defn.entity_ids()))
    report = EvaluationReport()
    found = _match_rows(rules, _all_item_rows(session, defn), report)
    kinds = {c.kind for _s, _i, c in defn.conditions()}
    for ref_kind, table in FACT_TABLES.values():
        if ref_kind not in kinds:
            continue
        for row in session.scalars(select(table).order_by(table.id)):
            report.facts += 1
            matches = rules.match_fact(_fact_view(ref_kind, row))
            report.matches += len(matches)
            found.extend(_fact_found(session, ref_kind, row, m) for m in matches)
    if drop_unmatched:
        _drop_unmatched_evidence(session, signal_id, {f.key for f in found})
    _record_and_settle(session, found, now, report)
    report.merge(evaluate_deadlines(session=session, today=today, now=now, signal_ids=[signal_id]))
    return report


def _drop_unmatched_evidence(session: Session, signal_id: str, matching: set[tuple[Any, ...]]) -> None:
    """Delete the signal's evidence that no history row cites and that is not in ``matching`` (keys)."""
    cited = {
        i
        for ids in session.scalars(
            select(SignalHistory.evidence_ids).where(SignalHistory.signal_id == signal_id)
        )
        for i in ids or []
    }
    rows = session.execute(
        select(Evidence.id, *(getattr(Evidence, k) for k in _EVIDENCE_KEY)).where(
            Evidence.signal_id == signal_id
        )
    ).all()
    stale = [row.id for row in rows if row.id not in cited and tuple(row[1:]) not in matching]
    for start in range(0, len(stale), ITEM_BATCH):
        session.execute(delete(Evidence).where(Evidence.id.in_(stale[start : start + ITEM_BATCH])))


def _deadline_end(deadline: date) -> datetime:
    """The moment a deadline passes: the start (UTC) of the day after it."""
    return _day_end(deadline)


def _deadline_applied(session: Session, signal: Signal) -> bool:
    """Did the deadline already resolve this signal for its current deadline (or a later one)?

    A deadline move records the moment the deadline passed as its ``known_at``; a history row with a
    ``known_at`` at or after the current deadline's end means the clock has had its say, and an analyst
    who reopened the signal decides it now. Moving the deadline later makes it apply again.
    """
    assert signal.deadline is not None
    stmt = select(func.count()).where(
        SignalHistory.signal_id == signal.id,
        SignalHistory.cause == "deadline",
        SignalHistory.known_at >= _deadline_end(signal.deadline),
    )
    return bool(session.execute(stmt).scalar_one())


def evaluate_deadlines(
    *,
    session: Session,
    today: date,
    now: datetime | None = None,
    signal_ids: Sequence[str] | None = None,
    warning_days: int | None = None,
) -> EvaluationReport:
    """Resolve open signals whose deadline has passed and warn once for those whose deadline is near.

    ``today`` is the current UTC date: a deadline passes when the whole deadline day is over, and the
    signal resolves to its ``on_deadline`` (``no`` or ``annulled``) with cause ``deadline`` and
    ``known_at`` = the moment the deadline passed. An open signal whose deadline is within
    ``warning_days`` (default ``settings.deadline_warning_days``, 14) gets one
    ``signal.deadline_approaching`` event (the ``deadline_warned`` flag is set with a conditional
    update, so concurrent runs warn once). ``signal_ids`` limits the check to those signals.

    Returns an ``EvaluationReport``.
    """
    now = _now(now)
    days = get_settings().deadline_warning_days if warning_days is None else warning_days
    report = EvaluationReport()
    stmt = select(Signal.id).where(
        Signal.status == "open",
        Signal.deadline.is_not(None),
        or_(
            Signal.deadline < today,
            and_(Signal.deadline_warned.is_(False), Signal.deadline <= today + timedelta(days=days)),
        ),
    )
    if signal_ids is not None:
        stmt = stmt.where(Signal.id.in_(list(signal_ids)))
    for signal_id in sorted(session.scalars(stmt)):

        def plan_for(signal: Signal) -> _Plan | None:
            if signal.deadline is None:
                return None
            applied = sm.deadline_passed(signal.deadline, today) and _deadline_applied(session, signal)
            move = sm.deadline_move(_state(signal), signal.deadline, signal.on_deadline, today, applied)
            return None if move is None else _Plan(move, (), _deadline_end(signal.deadline))

        signal, _before, history = _move_with_retry(session, signal_id, plan_for, now)
        if history is not None:
            _announce_move(session, signal, history, report)
        if sm.deadline_warning_due(signal.status, signal.deadline, signal.deadline_warned, today, days):
            claimed = session.execute(
                update(Signal)
                .where(Signal.id == signal_id, Signal.deadline_warned.is_(False), Signal.status == "open")
                .values(deadline_warned=True)
                .execution_options(synchronize_session=False)
            )
            if claimed.rowcount == 1:
                session.refresh(signal)
                emit(
                    session,
                    "signal.deadline_approaching",
                    deadline_approaching_data(signal, today=today),
                    signal_id=signal_id,
                )
                report.deadline_warnings.append(signal_id)
    return report


def _uncited_plus_pending(session: Session, signal: Signal, side: str) -> list[Evidence]:
    """Evidence on ``side`` that no earlier move used, plus what the pending review was about."""
    history = list(
        session.scalars(
            select(SignalHistory).where(SignalHistory.signal_id == signal.id).order_by(SignalHistory.id)
        )
    )
    cited = {i for h in history for i in h.evidence_ids}
    pending = set(history[-1].evidence_ids) if history and signal.status == "pending_review" else set()
    rows = session.scalars(
        select(Evidence).where(Evidence.signal_id == signal.id, Evidence.side == side).order_by(Evidence.id)
    )
    return [e for e in rows if e.id not in cited or e.id in pending]


def apply_manual(
    *,
    session: Session,
    signal_id: str,
    action: str,
    note: str | None,
    outcome: str | None = None,
    now: datetime | None = None,
) -> tuple[Signal, SignalHistory]:
    """An analyst's move: ``resolve`` (with ``outcome``), ``reject`` or ``reopen``, cause ``manual``.

    A resolve's deciding evidence is the evidence on the outcome's side that no earlier move used (and
    what the pending review was about); its ``known_at`` is their earliest known publication time.
    Returns the signal and the history row. Raises ``SignalNotFound``, ``state.TransitionNotAllowed``
    (the current status does not allow it) or ``ValueError`` (unknown action or outcome).
    """
    now = _now(now)

    def plan_for(signal: Signal) -> _Plan:
        current = _state(signal)
        if action == "resolve":
            move = sm.confirm(current, outcome or "", note)
            if outcome in ("yes", "no"):
                deciding = _uncited_plus_pending(session, signal, outcome)
                known = sm.earliest_known([e.published_at for e in deciding])
                return _Plan(move, tuple(e.id or 0 for e in deciding), known)
            return _Plan(move)
        if action == "reject":
            return _Plan(sm.reject(current, note))
        if action == "reopen":
            return _Plan(sm.reopen(current, note))
        raise ValueError(f"unknown action {action!r}; expected resolve, reject or reopen")

    signal, _before, history = _move_with_retry(session, signal_id, plan_for, now)
    assert history is not None  # plan_for always plans a move or raises
    _announce_move(session, signal, history, None)
    return signal, history


def evaluate_seeded(*, session: Session, report: Any, today: date | None = None) -> EvaluationReport:
    """Evaluate what a seed load touched: new or changed signals in full, new or changed facts.

    ``report`` is the ``chipwatch.seeds.SeedReport`` of a load in this session. Returns the combined
    ``EvaluationReport``.
    """
    out = EvaluationReport()
    for kb_kind, seed_kind in (("results", "results"), ("deployments", "deployments")):
        _ref_kind, table = FACT_TABLES[kb_kind]
        for fact_id in report.touched(seed_kind):
            row = session.get(table, fact_id)
            if row is not None:
                out.merge(evaluate_fact(session=session, kind=kb_kind, row=row))
    for signal_id in report.touched("signals"):
        out.merge(evaluate_signal(session=session, signal_id=signal_id, today=today))
    return out


def _on_fact_written(session: Session, kind: str, row: Any) -> None:
    evaluate_fact(session=session, kind=kind, row=row)


def _register_fact_listener() -> None:
    from chipwatch.knowledge.service import fact_listeners

    if _on_fact_written not in fact_listeners:
        fact_listeners.append(_on_fact_written)


_register_fact_listener()
