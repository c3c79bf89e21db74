"""Deadlines: resolution to on_deadline, at creation and from the job; one approaching warning."""

from __future__ import annotations

from datetime import UTC, date, datetime

from chipwatch.db import session_scope
from chipwatch.scheduler import collect_jobs
from chipwatch.signals import service
from chipwatch.signals.jobs import JOBS, run_deadlines
from tests.fixtures.signals import create, deadlines, events, history, publish, signal, state

TODAY = date(2026, 9, 1)
WHEN = {"yes": [{"item": {"mentions_any": ["jalapeno"], "terms_any": ["shipped"]}}]}


def test_a_signal_created_after_its_deadline_resolves_at_once(db):
    report = create("late", deadline="2026-08-30", today=TODAY, **WHEN)
    assert state("late") == ("resolved", "no", 1)
    [h] = history("late")
    assert (h.cause, h.from_status, h.to_status, h.to_outcome, h.evidence_ids) == (
        "deadline",
        "open",
        "resolved",
        "no",
        [],
    )
    # The answer became known when the deadline day ended.
    assert h.known_at == datetime(2026, 8, 31, tzinfo=UTC) == signal("late").known_at
    assert "2026-08-30" in h.note
    assert [t.cause for t in report.transitions] == ["deadline"]
    [ev] = events("late", "signal.status_changed")
    assert ev.data["cause"] == "deadline" and ev.data["current"] == {"status": "resolved", "outcome": "no"}


def test_on_deadline_annulled(db):
    create("lapsed", deadline="2026-08-30", on_deadline="annulled", today=TODAY, **WHEN)
    assert state("lapsed") == ("resolved", "annulled", 1)


def test_the_deadline_day_itself_still_counts(db):
    create("today", deadline="2026-09-01", today=TODAY, **WHEN)
    assert state("today") == ("open", None, 0)
    assert deadlines(date(2026, 9, 1)).transitions == []
    assert [t.to_outcome for t in deadlines(date(2026, 9, 2)).transitions] == ["no"]
    assert state("today") == ("resolved", "no", 1)
    assert deadlines(date(2026, 9, 3)).transitions == []  # once


def test_one_warning_when_the_deadline_is_near(db):
    create("near", deadline="2026-09-11", today=TODAY, **WHEN)
    [warn] = events("near", "signal.deadline_approaching")
    assert warn.data["days_left"] == 10 and warn.data["deadline"] == "2026-09-11"
    assert warn.data["on_deadline"] == "no" and warn.data["version"] == 0
    assert signal("near").deadline_warned
    for day in (TODAY, date(2026, 9, 5), date(2026, 9, 11)):
        assert deadlines(day).deadline_warnings == []
    assert len(events("near", "signal.deadline_approaching")) == 1


def test_the_warning_comes_fourteen_days_ahead(db):
    create("far", deadline="2026-09-16", today=TODAY, **WHEN)
    assert events("far", "signal.deadline_approaching") == []
    assert deadlines(date(2026, 9, 2)).deadline_warnings == ["far"]
    assert events("far", "signal.deadline_approaching")[0].data["days_left"] == 14


def test_resolved_and_pending_signals_are_not_warned_nor_lapsed(feeds):
    create("done", deadline="2026-09-10", today=date(2026, 8, 1), **WHEN)
    create("review", deadline="2026-09-10", today=date(2026, 8, 1), review="manual", **WHEN)
    publish("Jalapeno shipped")
    assert state("done")[0] == "resolved" and state("review")[0] == "pending_review"
    report = deadlines(date(2026, 9, 20))
    assert report.transitions == [] and report.deadline_warnings == []
    assert state("review") == ("pending_review", None, 1)  # an analyst decides what is under review


def test_a_reopened_signal_is_not_lapsed_again_until_its_deadline_moves(db):
    create("again", deadline="2026-08-30", today=TODAY, **WHEN)
    with session_scope() as session:
        service.reopen_signal(session=session, signal_id="again", note="late evidence may exist")
    assert state("again") == ("open", None, 2)
    assert deadlines(date(2026, 9, 5)).transitions == []
    assert state("again") == ("open", None, 2)
    with session_scope() as session:
        service.update_signal(
            session=session, signal_id="again", changes={"deadline": "2026-09-20"}, today=TODAY
        )
    assert not signal("again").deadline_warned
    assert deadlines(date(2026, 9, 10)).deadline_warnings == ["again"]
    assert [t.cause for t in deadlines(date(2026, 9, 21)).transitions] == ["deadline"]
    assert state("again") == ("resolved", "no", 3)


def test_seed_deadlines(db):
    report = deadlines(date(2027, 1, 1))
    assert [t.signal_id for t in report.transitions] == ["jalapeno-100mw-2026"]
    assert state("jalapeno-100mw-2026") == ("resolved", "no", 1)
    assert state("jalapeno-volume-2027") == ("open", None, 0)
    assert report.deadline_warnings == []
    assert deadlines(date(2027, 12, 20)).deadline_warnings == ["jalapeno-volume-2027"]


def test_the_job_is_declared_and_runs_at_start(db):
    [job] = JOBS
    assert (job.id, job.run_at_start, job.interval_s) == ("signals.deadlines", True, 3600)
    assert "signals.deadlines" in {j.id for j in collect_jobs()}
    report = run_deadlines(db, today=date(2027, 1, 1))
    assert [t.signal_id for t in report.transitions] == ["jalapeno-100mw-2026"]
    assert state("jalapeno-100mw-2026") == ("resolved", "no", 1)


def test_the_job_function_is_awaitable(db):
    import asyncio

    report = asyncio.run(JOBS[0].func(db))
    assert report.transitions == [] or all(t.cause == "deadline" for t in report.transitions)
