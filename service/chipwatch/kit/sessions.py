"""Request dependencies that own the transaction: the route's session commits when it returns."""

from __future__ import annotations

from collections.abc import Iterator

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
