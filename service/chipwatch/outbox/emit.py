"""Write an event row in the transaction that caused it; wake in-process consumers on commit.

Producers (signal transitions, new evidence, source health changes) call :func:`emit` inside their
transaction.  The row commits or rolls back with the change it announces, so a crash can never lose an
event nor announce a change that did not happen.  After a commit that emitted events, every waker
registered with :func:`add_waker` is called, so an in-process dispatcher sends them at once instead of
waiting for its timer; on PostgreSQL the commit also notifies other processes
(:mod:`chipwatch.outbox.notify`).  The session hooks that do this are installed by the first :func:`add_waker`
call, not on import.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any

from sqlalchemy import event as sa_event
from sqlalchemy import insert
from sqlmodel import Session

from chipwatch.kit.time import utcnow
from chipwatch.outbox.models import EVENT_TYPES, Event
from chipwatch.outbox.notify import notify_on_commit

_wakers: list[Callable[[], None]] = []
_wakers_lock = threading.Lock()
_PENDING_KEY = "chipwatch_events_pending"


def new_msg_id() -> str:
    """A Standard Webhooks message id (``msg_`` + 32 hex chars), stable across retries."""
    return "msg_" + uuid.uuid4().hex


def emit(
    session: Session,
    type_: str,
    data: dict[str, Any],
    *,
    signal_id: str | None = None,
    source_id: str | None = None,
) -> Event:
    """Add an outbox row to ``session``'s transaction and return it (flushed, so it has an id).

    Raises ``ValueError`` for an event type not in :data:`~chipwatch.outbox.models.EVENT_TYPES`.
    """
    if type_ not in EVENT_TYPES:
        raise ValueError(f"unknown event type {type_!r}; expected one of {EVENT_TYPES}")
    row = Event(msg_id=new_msg_id(), type=type_, data=data, signal_id=signal_id, source_id=source_id)
    session.add(row)
    session.flush()
    session.info[_PENDING_KEY] = True
    notify_on_commit(session)
    return row


def emit_many(
    session: Session, type_: str, datas: list[dict[str, Any]], *, signal_id: str | None = None
) -> None:
    """Add one outbox row per ``data`` of ``datas`` (in order) with a single flush: :func:`emit` for a
    producer that announces many changes of one transaction at once (``signal_id``: of them all).

    Raises ``ValueError`` for an event type not in :data:`~chipwatch.outbox.models.EVENT_TYPES`.
    """
    if type_ not in EVENT_TYPES:
        raise ValueError(f"unknown event type {type_!r}; expected one of {EVENT_TYPES}")
    if not datas:
        return
    now = utcnow()
    rows = [{"msg_id": new_msg_id(), "type": type_, "signal_id": signal_id, "source_id": None, "data": data,
             "created_at": now, "dispatched": False} for data in datas]
    # One executemany of a Core insert: the rows need no identity in the session.
    session.execute(insert(Event.__table__), rows)
    session.info[_PENDING_KEY] = True
    notify_on_commit(session)


def add_waker(fn: Callable[[], None]) -> Callable[[], None]:
    """Call ``fn`` (from any thread) after each commit that wrote events; returns a remover."""
    with _wakers_lock:
        if not sa_event.contains(Session, "after_commit", _after_commit):
            sa_event.listen(Session, "after_commit", _after_commit)
            sa_event.listen(Session, "after_rollback", _after_rollback)
        _wakers.append(fn)

    def remove() -> None:
        with _wakers_lock:
            if fn in _wakers:
                _wakers.remove(fn)

    return remove


def _after_commit(session: Session) -> None:
    if session.info.pop(_PENDING_KEY, False):
        with _wakers_lock:
            wakers = list(_wakers)
        for fn in wakers:
            fn()


def _after_rollback(session: Session) -> None:
    session.info.pop(_PENDING_KEY, None)
