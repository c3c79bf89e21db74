"""The signal state machine (pure: no I/O, no database, no clock).

States and moves, from DESIGN.md "Signals":

- ``status`` is ``open`` | ``pending_review`` | ``resolved``; ``outcome`` is set only when resolved
  (``yes`` | ``no`` | ``annulled``);
- new evidence on an open signal resolves it (review ``auto``: outcome = the evidence's side) or moves it
  to ``pending_review`` (review ``manual``: an analyst decides); on any other status it only accrues;
- the deadline resolves an open signal to ``on_deadline`` the day after the deadline (the deadline day
  itself still counts), once per deadline;
- ``confirm`` (an analyst resolves with an outcome) from ``open`` or ``pending_review``; ``reject``
  returns ``pending_review`` to ``open``; ``reopen`` returns ``resolved`` to ``open``;
- ``withdraw``: when every piece of evidence that decided a ``resolved`` or ``pending_review`` status is
  retracted from the knowledge base, the signal returns to ``open`` (cause ``retraction``).

Each move names its cause: ``rule:<n>`` (``n`` indexes ``yes_when`` or ``no_when``, whichever side the
deciding evidence satisfied; the move's note names the list), ``deadline``, ``manual`` or ``retraction``.
The caller bumps the version by one per move and writes the history row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime

from chipwatch.vocab.status import OUTCOMES, Outcome, Side, Status

__all__ = [
    "Candidate",
    "Decision",
    "Move",
    "State",
    "TransitionNotAllowed",
    "confirm",
    "days_left",
    "decide_on_evidence",
    "deadline_move",
    "deadline_passed",
    "deadline_warning_due",
    "earliest_known",
    "reject",
    "reopen",
    "withdraw",
]


@dataclass(frozen=True, slots=True)
class State:
    """A signal's state as the machine sees it."""

    status: Status
    outcome: Outcome | None
    version: int


@dataclass(frozen=True, slots=True)
class Move:
    """A transition to make: the new status and outcome, its cause and a note for the history row."""

    to_status: Status
    to_outcome: Outcome | None
    cause: str
    note: str | None = None


class TransitionNotAllowed(ValueError):
    """An analyst action that the current status does not allow (the API answers 409)."""

    def __init__(self, action: str, status: str, allowed_from: Sequence[str]) -> None:
        self.action, self.status, self.allowed_from = action, status, tuple(allowed_from)
        super().__init__(
            f"cannot {action} a signal that is {status}; allowed from {' or '.join(allowed_from)}"
        )


# ---------------------------------------------------------------------------------------------------
# Evidence
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Candidate:
    """New evidence that may decide a signal.

    ``key`` is the caller's handle (an evidence row id). ``published_at`` is the publication time when
    the source gave one (``None`` when unknown or estimated: estimated dates never count as news).
    ``decisive`` is false for evidence published after the signal's deadline: it is recorded, but the
    question was about what happened by then.
    """

    key: int
    side: Side
    condition_index: int
    published_at: datetime | None
    decisive: bool = True
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class Decision:
    """The outcome of :func:`decide_on_evidence`: the move (or ``None``), the deciding evidence keys (in
    publication order) and ``known_at``, the earliest known publication time among them."""

    move: Move | None
    deciding: tuple[int, ...] = ()
    known_at: datetime | None = None


def _sort_key(c: Candidate) -> tuple[int, datetime, int]:
    # Unknown publication times sort after known ones; the key breaks ties in arrival order.
    return (c.published_at is None, c.published_at or datetime.max.replace(tzinfo=UTC), c.key)


def earliest_known(times: Sequence[datetime | None]) -> datetime | None:
    """The earliest of ``times`` that is known, or ``None``."""
    known = [t for t in times if t is not None]
    return min(known) if known else None


