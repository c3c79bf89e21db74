"""What a retracted knowledge-base fact undoes in the signals that used it as evidence.

When an analyst retracts a result or a deployment (``knowledge.retraction``), each signal with evidence
from it is evaluated again, in the retraction's transaction:

- evidence from the fact that no move cites is deleted (it decided nothing, and it is withdrawn);
  evidence a move cites stays, since the history names it;
- a ``resolved`` or ``pending_review`` signal whose last move was decided only by withdrawn evidence
  returns to ``open`` (cause ``retraction``, ``signal.status_changed`` written);
- the reopened signal is then decided again on its remaining evidence that no move has used yet
  (evidence an analyst already set aside by rejecting or reopening never decides again), so a signal
  that other evidence also answers resolves again at once, with that evidence as the decider.

A retracted fact is no longer read by matching (``fact_matches``), so it adds no evidence afterwards.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select
from sqlmodel import Session

from chipwatch.kit.time import utcnow
from chipwatch.knowledge.retraction import retraction_guards, retraction_listeners
from chipwatch.signals import state as sm
from chipwatch.signals.definition import DefinitionError
from chipwatch.signals.fact_matches import FACT_TABLES
from chipwatch.signals.models import Evidence, Signal, SignalHistory
from chipwatch.signals.record import (
    EvaluationReport,
    Plan,
    announce_move,
    evidence_plan,
    move_with_retry,
)
from chipwatch.signals.rules_cache import definition_of

__all__ = [
    "on_fact_retracted",
    "register_retraction_listener",
    "settle_retraction",
    "signals_naming",
    "withdrawn_evidence_ids",
]


def withdrawn_evidence_ids(session: Session, evidence: Sequence[Evidence]) -> set[int]:
    """Ids of the ``evidence`` rows whose fact was retracted (or no longer exists); items never are."""
    wanted: dict[str, set[str]] = {}
    for ev in evidence:
        wanted.setdefault(ev.ref_kind, set()).add(ev.ref_id)
    in_force: set[tuple[str, str]] = set()
    for ref_kind, table in FACT_TABLES.values():
        ids = sorted(wanted.get(ref_kind, ()))
        if ids:
            stmt = select(table.id).where(table.id.in_(ids), table.retracted_at.is_(None))
            in_force |= {(ref_kind, i) for i in session.scalars(stmt)}
    fact_kinds = {ref_kind for ref_kind, _t in FACT_TABLES.values()}
    return {
        ev.id for ev in evidence if ev.ref_kind in fact_kinds and (ev.ref_kind, ev.ref_id) not in in_force
    }


def _history(session: Session, signal_id: str) -> list[SignalHistory]:
    stmt = select(SignalHistory).where(SignalHistory.signal_id == signal_id).order_by(SignalHistory.version)
    return list(session.scalars(stmt))


def _withdraw_plan(signal: Signal, last: SignalHistory | None, withdrawn: set[int], note: str) -> Plan | None:
    """The move back to open when ``last`` (the move that made the current status) rests on withdrawn
    evidence only; None otherwise (a manual or deadline decision, or evidence still standing)."""
    if last is None or last.version != signal.version or not last.cause.startswith("rule:"):
        return None
    if not last.evidence_ids or not set(last.evidence_ids) <= withdrawn:
        return None
    move = sm.withdraw(sm.State(signal.status, signal.outcome, signal.version), note)  # type: ignore[arg-type]
    return Plan(move) if move is not None else None


def _settle_signal(
    session: Session, signal_id: str, label: str, now: datetime, report: EvaluationReport
) -> None:
    evidence = list(session.scalars(select(Evidence).where(Evidence.signal_id == signal_id)))
    withdrawn = withdrawn_evidence_ids(session, evidence)
    history = _history(session, signal_id)
    cited = {i for row in history for i in row.evidence_ids or []}
    stale = sorted(withdrawn - cited)
    if stale:
        session.execute(delete(Evidence).where(Evidence.id.in_(stale)))
    note = f"{label} retracted: the evidence that decided the last move is withdrawn"
    last = history[-1] if history else None
    signal, _before, moved = move_with_retry(
        session, signal_id, lambda current: _withdraw_plan(current, last, withdrawn, note), now
    )
    if moved is None:
        return
    announce_move(session, signal, moved, report)
    unused = [ev for ev in evidence if ev.id not in withdrawn and ev.id not in cited]
    rows = [(ev, ev.ref_kind, ev.published_at) for ev in unused]
    signal, _before, again = move_with_retry(
        session, signal_id, lambda current: evidence_plan(current, rows), now
    )
    if again is not None:
        announce_move(session, signal, again, report)


def settle_retraction(
    *, session: Session, kind: str, fact_id: str, now: datetime | None = None
) -> EvaluationReport:
    """Undo what the retracted ``kind`` fact ``fact_id`` decided (see the module); returns the report of
    the moves made. Kinds no condition reads (entities, claims...) change nothing. Flushes only."""
    report = EvaluationReport()
    spec = FACT_TABLES.get(kind)
    if spec is None:
        return report
    ref_kind = spec[0]
    now = now or utcnow()
    stmt = select(Evidence.signal_id).where(Evidence.ref_kind == ref_kind, Evidence.ref_id == fact_id)
    for signal_id in sorted(set(session.scalars(stmt))):
        _settle_signal(session, signal_id, f"{ref_kind} {fact_id}", now, report)
    return report


def on_fact_retracted(session: Session, kind: str, row: Any) -> None:
    """Retraction listener: :func:`settle_retraction` for ``row``."""
    settle_retraction(session=session, kind=kind, fact_id=row.id)


def signals_naming(session: Session, _kind: str, entity_id: str) -> list[str]:
    """``signals/<id>`` of every signal whose definition names ``entity_id`` (retraction guard)."""
    named = []
    for signal in session.scalars(select(Signal).order_by(Signal.id)):
        try:
            ids = definition_of(signal).entity_ids()
        except DefinitionError:
            continue
        if entity_id in ids:
            named.append(f"signals/{signal.id}")
    return named


def register_retraction_listener() -> None:
    """Re-evaluate signals when a fact is retracted, and refuse to retract an entity a signal names
    (``chipwatch.knowledge.retraction``'s listeners and guards); calling it again changes nothing.
    The wiring calls it at start-up."""
    if on_fact_retracted not in retraction_listeners:
        retraction_listeners.append(on_fact_retracted)
    if signals_naming not in retraction_guards:
        retraction_guards.append(signals_naming)
