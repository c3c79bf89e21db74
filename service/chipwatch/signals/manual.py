"""An analyst's moves: resolve, reject and reopen, written with the same version check as evaluation."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlmodel import Session

from chipwatch.kit.time import utcnow
from chipwatch.signals import state as sm
from chipwatch.signals.models import Evidence, Signal, SignalHistory
from chipwatch.signals.record import Plan, announce_move, move_with_retry, state_of

__all__ = ["ACTIONS", "apply_manual"]

ACTIONS = ("resolve", "reject", "reopen")


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


def _manual_plan(
    session: Session, signal: Signal, action: str, note: str | None, outcome: str | None
) -> Plan:
    current = state_of(signal)
    if action == "resolve":
        move = sm.confirm(current, outcome or "", note)
        if outcome in ("yes", "no"):
            deciding = _uncited_plus_pending(session, signal, outcome)
            known = sm.earliest_known([e.published_at for e in deciding])
            return Plan(move, tuple(e.id or 0 for e in deciding), known)
        return Plan(move)
    if action == "reject":
        return Plan(sm.reject(current, note))
    if action == "reopen":
        return Plan(sm.reopen(current, note))
    raise ValueError(f"unknown action {action!r}; expected resolve, reject or reopen")


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
    signal, _before, history = move_with_retry(
        session,
        signal_id,
        lambda current: _manual_plan(session, current, action, note, outcome),
        now if now is not None else utcnow(),
    )
    assert history is not None  # _manual_plan always plans a move or raises
    announce_move(session, signal, history, None)
    return signal, history
