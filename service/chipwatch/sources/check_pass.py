"""Checking many sources at once: claim the due ones in batches, check them concurrently, politely.

:func:`check_due` is the ``sources.check_due`` job (every 30 s, and at start-up) and what a separate
worker process runs; :func:`check_sources` checks named sources now (``chipwatch check``). Both share
one HTTP client, the fetch limits (:class:`~chipwatch.sources.fetch.FetchSlots`) and a
:class:`~chipwatch.sources.writers.BatchWriter`, and run :func:`~chipwatch.sources.check.check_source`
for each source.

Several processes may run :func:`check_due` at once against one database: a source is claimed
(``claimed_until``/``claimed_by``, through :mod:`chipwatch.kit.claims`) in a short transaction before
it is fetched, so no two of them check the same source in one due period. A claim is a lease: if the
process dies, its sources become claimable again when it expires.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterable
from datetime import datetime, timedelta

import httpx
from sqlalchemy import and_, or_, select
from sqlmodel import Session

from chipwatch.config import Settings, get_settings
from chipwatch.db import session_scope
from chipwatch.kit.claims import claim_rows, new_worker_id, unclaimed
from chipwatch.kit.time import utcnow
from chipwatch.sources.check import CheckOutcome, SourceSnapshot, check_source, is_feed
from chipwatch.sources.errors import NotAFeed, SourceNotFound
from chipwatch.sources.fetch import FetchSlots, make_client
from chipwatch.sources.models import FEED_KINDS, Source
from chipwatch.sources.writers import BatchWriter, Writer

logger = logging.getLogger(__name__)

OnOutcome = Callable[[CheckOutcome], None]
IN_CHUNK = 500  # bound on IN (...) list sizes
# Rounds of candidate picking per claim: more than one only when other workers claim at the same time.
CLAIM_ROUNDS = 3


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
        unclaimed(Source, now),
    )


def claim_due(
    *, session: Session, worker_id: str, limit: int, lease_until: datetime, now: datetime
) -> list[SourceSnapshot]:
    """Claim up to ``limit`` due sources for ``worker_id`` until ``lease_until``; returns their snapshots,
    ordered by id.

    Due: enabled feeds whose ``next_check_at`` is null or past and that no live claim holds. The longest
    overdue go first (never-checked ones before all). Candidates another worker is claiming at the same
    moment (PostgreSQL skips rows it has locked) are replaced by the next due ones, for up to
    ``CLAIM_ROUNDS`` rounds, so that a short answer still means nothing else is due. The caller
    commits; the claim holds from then on.
    """
    claimed: list[str] = []
    tried: list[str] = []
    for _round in range(CLAIM_ROUNDS):
        wanted = limit - len(claimed)
        stmt = select(Source.id).where(_due(now))
        if tried:
            stmt = stmt.where(Source.id.not_in(tried))
        stmt = stmt.order_by(Source.next_check_at.asc().nulls_first(), Source.id).limit(wanted)
        candidates = list(session.scalars(stmt))
        claimed += claim_rows(
            session=session,
            table=Source,
            ids=candidates,
            due=_due(now),
            worker_id=worker_id,
            lease_until=lease_until,
        )
        tried += candidates
        if len(candidates) < wanted or len(claimed) >= limit:
            break
    if not claimed:
        return []
    rows = session.scalars(select(Source).where(Source.id.in_(claimed)).order_by(Source.id))
    return [SourceSnapshot.of(row) for row in rows]


def _claimer(settings: Settings, worker_id: str, limit: int) -> Callable[[Session], list[SourceSnapshot]]:
    """A write function claiming the next batch, for the pass's writer.

    Claims go through the same writer as the check results, so that on SQLite they queue behind its
    transactions in this process instead of waiting on the database lock.
    """

    def claim(session: Session) -> list[SourceSnapshot]:
        now = utcnow()
        return claim_due(
            session=session,
            worker_id=worker_id,
            limit=limit,
            lease_until=now + timedelta(seconds=lease_s(settings)),
            now=now,
        )

    return claim


async def _check_safely(
    source_id: str,
    *,
    settings: Settings,
    client: httpx.AsyncClient,
    slots: FetchSlots,
    snapshot: SourceSnapshot | None = None,
    writer: Writer | None = None,
) -> CheckOutcome:
    """:func:`check_source`, with "gone", "not a feed" (a source changed meanwhile) or an unexpected
    failure as an ``error`` outcome instead of an exception."""
    try:
        return await check_source(
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
    :class:`~chipwatch.sources.writers.BatchWriter`, one writer thread with group commit). The pass
    ends when a claim comes back short (nothing else is due). ``on_outcome`` is called after each
    check. Errors of a single source end up in its outcome and health, never here.
    """
    settings = settings or get_settings()
    worker_id = (worker_id or new_worker_id())[:64]
    batch = max(1, settings.check_batch_size)
    async with contextlib.AsyncExitStack() as stack:
        http = client or await stack.enter_async_context(make_client(settings))
        writer = writer or await stack.enter_async_context(BatchWriter(settings))
        slots = FetchSlots(settings)

        async def check(snap: SourceSnapshot) -> CheckOutcome:
            return await _check_safely(
                snap.id, settings=settings, client=http, slots=slots, snapshot=snap, writer=writer
            )

        async def claim() -> list[SourceSnapshot]:
            # Urgent: the fetches wait for this claim, while results can wait for company.
            return await writer.run(_claimer(settings, worker_id, batch), urgent=True)

        # Checks waiting for the writer count as in flight too, so claim ahead by a whole batch.
        ahead = max(batch, 2 * settings.fetch_concurrency)
        outcomes = await _run_claimed(claim, check, batch=batch, ahead=ahead, on_outcome=on_outcome)
    if outcomes:
        failed = sum(o.status == "error" for o in outcomes)
        new = sum(o.new_items for o in outcomes)
        logger.info("checked %d sources: %d new items, %d failed", len(outcomes), new, failed)
    return outcomes


