"""The pure state machine: evidence, deadlines and analyst moves."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from chipwatch.signals import state as sm
from chipwatch.signals.state import Candidate, Move, State, TransitionNotAllowed

OPEN = State("open", None, 0)
PENDING = State("pending_review", None, 1)
RESOLVED = State("resolved", "yes", 1)
T1 = datetime(2026, 9, 1, tzinfo=UTC)
T2 = datetime(2026, 9, 2, tzinfo=UTC)


def test_auto_review_resolves_with_the_side_of_the_evidence():
    d = sm.decide_on_evidence(OPEN, "auto", [Candidate(7, "yes", 1, T1, reason="item 7")])
    assert d.move == Move("resolved", "yes", "rule:1", "yes_when[1] matched: item 7")
    assert d.deciding == (7,) and d.known_at == T1
    d = sm.decide_on_evidence(OPEN, "auto", [Candidate(8, "no", 0, None)])
    assert (d.move.to_status, d.move.to_outcome, d.move.cause) == ("resolved", "no", "rule:0")
    assert d.known_at is None  # unknown or estimated publication times never count


def test_manual_review_waits_for_an_analyst():
    d = sm.decide_on_evidence(OPEN, "manual", [Candidate(7, "yes", 0, T1)])
    assert (d.move.to_status, d.move.to_outcome) == ("pending_review", None)
    assert "proposed outcome: yes" in d.move.note


@pytest.mark.parametrize("current", [PENDING, RESOLVED, State("resolved", "no", 3)])
def test_evidence_only_accrues_unless_open(current):
    assert sm.decide_on_evidence(current, "auto", [Candidate(1, "yes", 0, T1)]).move is None


def test_earliest_published_side_wins_and_all_its_evidence_decides():
    cands = [Candidate(1, "yes", 0, T2), Candidate(2, "no", 0, T1), Candidate(3, "no", 1, None)]
    d = sm.decide_on_evidence(OPEN, "auto", cands)
    assert d.move.to_outcome == "no" and d.deciding == (2, 3) and d.known_at == T1
    tie = [Candidate(1, "yes", 0, T1), Candidate(1, "no", 2, T1)]
    assert sm.decide_on_evidence(OPEN, "auto", tie).move.to_outcome == "no"
    unknown = [Candidate(1, "yes", 0, None), Candidate(2, "no", 0, None)]
    assert sm.decide_on_evidence(OPEN, "auto", unknown).move.to_outcome == "no"
    yes_first = [Candidate(1, "yes", 0, T1), Candidate(2, "no", 0, None)]
    assert sm.decide_on_evidence(OPEN, "auto", yes_first).move.to_outcome == "yes"


def test_evidence_after_the_deadline_does_not_decide():
    d = sm.decide_on_evidence(OPEN, "auto", [Candidate(1, "yes", 0, T1, decisive=False)])
    assert d.move is None


def test_deadline_resolves_the_day_after():
    dl = date(2026, 12, 31)
    assert sm.deadline_move(OPEN, dl, "no", date(2026, 12, 31), False) is None
    move = sm.deadline_move(OPEN, dl, "no", date(2027, 1, 1), False)
    assert move == Move("resolved", "no", "deadline", "deadline 2026-12-31 passed unresolved")
    assert sm.deadline_move(OPEN, dl, "annulled", date(2027, 1, 1), False).to_outcome == "annulled"
    assert sm.deadline_move(OPEN, dl, "no", date(2027, 1, 1), True) is None  # already applied once
    assert sm.deadline_move(PENDING, dl, "no", date(2027, 1, 1), False) is None  # an analyst decides


def test_deadline_warning_window():
    dl = date(2026, 12, 31)
    assert sm.deadline_warning_due("open", dl, False, date(2026, 12, 17), 14)
    assert not sm.deadline_warning_due("open", dl, False, date(2026, 12, 16), 14)
    assert sm.deadline_warning_due("open", dl, False, dl, 14)
    assert not sm.deadline_warning_due("open", dl, True, date(2026, 12, 20), 14)
    assert not sm.deadline_warning_due("resolved", dl, False, date(2026, 12, 20), 14)
    assert not sm.deadline_warning_due("open", dl, False, date(2027, 1, 1), 14)
    assert sm.days_left(dl, date(2026, 12, 21)) == 10


def test_analyst_moves_and_refusals():
    assert sm.confirm(OPEN, "yes", "seen it") == Move("resolved", "yes", "manual", "seen it")
    assert sm.confirm(PENDING, "annulled", None).to_outcome == "annulled"
    assert sm.reject(PENDING, "not it") == Move("open", None, "manual", "not it")
    assert sm.reopen(RESOLVED, None) == Move("open", None, "manual", None)
    with pytest.raises(TransitionNotAllowed, match="cannot resolve a signal that is resolved"):
        sm.confirm(RESOLVED, "no", None)
    with pytest.raises(TransitionNotAllowed):
        sm.reject(OPEN, None)
    with pytest.raises(TransitionNotAllowed):
        sm.reopen(PENDING, None)
    with pytest.raises(ValueError, match="outcome must be one of"):
        sm.confirm(OPEN, "maybe", None)
