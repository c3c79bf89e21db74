"""Request dependencies that own the transaction: the route's session commits when it returns.

A write is acknowledged only after it is durable (STYLE.md 15): ``WriteSession`` commits when the route
function returns, before FastAPI sends the response, and bumps the change clock at that commit so the
next read (cached or not) in this process sees the write. A commit the database refuses is answered
as a problem instead of the route's 2xx: 409 for an integrity conflict, 503 with ``Retry-After`` when
the database is busy or unavailable (:func:`chipwatch.kit.errors.database_problem`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from fastapi import Depends
from sqlalchemy.exc import DBAPIError
from sqlmodel import Session

from chipwatch.config import Settings
from chipwatch.db import session_scope
from chipwatch.kit.errors import database_problem

log = logging.getLogger("chipwatch.api")


def read_session() -> Iterator[Session]:
    """Request dependency: a read-only transaction."""
    with session_scope(write=False) as session:
        yield session


@contextmanager
def acknowledged_write(settings: Settings | None = None) -> Iterator[Session]:
    """A write transaction for an API request, committed on leaving the block.

    A database error inside the block or at the commit is raised as the problem the client gets
    (:func:`~chipwatch.kit.errors.database_problem`: ``ApiError`` 409, or 503 with ``Retry-After``);
    other errors pass through unchanged. Nothing is written in either case. Routes take it through
    :data:`WriteSession`; a route that must run its transaction in a thread of its own (one that reads
    its body itself) uses it directly.
    """
    try:
        with session_scope(settings, write=True) as session:
            yield session
    except DBAPIError as exc:
        problem = database_problem(exc, writing=True)
        if problem is None:
            raise
        log.warning("write not saved: %s", problem.detail)
        raise problem from exc


def write_session() -> Iterator[Session]:
    """Request dependency: a write transaction, committed when the route returns without error.

    Use it as :data:`WriteSession`; with plain ``Depends(write_session)`` FastAPI commits after the
    response has been sent.
    """
    with acknowledged_write() as session:
        yield session


ReadSession = Depends(read_session)
"""``session: Session = ReadSession`` in a read route."""

WriteSession = Depends(write_session, scope="function")
"""``session: Session = WriteSession`` in a write route: the transaction commits when the route function
returns, before the response is sent, so a 2xx is only ever sent for a durable write; a failed commit
answers with an error instead (STYLE.md 15)."""
