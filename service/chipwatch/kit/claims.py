"""Row claims: a worker leases rows (feed checks, webhook deliveries) so no two workers take one at once.

A claimable table has ``id``, ``claimed_until`` (UTC) and ``claimed_by`` columns. A claim is a lease:
when its holder dies, the rows become claimable again once ``claimed_until`` has passed.

* PostgreSQL: the candidate rows are locked with ``SELECT ... FOR UPDATE SKIP LOCKED``, so rows another
  claimant is taking right now are passed over instead of waited for.
* SQLite: a write transaction takes the database lock at ``BEGIN IMMEDIATE`` (see :mod:`chipwatch.db`),
  so claimants are serialised already.

On both, the claiming ``UPDATE`` repeats the caller's "due" test, so a row claimed between the
caller's choice and the update is never taken twice, and reports the ids it took with ``RETURNING``.
"""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.sql import ColumnElement
from sqlmodel import Session

from chipwatch.db import is_postgres


def new_worker_id() -> str:
    """``host:pid:random``, at most 64 characters: who holds a claim (the ``claimed_by`` column)."""
    return f"{socket.gethostname()[:40]}:{os.getpid()}:{secrets.token_hex(4)}"[:64]


def unclaimed(table: Any, now: datetime) -> ColumnElement[bool]:
    """SQL condition: the row of ``table`` is free at ``now`` (never claimed, or its lease ran out)."""
    return or_(table.claimed_until.is_(None), table.claimed_until < now)


def claim_rows(
    *,
    session: Session,
    table: Any,
    ids: Sequence[Any],
    due: ColumnElement[bool],
    worker_id: str,
    lease_until: datetime,
) -> list[Any]:
    """Claim the rows of ``table`` among ``ids`` that still satisfy ``due``, until ``lease_until``.

    ``due`` must include :func:`unclaimed` (or an equivalent test) so a live claim is never taken over.
    Returns the ids claimed by this call, in no particular order; rows locked by another claimant on
    PostgreSQL, or no longer due, are left out. The caller's transaction commits the claim.
    """
    ids = list(ids)
    if not ids:
        return []
    if is_postgres(session.get_bind()):
        locked = select(table.id).where(table.id.in_(ids), due).with_for_update(skip_locked=True)
        ids = list(session.scalars(locked))
        if not ids:
            return []
    claimed = session.execute(
        update(table)
        .where(table.id.in_(ids), due)
        .values(claimed_until=lease_until, claimed_by=worker_id)
        .returning(table.id)
        .execution_options(synchronize_session=False)
    )
    return list(claimed.scalars())


def release_rows(*, session: Session, table: Any, ids: Sequence[Any], worker_id: str) -> int:
    """Hand back the claims ``worker_id`` holds on ``ids`` (claimable again at once); returns how many."""
    if not ids:
        return 0
    result = session.execute(
        update(table)
        .where(table.id.in_(list(ids)), table.claimed_by == worker_id)
        .values(claimed_until=None, claimed_by=None)
        .execution_options(synchronize_session=False)
    )
    return result.rowcount or 0