def decide_on_evidence(state: State, review: str, candidates: Sequence[Candidate]) -> Decision:
    """What new evidence does to a signal in ``state`` with ``review`` (``auto`` | ``manual``).

    Only an open signal moves; otherwise evidence just accrues (``Decision(None)``). When both sides
    have decisive evidence, the side whose evidence was published first wins (what happened first in
    the world). On a tie, or when no time is known on either side, ``no`` wins: a text that meets both
    lists (as "large-scale delivery delayed" meets "large-scale delivery" and "delay*") names the
    awaited event in order to deny or postpone it. The deciding evidence is every decisive candidate of
    the winning side; the cause is the condition of the earliest of them.
    """
    if state.status != "open":
        return Decision(None)
    decisive = sorted((c for c in candidates if c.decisive), key=_sort_key)
    if not decisive:
        return Decision(None)
    first_yes = next((c for c in decisive if c.side == "yes"), None)
    first_no = next((c for c in decisive if c.side == "no"), None)
    if first_yes is None:
        side: Side = "no"
    elif first_no is None:
        side = "yes"
    else:
        side = "yes" if _sort_key(first_yes)[:2] < _sort_key(first_no)[:2] else "no"
    chosen = [c for c in decisive if c.side == side]
    lead = chosen[0]
    known_at = earliest_known([c.published_at for c in chosen])
    where = f"{side}_when[{lead.condition_index}] matched"
    if lead.reason:
        where += f": {lead.reason}"
    cause = f"rule:{lead.condition_index}"
    if review == "manual":
        move = Move("pending_review", None, cause, f"{where} (proposed outcome: {side})")
    else:
        move = Move("resolved", side, cause, where)
    return Decision(move, tuple(c.key for c in chosen), known_at)


# ---------------------------------------------------------------------------------------------------
# Deadlines
# ---------------------------------------------------------------------------------------------------


def deadline_passed(deadline: date | None, today: date) -> bool:
    """True once the whole deadline day is over (``today`` after ``deadline``)."""
    return deadline is not None and today > deadline


def days_left(deadline: date, today: date) -> int:
    """Whole days from ``today`` to ``deadline`` (0 on the day, negative after it)."""
    return (deadline - today).days


def deadline_warning_due(
    status: str, deadline: date | None, warned: bool, today: date, warning_days: int
) -> bool:
    """Is a ``signal.deadline_approaching`` due? Once per deadline, for an open signal whose deadline is
    today or within ``warning_days`` days."""
    if status != "open" or deadline is None or warned:
        return False
    return 0 <= days_left(deadline, today) <= warning_days


def deadline_move(
    state: State, deadline: date | None, on_deadline: str, today: date, already_applied: bool
) -> Move | None:
    """The deadline move for an open signal whose deadline has passed, else ``None``.

    ``already_applied`` says the deadline already resolved this signal once (for this deadline or a later
    one): an analyst who reopened it afterwards decides it, not the clock.
    """
    if state.status != "open" or already_applied or not deadline_passed(deadline, today):
        return None
    assert deadline is not None
    outcome: Outcome = "annulled" if on_deadline == "annulled" else "no"
    return Move("resolved", outcome, "deadline", f"deadline {deadline.isoformat()} passed unresolved")


# ---------------------------------------------------------------------------------------------------
# Analyst actions
# ---------------------------------------------------------------------------------------------------


def confirm(state: State, outcome: str, note: str | None) -> Move:
    """Resolve by hand with ``outcome`` from ``open`` or ``pending_review``.

    Raises ``TransitionNotAllowed`` from ``resolved`` (reopen first) and ``ValueError`` for an outcome
    that is not one of ``yes``, ``no``, ``annulled``.
    """
    if outcome not in OUTCOMES:
        raise ValueError(f"outcome must be one of {', '.join(OUTCOMES)}; got {outcome!r}")
    if state.status not in ("open", "pending_review"):
        raise TransitionNotAllowed("resolve", state.status, ("open", "pending_review"))
    return Move("resolved", outcome, "manual", note)  # type: ignore[arg-type]


def reject(state: State, note: str | None) -> Move:
    """Return a ``pending_review`` signal to ``open`` (the match was not the answer).

    Raises ``TransitionNotAllowed`` from any other status.
    """
    if state.status != "pending_review":
        raise TransitionNotAllowed("reject", state.status, ("pending_review",))
    return Move("open", None, "manual", note)


def reopen(state: State, note: str | None) -> Move:
    """Return a ``resolved`` signal to ``open``. Raises ``TransitionNotAllowed`` from any other status."""
    if state.status != "resolved":
        raise TransitionNotAllowed("reopen", state.status, ("resolved",))
    return Move("open", None, "manual", note)


def withdraw(state: State, note: str | None) -> Move | None:
    """Return a ``resolved`` or ``pending_review`` signal to ``open`` because the evidence that decided it
    was retracted (cause ``retraction``); ``None`` from ``open``, where there is nothing to undo."""
    if state.status not in ("resolved", "pending_review"):
        return None
    return Move("open", None, "retraction", note)
