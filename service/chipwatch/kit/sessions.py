"""Request dependencies that own the transaction: the route's session commits when it returns."""

from __future__ import annotations

from collections.abc import Iterator

from fastapi import Depends
from sqlmodel import Session

from chipwatch.db import session_scope


def read_session() -> Iterator[Session]:
    """Request dependency: a read-only transaction."""
    with session_scope(write=False) as session:
        yield session


def write_session() -> Iterator[Session]:
    """Request dependency: a write transaction, committed when the route returns without error."""
    with session_scope(write=True) as session:
        yield session


ReadSession = Depends(read_session)
"""``session: Session = ReadSession`` in a read route."""

WriteSession = Depends(write_session, scope="function")
"""``session: Session = WriteSession`` in a write route: the transaction commits when the route function
returns, before the response is sent, so a 2xx is only ever sent for a durable write; a failed commit
answers with an error instead (STYLE.md 15)."""
