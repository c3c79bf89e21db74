"""Deadlines: resolve open signals whose deadline has passed, warn once before it comes.

Run by the ``signals.deadlines`` job, at start-up, and when a signal is created or changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime, timedelta

from sqlalchemy import and_, func, or_, select, update
from sqlmodel import Session

from chipwatch.config import get_settings
from chipwatch.kit.time import utcnow
from chipwatch.outbox.emit import emit
from chipwatch.signals import state as sm
from chipwatch.signals.events import DEADLINE_APPROACHING, deadline_approaching_data
from chipwatch.signals.models import Signal, SignalHistory
from chipwatch.signals.record import (
    EvaluationReport,
    Plan,
    announce_move,
    day_end,
    move_with_retry,
    state_of,
)

__all__ = ["evaluate_deadlines"]


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
        SignalHistory.known_at >= day_end(signal.deadline),
    )
    return bool(session.execute(stmt).scalar_one())


def _deadline_plan(session: Session, signal: Signal, today: date) -> Plan | None:
    """The deadline's move on ``signal`` as it is now; ``known_at`` is the moment the deadline passed."""
    if signal.deadline is None:
        return None
    applied = sm.deadline_passed(signal.deadline, today) and _deadline_applied(session, signal)
    move = sm.deadline_move(state_of(signal), signal.deadline, signal.on_deadline, today, applied)
    return None if move is None else Plan(move, (), day_end(signal.deadline))


def _warn_once(session: Session, signal: Signal, today: date) -> bool:
    """Write ``signal.deadline_approaching`` unless another run did; returns whether this one did.

    The ``deadline_warned`` flag is claimed with a conditional update, so concurrent runs warn once.
    """
    claimed = session.execute(
        update(Signal)
        .where(Signal.id == signal.id, Signal.deadline_warned.is_(False), Signal.status == "open")
        .values(deadline_warned=True)
        .execution_options(synchronize_session=False)
    )
    if claimed.rowcount != 1:
        return False
    session.refresh(signal)
    emit(session, DEADLINE_APPROACHING, deadline_approaching_data(signal, today=today), signal_id=signal.id)
    return True


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
    ``signal.deadline_approaching`` event. ``signal_ids`` limits the check to those signals.

    Returns an ``EvaluationReport``.
    """
    now = now if now is not None else utcnow()
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
        signal, _before, history = move_with_retry(
            session, signal_id, lambda current: _deadline_plan(session, current, today), now
        )
        if history is not None:
            announce_move(session, signal, history, report)
        due = sm.deadline_warning_due(signal.status, signal.deadline, signal.deadline_warned, today, days)
        if due and _warn_once(session, signal, today):
            report.deadline_warnings.append(signal_id)
    return report
