"""Two evaluations of one signal at once make one transition (the version is checked on write); a lost
race re-reads and decides again. Runs on SQLite (writers queue on the database lock) and on PostgreSQL
(writers overlap; the versioned UPDATE and the evidence key decide)."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import update

from chipwatch.db import session_scope
from chipwatch.signals import evaluation, record, service
from chipwatch.signals.models import Signal
from chipwatch.signals.state import TransitionNotAllowed
from tests.fixtures.signals import add_item, create, events, evidence, history, state

WHEN = {"yes": [{"item": {"mentions_any": ["jalapeno"], "terms_any": ["shipped"]}}]}


def _gate_writes(monkeypatch, parties: int) -> None:
    """Hold every evaluation at its versioned write until all have read the signal (where they can).

    On SQLite a second writer cannot begin before the first commits, so the first one waits out the
    timeout and goes on alone; on PostgreSQL all of them reach the write with the same version.
    """
    barrier = threading.Barrier(parties)
    real = record._write_move

    def gated(session, signal, before, plan, now):
        try:
            barrier.wait(timeout=2)
        except threading.BrokenBarrierError:
            pass
        return real(session, signal, before, plan, now)

    monkeypatch.setattr(record, "_write_move", gated)


def _run_at_once(*jobs):
    errors: list[BaseException] = []
    results: list[object] = [None] * len(jobs)

    def run(i, job):
        try:
            results[i] = job()
        except BaseException as exc:  # collected and re-raised by the test
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i, job)) for i, job in enumerate(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return results, errors


def _evaluate(item_id: int):
    def job():
        with session_scope() as session:
            return evaluation.evaluate_items(session=session, item_ids=[item_id])

    return job


def test_two_items_evaluated_at_once_make_one_transition(feeds, monkeypatch):
    create("race", **WHEN)
    a, b = add_item("Jalapeno shipped"), add_item("Jalapeño shipped, says a second outlet")
    _gate_writes(monkeypatch, 2)
    reports, errors = _run_at_once(_evaluate(a), _evaluate(b))
    assert errors == []
    assert state("race") == ("resolved", "yes", 1)
    assert len(history("race")) == 1
    assert sum(len(r.transitions) for r in reports) == 1
    assert len(evidence("race")) == 2  # both items are kept as evidence
    assert len(events("race", "signal.status_changed")) == 1
    added = [e.data for e in events("race", "signal.evidence_added")]
    assert len(added) == 2
    # The loser's evidence event carries the state it found after re-reading.
    assert sorted((d["status"], d["version"]) for d in added) == [("open", 0), ("resolved", 1)]


def test_the_same_item_evaluated_at_once_is_recorded_once(feeds, monkeypatch):
    create("race", **WHEN)
    item = add_item("Jalapeno shipped")
    _gate_writes(monkeypatch, 2)
    reports, errors = _run_at_once(_evaluate(item), _evaluate(item))
    assert errors == []
    assert state("race") == ("resolved", "yes", 1)
    assert len(evidence("race")) == 1 and len(history("race")) == 1
    assert sorted(len(r.evidence_ids) for r in reports) == [0, 1]
    assert [e.type for e in events("race")] == ["signal.evidence_added", "signal.status_changed"]


def test_two_analysts_resolving_at_once_make_one_transition(db, monkeypatch):
    sid = "vera-rubin-scorecard"
    _gate_writes(monkeypatch, 2)

    def resolve(outcome):
        def job():
            with session_scope() as session:
                return service.resolve_signal(
                    session=session, signal_id=sid, outcome=outcome, note=None
                ).outcome

        return job

    results, errors = _run_at_once(resolve("yes"), resolve("no"))
    assert len(errors) == 1 and isinstance(errors[0], TransitionNotAllowed)
    [winner] = [r for r in results if r is not None]
    assert state(sid) == ("resolved", winner, 1)
    assert len(history(sid)) == 1


def test_a_lost_race_reads_again_and_decides_again(feeds, monkeypatch):
    """Another writer moves the signal between this evaluation's read and its write."""
    create("race", **WHEN)
    item = add_item("Jalapeno shipped")
    real = record._write_move
    calls = []

    def other_writer_first(session, signal, before, plan, now):
        calls.append(before.version)
        if len(calls) == 1:
            # What a concurrent analyst's resolve would leave behind: status, outcome, version + 1.
            session.execute(
                update(Signal)
                .where(Signal.id == signal.id)
                .values(status="resolved", outcome="no", version=before.version + 1)
                .execution_options(synchronize_session=False)
            )
        return real(session, signal, before, plan, now)

    monkeypatch.setattr(record, "_write_move", other_writer_first)
    with session_scope() as session:
        report = evaluation.evaluate_items(session=session, item_ids=[item])
    assert calls == [0]  # one attempt lost; the re-read found it resolved and left it alone
    assert report.transitions == [] and len(report.evidence_ids) == 1
    assert state("race") == ("resolved", "no", 1)
    [added] = events("race", "signal.evidence_added")
    assert (added.data["status"], added.data["outcome"], added.data["version"]) == ("resolved", "no", 1)
    assert events("race", "signal.status_changed") == []


def test_a_signal_that_never_settles_gives_up(feeds, monkeypatch):
    create("race", **WHEN)
    item = add_item("Jalapeno shipped")
    monkeypatch.setattr(record, "_write_move", lambda session, signal, before, plan, now: None)
    with pytest.raises(RuntimeError, match="kept changing"):
        with session_scope() as session:
            evaluation.evaluate_items(session=session, item_ids=[item])
    assert state("race") == ("open", None, 0) and evidence("race") == []  # rolled back with the items
