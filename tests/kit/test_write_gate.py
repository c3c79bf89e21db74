"""SQLite: this process's writers take turns at the write lock in the order they asked (db.WriteGate).

Without turns, a job writing in back-to-back short transactions wins SQLite's lock again and again while
another writer sleeps in the busy handler; with them, the other writer is next once the current
transaction ends."""

from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy import text

from chipwatch.db import WriteGate, session_scope
from tests.fixtures.database import postgres_url

pytestmark = pytest.mark.skipif(bool(postgres_url()), reason="turns at SQLite's single write lock")


def test_turns_are_handed_over_in_the_order_asked():
    gate = WriteGate()
    assert gate.acquire(1)
    order: list[str] = []
    started = []

    def writer(name: str) -> None:
        assert gate.acquire(5)
        order.append(name)
        gate.release()

    for name in ("first", "second", "third"):
        t = threading.Thread(target=writer, args=(name,))
        t.start()
        started.append(t)
        while len(gate._waiting) < len(started):  # each is queued before the next asks
            time.sleep(0.001)
    gate.release()
    for t in started:
        t.join(5)
    assert order == ["first", "second", "third"]


def test_a_writer_that_gives_up_leaves_the_queue():
    gate = WriteGate()
    assert gate.acquire(1)
    assert gate.acquire(0.05) is False
    assert list(gate._waiting) == []
    gate.release()
    assert gate.acquire(0.05) is True  # free again: nobody was left queued
    gate.release()


def test_a_writer_is_not_starved_by_back_to_back_transactions(db):
    """A loop of write transactions with no gap between them lets a waiting write in at the next turn."""
    with session_scope(db) as session:
        session.execute(text("CREATE TABLE gate_probe (n INTEGER, who TEXT)"))
    stop = threading.Event()
    loop_turns: list[int] = []

    def loop() -> None:
        n = 0
        while not stop.is_set() and n < 400:
            n += 1
            with session_scope(db) as session:
                session.execute(text("INSERT INTO gate_probe VALUES (:n, 'loop')"), {"n": n})
                time.sleep(0.02)  # holds the lock a while, then begins again at once
            loop_turns.append(n)

    looper = threading.Thread(target=loop)
    looper.start()
    while len(loop_turns) < 3:
        time.sleep(0.005)
    asked_at = len(loop_turns)
    with session_scope(db) as session:
        session.execute(text("INSERT INTO gate_probe VALUES (-1, 'other')"))
    stop.set()
    looper.join(30)
    with session_scope(db, write=False) as session:
        rows = session.execute(text("SELECT n, who FROM gate_probe ORDER BY rowid")).all()
    position = [who for _n, who in rows].index("other")
    loop_before = [n for n, who in rows[:position] if who == "loop"]
    # The other write asked while loop transaction asked_at+1 may already have been running: it waits
    # for that one at most, and then for none of the loop's later ones.
    assert len(loop_before) <= asked_at + 1, (asked_at, loop_before)
