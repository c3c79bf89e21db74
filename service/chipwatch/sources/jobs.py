"""Scheduled feed checks: claim due sources in batches, refresh them concurrently, politely.

:func:`check_due` is the ``sources.check_due`` job (every 30 s, and at start-up) and the entry point a
separate worker process calls. Several processes may run it at once against one database: a source is
claimed (``claimed_until``/``claimed_by``) in a short transaction before it is fetched, so no two of
them check the same source in one due period.

* PostgreSQL: ``SELECT ... FOR UPDATE SKIP LOCKED`` picks rows no other claimant holds, the claim is
  written and committed at once.
* SQLite: the write transaction takes the database lock at BEGIN (see :mod:`chipwatch.db`), and the
  ``UPDATE`` re-checks that each row is still unclaimed, so the claim is atomic as well.

A claim is a lease: if the process dies, the sources become claimable again when it expires.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta

import httpx
from sqlalchemy import and_, or_, select, update
from sqlmodel import Session

from chipwatch.config import Settings, get_settings
from chipwatch.db import is_postgres, session_scope
from chipwatch.scheduler import Job
from chipwatch.sources.fetch import make_client
from chipwatch.sources.models import FEED_KINDS, Source
from chipwatch.sources.service import (
    BatchWriter,
    CheckOutcome,
    FetchSlots,
    NotAFeed,
    SourceNotFound,
    SourceSnapshot,
    Writer,
    is_feed,
    refresh_source,
)

logger = logging.getLogger(__name__)

OnOutcome = Callable[[CheckOutcome], None]


def default_worker_id() -> str:
    """``host:pid:random`` naming this claimant in ``sources.claimed_by`` (at most 64 characters)."""
    return f"{socket.gethostname()[:40]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def lease_s(settings: Settings) -> float:
    """How long a claim lasts, in seconds: long enough for two whole batches (a pass claims one
    batch ahead) to be fetched one after another, each hitting the fetch timeout.

    Taken this generously because a lease that expires while its source is still being checked would
    let another worker check it too; a crashed worker only delays its sources by this much.
    """
    return settings.fetch_timeout_s * (2 * settings.check_batch_size + 1) + 60.0


def _due(now: datetime):
    return and_(
        Source.enabled.is_(True),
        Source.kind.in_(FEED_KINDS),
        Source.url.is_not(None),
        or_(Source.next_check_at.is_(None), Source.next_check_at <= now),
        or_(Source.claimed_until.is_(None), Source.claimed_until < now),
    )


def claim_due(
    *, session: Session, worker_id: str, limit: int, lease_until: datetime, now: datetime
) -> list[SourceSnapshot]:
    """Claim up to ``limit`` due sources for ``worker_id`` until ``lease_until``; returns their snapshots.

    Due: enabled feeds whose ``next_check_at`` is null or past and that no live claim holds. The longest
    overdue go first (never-checked ones before all). The caller commits; the claim holds from then on.
    """
    stmt = (
        select(Source.id)
        .where(_due(now))
        .order_by(Source.next_check_at.asc().nulls_first(), Source.id)
        .limit(limit)
    )
    if is_postgres(session.get_bind().engine):
        stmt = stmt.with_for_update(skip_locked=True)
    ids = list(session.scalars(stmt))
    if not ids:
        return []
    # The guard repeats the "unclaimed and due" test, so a row claimed meanwhile is not taken twice.
    session.execute(
        update(Source)
        .where(Source.id.in_(ids), _due(now))
        .values(claimed_until=lease_until, claimed_by=worker_id)
        .execution_options(synchronize_session=False)
    )
    rows = session.scalars(
        select(Source).where(Source.id.in_(ids), Source.claimed_by == worker_id).order_by(Source.id)
    )
    return [SourceSnapshot.of(row) for row in rows]


def _claimer(settings: Settings, worker_id: str, limit: int) -> Callable[[Session], list[SourceSnapshot]]:
    """A write function claiming the next batch, for the pass's writer.

    Claims go through the same writer as the check results, so that on SQLite they queue behind its
    transactions in this process instead of waiting on the database lock.
    """

    def claim(session: Session) -> list[SourceSnapshot]:
        now = datetime.now(UTC)
        return claim_due(
            session=session,
            worker_id=worker_id,
            limit=limit,
            lease_until=now + timedelta(seconds=lease_s(settings)),
            now=now,
        )

    return claim


async def _refresh_safely(
    source_id: str,
    *,
    settings: Settings,
    client: httpx.AsyncClient,
    slots: FetchSlots,
    snapshot: SourceSnapshot | None = None,
    writer: Writer | None = None,
) -> CheckOutcome:
    """:func:`refresh_source`, with "gone", "not a feed" (a source changed meanwhile) or an unexpected
    failure as an ``error`` outcome instead of an exception."""
    try:
        return await refresh_source(
            source_id, settings=settings, client=client, snapshot=snapshot, writer=writer, slots=slots
        )
    except (SourceNotFound, NotAFeed) as exc:
        return CheckOutcome(source_id=source_id, status="error", error=str(exc))
    except Exception as exc:  # a bug in one check must not stall or end the whole pass
        logger.exception("checking source %s failed unexpectedly", source_id, extra={"source_id": source_id})
        return CheckOutcome(
            source_id=source_id, status="error", error=f"unexpected error: {type(exc).__name__}: {exc}"
        )


async def check_due(
    settings: Settings | None = None,
    *,
    worker_id: str | None = None,
    client: httpx.AsyncClient | None = None,
    writer: Writer | None = None,
    on_outcome: OnOutcome | None = None,
) -> list[CheckOutcome]:
    """Check every source that is due now; returns one :class:`CheckOutcome` per source checked.

    Sources are claimed ``check_batch_size`` at a time, and the next batch is claimed while the
    previous one is still being checked, whenever fewer than ``max(check_batch_size,
    2 * fetch_concurrency)`` checks are in flight. Fetches share one HTTP client (``client``, else
    one made here), at most ``fetch_concurrency`` at once and ``fetch_per_host_limit`` per host;
    claims and results are written through ``writer`` (default: a
    :class:`~chipwatch.sources.service.BatchWriter`, one writer thread with group commit). The pass
    ends when a claim comes back short (nothing else is due). ``on_outcome`` is called after each
    check. Errors of a single source end up in its outcome and health, never here.
    """
    settings = settings or get_settings()
    worker_id = (worker_id or default_worker_id())[:64]
    batch = max(1, settings.check_batch_size)
    outcomes: list[CheckOutcome] = []
    running: set[asyncio.Task[None]] = set()
    finished: asyncio.Queue[CheckOutcome] = asyncio.Queue()
    exhausted = False
    async with contextlib.AsyncExitStack() as stack:
        http = client or await stack.enter_async_context(make_client(settings))
        writer = writer or await stack.enter_async_context(BatchWriter(settings))
        slots = FetchSlots(settings)

        async def check(snap: SourceSnapshot) -> None:
            finished.put_nowait(
                await _refresh_safely(
                    snap.id, settings=settings, client=http, slots=slots, snapshot=snap, writer=writer
                )
            )

        try:
            # Checks waiting for the writer count as in flight too, so claim ahead by a whole batch.
            ahead = max(batch, 2 * settings.fetch_concurrency)
            in_flight = 0
            while True:
                if not exhausted and in_flight < ahead:
                    # Urgent: the fetches wait for this claim, while results can wait for company.
                    claimed = await writer.run(_claimer(settings, worker_id, batch), urgent=True)
                    exhausted = len(claimed) < batch
                    for snap in claimed:
                        task = asyncio.create_task(check(snap))
                        running.add(task)
                        task.add_done_callback(running.discard)
                    in_flight += len(claimed)
                if not in_flight:
                    break
                outcomes.append(await finished.get())
                in_flight -= 1
                if on_outcome is not None:
                    on_outcome(outcomes[-1])
        finally:
            for task in list(running):  # only when cancelled: leave no orphan checks behind
                task.cancel()
    if outcomes:
        failed = sum(o.status == "error" for o in outcomes)
        new = sum(o.new_items for o in outcomes)
        logger.info("checked %d sources: %d new items, %d failed", len(outcomes), new, failed)
    return outcomes


async def refresh_sources(
    source_ids: Iterable[str],
    *,
    settings: Settings | None = None,
    client: httpx.AsyncClient | None = None,
    on_outcome: OnOutcome | None = None,
) -> list[CheckOutcome]:
    """Check the given sources now, whether due or not (``chipwatch check``), with the same limits
    and batched writes as :func:`check_due`. Returns outcomes in completion order; unknown ids and
    sources that are not feeds come back as ``error`` outcomes."""
    settings = settings or get_settings()
    ids = list(dict.fromkeys(source_ids))
    snapshots = await asyncio.to_thread(_snapshots, settings, ids)
    outcomes: list[CheckOutcome] = []
    async with contextlib.AsyncExitStack() as stack:
        http = client or await stack.enter_async_context(make_client(settings))
        writer = await stack.enter_async_context(BatchWriter(settings))
        slots = FetchSlots(settings)
        tasks = [
            asyncio.create_task(
                _refresh_safely(
                    sid,
                    settings=settings,
                    client=http,
                    slots=slots,
                    writer=writer,
                    snapshot=snapshots.get(sid),
                )
            )
            for sid in ids
        ]
        try:
            for next_done in asyncio.as_completed(tasks):
                outcomes.append(await next_done)
                if on_outcome is not None:
                    on_outcome(outcomes[-1])
        finally:
            for task in tasks:
                task.cancel()
    return outcomes


def _snapshots(settings: Settings, ids: list[str]) -> dict[str, SourceSnapshot]:
    """Snapshots of the feeds among ``ids``, read in one transaction; others are left out (the
    refresh then reports them as unknown or not a feed)."""
    found: dict[str, SourceSnapshot] = {}
    with session_scope(settings, write=False) as session:
        for start in range(0, len(ids), 500):
            for row in session.scalars(select(Source).where(Source.id.in_(ids[start : start + 500]))):
                if is_feed(row):
                    found[row.id] = SourceSnapshot.of(row)
    return found


async def _check_due_job(settings: Settings) -> list[CheckOutcome]:
    return await check_due(settings)


JOBS = [
    Job(
        "sources.check_due",
        _check_due_job,
        interval_s=30,
        run_at_start=True,
        description="claim the feeds that are due and check them",
    )
]

__all__ = ["JOBS", "check_due", "claim_due", "default_worker_id", "lease_s", "refresh_sources"]