async def _run_claimed(
    claim: Callable[[], Awaitable[list[SourceSnapshot]]],
    check: Callable[[SourceSnapshot], Awaitable[CheckOutcome]],
    *,
    batch: int,
    ahead: int,
    on_outcome: OnOutcome | None,
) -> list[CheckOutcome]:
    """Claim batches and check them until a claim comes back short and every check has finished."""
    outcomes: list[CheckOutcome] = []
    running: set[asyncio.Task[None]] = set()
    finished: asyncio.Queue[CheckOutcome] = asyncio.Queue()

    async def one(snap: SourceSnapshot) -> None:
        finished.put_nowait(await check(snap))

    exhausted, in_flight = False, 0
    try:
        while True:
            if not exhausted and in_flight < ahead:
                claimed = await claim()
                exhausted = len(claimed) < batch
                for snap in claimed:
                    task = asyncio.create_task(one(snap))
                    running.add(task)
                    task.add_done_callback(running.discard)
                in_flight += len(claimed)
            if not in_flight:
                return outcomes
            outcomes.append(await finished.get())
            in_flight -= 1
            if on_outcome is not None:
                on_outcome(outcomes[-1])
    finally:
        for task in list(running):  # only when cancelled: leave no orphan checks behind
            task.cancel()


async def check_sources(
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
                _check_safely(
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
    check then reports them as unknown or not a feed)."""
    found: dict[str, SourceSnapshot] = {}
    with session_scope(settings, write=False) as session:
        for start in range(0, len(ids), IN_CHUNK):
            for row in session.scalars(select(Source).where(Source.id.in_(ids[start : start + IN_CHUNK]))):
                if is_feed(row):
                    found[row.id] = SourceSnapshot.of(row)
    return found


__all__ = ["check_due", "check_sources", "claim_due", "lease_s"]
