"""Row claims: a worker leases rows (feed checks, webhook deliveries) so no two workers take one at once.

A claimable table has ``id``, ``claimed_until`` (UTC) and ``claimed_by`` columns. A claim is a lease:
when its holder dies, the rows become claimable again once ``claimed_until`` has passed.

* PostgreSQL: the candidate rows are locked with ``SELECT ... FOR UPDATE SKIP LOCKED``, so rows another
  claimant is taking right now are passed over instead of waited for.
* SQLite: a write transaction takes the database lock at ``BEGIN IMMEDIATE`` (see :mod:`chipwatch.db`),
  so claimants are serialised already.

On both, the claiming ``UPDATE`` repeats the caller's "due" test, so a row claimed between the
caller's choice and the update is never taken twice, and reports the ids it took with ``RETURNING``.

Leases are short (``claim_lease_s``, 30 s by default) and renewed while the holder works
(:class:`Heartbeat`, every third of the lease), so a claim outlives its holder by at most one lease
whatever the work takes: a slow fetch or send keeps its claim, a killed worker's claims lapse and
another worker takes the rows over at its next poll.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
from collections.abc import Awaitable, Callable, Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.sql import ColumnElement
from sqlmodel import Session

from chipwatch.db import is_postgres
from chipwatch.kit.time import utcnow

log = logging.getLogger(__name__)

# Bound on the IN (...) list of one renewal statement.
RENEW_CHUNK = 500
# Renewals per lease: a lease survives two failed renewals in a row (a database restart, a long commit).
BEATS_PER_LEASE = 3

WriteRunner = Callable[[Callable[[Session], Any]], Awaitable[Any]]
"""Runs ``fn(session)`` in a committed write transaction and returns its result (the holder's writer)."""


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


def renew_rows(
    *, session: Session, table: Any, ids: Sequence[Any], worker_id: str, lease_until: datetime
) -> list[Any]:
    """Extend the claims ``worker_id`` still holds on ``ids`` to ``lease_until``; returns the ids renewed.

    A row whose claim was released, settled (``claimed_by`` cleared by the holder's own write) or taken
    over by another worker after a lapse is left alone and missing from the answer.
    """
    ids = list(ids)
    if not ids:
        return []
    renewed = session.execute(
        update(table)
        .where(table.id.in_(ids), table.claimed_by == worker_id)
        .values(claimed_until=lease_until)
        .returning(table.id)
        .execution_options(synchronize_session=False)
    )
    return list(renewed.scalars())


class Heartbeat:
    """Keeps a worker's live claims on ``table`` from lapsing: renews them every ``lease_s / 3`` seconds.

    The holder calls :meth:`hold` with the ids it has just claimed and :meth:`drop` once their work is
    recorded (or handed back). ``run_write(fn)`` runs ``fn(session)`` in a committed write transaction;
    holders pass their own writer so renewals queue with their other writes (on SQLite one writer thread
    never waits on the database lock). A failed renewal (database unreachable) is logged and retried at
    the next beat; two in a row still leave a third of the lease. Use as ``async with Heartbeat(...)``.
    """

    def __init__(self, *, table: Any, worker_id: str, lease_s: float, run_write: WriteRunner) -> None:
        self.table = table
        self.worker_id = worker_id
        self.lease_s = float(lease_s)
        self.interval_s = self.lease_s / BEATS_PER_LEASE
        self._run_write = run_write
        self._held: set[Any] = set()
        self._task: asyncio.Task[None] | None = None
        self.beats = 0
        self.failures = 0

    def lease_until(self, now: datetime | None = None) -> datetime:
        """When a claim taken or renewed at ``now`` (default: the current time) lapses."""
        return (now or utcnow()) + timedelta(seconds=self.lease_s)

    def hold(self, ids: Iterable[Any]) -> None:
        """Keep renewing these claims until :meth:`drop`."""
        self._held.update(ids)

    def drop(self, ids: Iterable[Any]) -> None:
        """Stop renewing these claims (their work is recorded, or they were handed back)."""
        self._held.difference_update(ids)

    @property
    def held(self) -> frozenset[Any]:
        """The ids currently renewed."""
        return frozenset(self._held)

    async def beat(self) -> list[Any]:
        """Renew every held claim now; returns the ids renewed (exceptions of the write propagate)."""
        ids = sorted(self._held, key=str)
        if not ids:
            return []
        until = self.lease_until()
        renewed: list[Any] = []
        for start in range(0, len(ids), RENEW_CHUNK):
            chunk = ids[start : start + RENEW_CHUNK]

            def renew(session: Session, chunk: list[Any] = chunk) -> list[Any]:
                return renew_rows(
                    session=session, table=self.table, ids=chunk, worker_id=self.worker_id, lease_until=until
                )

            renewed += await self._run_write(renew)
        self.beats += 1
        return renewed

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval_s)
            try:
                await self.beat()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the database may be restarting: try again at the next beat
                self.failures += 1
                log.warning(
                    "renewing %d claims on %s failed: %s: %s",
                    len(self._held), self.table.__tablename__, type(exc).__name__,
                    (str(exc).splitlines() or [""])[0],
                    extra={"worker_id": self.worker_id},
                )

    async def __aenter__(self) -> Heartbeat:
        self._task = asyncio.create_task(self._run(), name=f"claims.heartbeat.{self.table.__tablename__}")
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
