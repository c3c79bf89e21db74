"""Checking many sources at once: claim the due ones as fetch slots free up, check them concurrently.

:func:`check_due` is the ``sources.check_due`` job (every 30 s, and at start-up) and what a separate
worker process runs; :func:`check_sources` checks named sources now (``chipwatch check``). Both share
one HTTP client, the fetch limits (:class:`~chipwatch.sources.fetch.FetchSlots`) and a
:class:`~chipwatch.sources.writers.BatchWriter`, and run :func:`~chipwatch.sources.check.check_source`
for each source: feeds and dataset sources alike (a dataset source's changed file is imported in the
check's write, see :mod:`chipwatch.sources.check`).

Several processes may run :func:`check_due` at once against one database: a source is claimed
(``claimed_until``/``claimed_by``, through :mod:`chipwatch.kit.claims`) in a short transaction just
before it is fetched, so no two of them check the same source in one due period. A pass claims no
more than it can fetch at once (``fetch_concurrency`` less the fetches under way), and its claims are
short leases (``claim_lease_s``) renewed while it works (:class:`~chipwatch.kit.claims.Heartbeat`):
if the process dies, its few sources are claimable again within one lease, and a pass still under way
elsewhere (or the next one) takes them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterable
from datetime import datetime
from typing import Any, TypeVar

import httpx
from sqlalchemy import and_, or_, select
from sqlmodel import Session

from chipwatch.config import Settings, get_settings
from chipwatch.db import session_scope
from chipwatch.kit.claims import Heartbeat, claim_rows, new_worker_id, unclaimed
from chipwatch.kit.time import utcnow
from chipwatch.sources.check import CheckOutcome, SourceSnapshot, check_source, is_checked
from chipwatch.sources.errors import NotAFeed, SourceNotFound
from chipwatch.sources.fetch import FetchSlots, make_client
from chipwatch.sources.models import DATASET_SOURCE_KINDS, FEED_KINDS, Source
from chipwatch.sources.writers import BatchWriter, Writer

logger = logging.getLogger(__name__)
T = TypeVar("T")

OnOutcome = Callable[[CheckOutcome], None]
IN_CHUNK = 500  # bound on IN (...) list sizes
# Rounds of candidate picking per claim: more than one only when other workers claim at the same time.
CLAIM_ROUNDS = 3
# While its checks run, a pass that found nothing more to claim looks again this often (at most a third
# of the lease), so sources falling due or left by a dead worker are taken by a pass already under way.
RECHECK_S = 5.0
CHECKED_KINDS = (*FEED_KINDS, *DATASET_SOURCE_KINDS)
# The interpreter's thread switch interval while a pass runs (CPython's default is 5 ms); see
# :func:`_quick_thread_switches`.
PASS_SWITCH_INTERVAL_S = 0.0005

_switch_lock = threading.Lock()
_switch_passes = 0
_switch_saved_s = 0.0


@contextlib.contextmanager
def _quick_thread_switches():
    """Lower the interpreter's thread switch interval to :data:`PASS_SWITCH_INTERVAL_S` for the block.

    Why: a pass runs its writer thread (ORM and SQLite work, mostly Python) beside the event loop that
    does the fetches. Each socket call of the loop lets go of the interpreter lock, and once the
    writer has it the loop gets it back only when the writer has run for the switch interval: at
    the default 5 ms that wait, paid on nearly every send, recv and poll while the writer is busy,
    halved the pass's fetch rate (the "convoy effect"). At 0.5 ms the loop waits a tenth as long, and
    the writer, which lets go of the lock on each SQLite call anyway, loses little. Passes running at
    the same time share one lowered setting; the last one to end restores the previous value.
    """
    global _switch_passes, _switch_saved_s
    with _switch_lock:
        if _switch_passes == 0:
            _switch_saved_s = sys.getswitchinterval()
            sys.setswitchinterval(min(_switch_saved_s, PASS_SWITCH_INTERVAL_S))
        _switch_passes += 1
    try:
        yield
    finally:
        with _switch_lock:
            _switch_passes -= 1
            if _switch_passes == 0:
                sys.setswitchinterval(_switch_saved_s)


# The part of "due" that does not depend on the time, built once: a pass claims a few hundred times,
# and building the expression (13 kinds coerced one by one) cost more than running its query.
_CHECKED = and_(Source.enabled.is_(True), Source.kind.in_(CHECKED_KINDS), Source.url.is_not(None))


def _due(now: datetime):
    return and_(
        _CHECKED,
        or_(Source.next_check_at.is_(None), Source.next_check_at <= now),
        unclaimed(Source, now),
    )


def claim_due(
    *, session: Session, worker_id: str, limit: int, lease_until: datetime, now: datetime
) -> list[SourceSnapshot]:
    """Claim up to ``limit`` due sources for ``worker_id`` until ``lease_until``; returns their snapshots,
    ordered by id.

    Due: enabled feeds and dataset sources whose ``next_check_at`` is null or past and that no live
    claim holds. The longest overdue go first (never-checked ones before all). Candidates another
    worker is claiming at the same moment (PostgreSQL skips rows it has locked) are replaced by the
    next due ones, for up to ``CLAIM_ROUNDS`` rounds, so that a short answer still means nothing else
    is due. The caller commits; the claim holds from then on.
    """
    claimed: list[str] = []
    tried: list[str] = []
    due = _due(now)
    for _round in range(CLAIM_ROUNDS):
        wanted = limit - len(claimed)
        stmt = select(Source.id).where(due)
        if tried:
            stmt = stmt.where(Source.id.not_in(tried))
        # The id breaks ties, and they are common: every never-checked source has a null next_check_at,
        # and so has one whose claim lapsed with its holder before its first check. Without it, PostgreSQL
        # returns the tied rows in their physical order, where a lapsed claim's row (rewritten by the
        # claim) comes last: a dead worker's sources then waited for every other never-checked source
        # instead of being taken within a lease.
        stmt = stmt.order_by(Source.next_check_at.asc().nulls_first(), Source.id).limit(wanted)
        candidates = list(session.scalars(stmt))
        claimed += claim_rows(
            session=session,
            table=Source,
            ids=candidates,
            due=due,
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


def _claimer(worker_id: str, limit: int, heartbeat: Heartbeat) -> Callable[[Session], list[SourceSnapshot]]:
    """A write function claiming up to ``limit`` due sources for one lease, for the pass's writer.

    Claims go through the same writer as the check results, so that on SQLite they queue behind its
    transactions in this process instead of waiting on the database lock.
    """

    def claim(session: Session) -> list[SourceSnapshot]:
        now = utcnow()
        return claim_due(
            session=session, worker_id=worker_id, limit=limit, lease_until=heartbeat.lease_until(now), now=now
        )

    return claim


class _RecordingWriter:
    """The pass's writer, counting the checks whose write is queued or running (their fetch is over)."""

    def __init__(self, inner: Writer, on_change: Callable[[], None]) -> None:
        self.inner = inner
        self.busy = 0
        self._on_change = on_change

    async def run(
        self, fn: Callable[[Session], T], *, source_id: str | None = None, urgent: bool = False
    ) -> T:
        """``inner.run(...)``, counted in :attr:`busy` while it waits and runs."""
        self.busy += 1
        self._on_change()
        try:
            return await self.inner.run(fn, source_id=source_id, urgent=urgent)
        finally:
            self.busy -= 1


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

    Sources are claimed as fetch slots free up: at most ``fetch_concurrency`` claimed sources are
    being fetched at once (a check whose fetch is over and whose result waits for the writer no longer
    counts), at most ``check_batch_size`` per claim transaction, and a claim is made once at least
    half the slots are free, so claims do not break up the writer's group commits. Claims last
    ``claim_lease_s`` and are renewed every third of it until the check is recorded. Fetches share
    one HTTP client (``client``, else one made here), at most ``fetch_per_host_limit`` per host;
    claims, renewals and results are written through ``writer`` (default: a
    :class:`~chipwatch.sources.writers.BatchWriter`, one writer thread with group commit). When a
    claim comes back short, the pass looks again every :data:`RECHECK_S` seconds while its checks
    run, and ends when none is left. ``on_outcome`` is called after each check. Errors of a single
    source end up in its outcome and health, never here. A failing claim (database unreachable) is
    tried again while checks are under way and ends the pass with its exception when none are; the
    claims it leaves behind lapse.
    """
    settings = settings or get_settings()
    worker_id = (worker_id or new_worker_id())[:64]
    async with contextlib.AsyncExitStack() as stack:
        stack.enter_context(_quick_thread_switches())
        http = client or await stack.enter_async_context(make_client(settings))
        writer = writer or await stack.enter_async_context(BatchWriter(settings))
        heartbeat = await stack.enter_async_context(
            Heartbeat(
                table=Source,
                worker_id=worker_id,
                lease_s=settings.claim_lease_s,
                run_write=lambda fn: writer.run(fn, urgent=True),
            )
        )
        outcomes = await _claim_and_check(settings, worker_id, http, writer, heartbeat, on_outcome)
    if outcomes:
        failed = sum(o.status == "error" for o in outcomes)
        new = sum(o.new_items for o in outcomes)
        logger.info("checked %d sources: %d new items, %d failed", len(outcomes), new, failed)
    return outcomes


async def _claim_and_check(
    settings: Settings,
    worker_id: str,
    http: httpx.AsyncClient,
    writer: Writer,
    heartbeat: Heartbeat,
    on_outcome: OnOutcome | None,
) -> list[CheckOutcome]:
    """The body of :func:`check_due`: claims held by ``heartbeat`` from claim until recorded."""
    slots = FetchSlots(settings)
    pass_ = _Pass(capacity=max(1, settings.fetch_concurrency), batch=max(1, settings.check_batch_size),
                  recheck_s=min(RECHECK_S, settings.claim_lease_s / 3), on_outcome=on_outcome)
    recording = _RecordingWriter(writer, pass_.wake)

    async def check(snap: SourceSnapshot) -> CheckOutcome:
        try:
            return await _check_safely(
                snap.id, settings=settings, client=http, slots=slots, snapshot=snap, writer=recording
            )
        finally:
            heartbeat.drop([snap.id])

    async def claim(limit: int) -> list[SourceSnapshot]:
        # Urgent: the fetches wait for this claim, while results can wait for company.
        claimed = await writer.run(_claimer(worker_id, limit, heartbeat), urgent=True)
        heartbeat.hold(snap.id for snap in claimed)
        return claimed

    return await pass_.run(claim, check, fetching=lambda in_flight: in_flight - recording.busy)


class _Pass:
    """The claim-and-check loop of one :func:`check_due` pass."""

    def __init__(self, *, capacity: int, batch: int, recheck_s: float, on_outcome: OnOutcome | None) -> None:
        self.capacity, self.batch, self.recheck_s = capacity, batch, recheck_s
        self.on_outcome = on_outcome
        self._changed = asyncio.Event()

    def wake(self) -> None:
        """A check moved on (its fetch ended or it finished): look at the free slots again."""
        self._changed.set()

    def _room(self, fetching: int) -> int:
        """How many sources to claim now: the free fetch slots, once at least half of them are free."""
        free = self.capacity - fetching
        return min(self.batch, free) if free >= max(1, self.capacity // 2) else 0

    async def run(
        self,
        claim: Callable[[int], Awaitable[list[SourceSnapshot]]],
        check: Callable[[SourceSnapshot], Awaitable[CheckOutcome]],
        *,
        fetching: Callable[[int], int],
    ) -> list[CheckOutcome]:
        """Claim and check until a claim came back short (or none was due) and every check has finished.

        ``fetching(in_flight)`` says how many of the ``in_flight`` checks still occupy a fetch slot. A
        failing claim ends the pass with its exception when no check is under way; otherwise it is
        logged and tried again after ``recheck_s`` while the checks under way finish.
        """
        outcomes: list[CheckOutcome] = []
        tasks: set[asyncio.Task[Any]] = set()
        in_flight = 0

        async def one(snap: SourceSnapshot) -> None:
            nonlocal in_flight
            outcome = await check(snap)
            in_flight -= 1
            outcomes.append(outcome)
            if self.on_outcome is not None:
                self.on_outcome(outcome)
            self.wake()

        short_at: float | None = None  # when a claim last came back short (nothing more was due)
        try:
            while True:
                self._changed.clear()
                room = self._room(fetching(in_flight))
                if room and (short_at is None or time.monotonic() - short_at >= self.recheck_s):
                    try:
                        claimed = await claim(room)
                    except Exception as exc:
                        if not in_flight:
                            raise
                        logger.warning("claiming due sources failed (%s: %s); trying again in %g s",
                                       type(exc).__name__, exc, self.recheck_s)
                        claimed = []
                    short_at = time.monotonic() if len(claimed) < room else None
                    in_flight += len(claimed)
                    for snap in claimed:
                        task = asyncio.create_task(one(snap))
                        tasks.add(task)
                        task.add_done_callback(tasks.discard)
                    if claimed:
                        continue
                if not in_flight:
                    return outcomes
                wait_s = None if short_at is None else max(0.0, short_at + self.recheck_s - time.monotonic())
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), wait_s)
        finally:
            for task in list(tasks):  # only when cancelled or failing: leave no orphan checks behind
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
    sources that are not checked (neither feeds nor dataset sources) come back as ``error`` outcomes."""
    settings = settings or get_settings()
    ids = list(dict.fromkeys(source_ids))
    snapshots = await asyncio.to_thread(_snapshots, settings, ids)
    outcomes: list[CheckOutcome] = []
    async with contextlib.AsyncExitStack() as stack:
        stack.enter_context(_quick_thread_switches())
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
    """Snapshots of the checked sources among ``ids``, read in one transaction; others are left out
    (the check then reports them as unknown or not checked)."""
    found: dict[str, SourceSnapshot] = {}
    with session_scope(settings, write=False) as session:
        for start in range(0, len(ids), IN_CHUNK):
            for row in session.scalars(select(Source).where(Source.id.in_(ids[start : start + IN_CHUNK]))):
                if is_checked(row) and row.removed_at is None:
                    found[row.id] = SourceSnapshot.of(row)
    return found


__all__ = ["RECHECK_S", "check_due", "check_sources", "claim_due"]
