"""The webhook dispatcher: fan out outbox events, claim due deliveries, send them, record the outcomes.

One asyncio task drives rounds.  A round is one short transaction, run in a worker thread (the ORM is
synchronous): record the outcomes of finished attempts, fan out new outbox events, claim due
deliveries.  Claimed deliveries are then sent concurrently on the event loop through one shared
``httpx.AsyncClient``.  No transaction is open while a request is on the wire, so a slow receiver never
holds a database lock, and a crash between sending and recording only costs a duplicate: the claim
lapses after its lease and the delivery is sent again (at-least-once).  Claims are short leases
(``claim_lease_s``) that a :class:`~chipwatch.kit.claims.Heartbeat` renews from claim until the
outcome is recorded, so a slow send keeps its claim and a dead dispatcher's claims lapse within one
lease.

Concurrency: at most ``webhook_concurrency`` attempts in flight and ``webhook_per_endpoint_concurrency``
per endpoint.  Claims never exceed an endpoint's limit, so a hanging endpoint occupies only its own
slots and the others keep flowing.  A dispatcher keeps up to :func:`claim_window` deliveries claimed;
those beyond the sending slots wait in memory, which keeps the slots busy while a round runs and lets
one round serve many attempts.  A queued claim that would not finish within its lease is released
unsent rather than risk a second worker sending it at the same time.

A round starts when an event commits in this process (``chipwatch.outbox.emit.add_waker``), on
PostgreSQL when another process commits one (``LISTEN``/``NOTIFY``, :mod:`chipwatch.outbox.notify`),
when part of the claim window has been sent, when the next retry falls due, and at least every
``poll_interval_s`` (lapsed claims; on SQLite, events written by other processes).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, fields
from datetime import datetime

import httpx

from chipwatch import metrics
from chipwatch.config import Settings
from chipwatch.db import session_scope
from chipwatch.kit.claims import Heartbeat, new_worker_id
from chipwatch.kit.retry_after import parse_retry_after
from chipwatch.kit.time import utcnow
from chipwatch.netguard import BlockedAddressError, GuardedTransport, HostResolutionError
from chipwatch.outbox.emit import add_waker
from chipwatch.outbox.notify import OutboxListener, libpq_conninfo
from chipwatch.webhooks import outbox, signing
from chipwatch.webhooks.models import Delivery
from chipwatch.webhooks.outbox import AttemptOutcome, ClaimedDelivery

log = logging.getLogger(__name__)

RESPONSE_READ_BYTES = 4096
LEASE_MARGIN_S = 10.0
DEFAULT_POLL_INTERVAL_S = 5.0
MIN_IDLE_WAIT_S = 0.2
MIN_CLAIM_WINDOW = 64
MAX_IDLE_ROUNDS = 20


def claim_window(settings: Settings) -> int:
    """How many deliveries one dispatcher keeps claimed: twice ``webhook_concurrency``, at least 64."""
    return max(2 * max(1, settings.webhook_concurrency), MIN_CLAIM_WINDOW)


def default_lease_s(settings: Settings) -> float:
    """How long a claim lasts, in seconds: ``claim_lease_s``, renewed every third of it while held.

    The lease only runs out when the holder died or cannot reach the database; then another worker
    (or this one, restarted) takes the delivery over.  A claim still queued when less than one timeout
    of its lease is left is released unsent, so even without renewals a lease does not end while its
    holder is still sending.
    """
    return settings.claim_lease_s


@dataclass
class DispatchStats:
    """Counts of one or more rounds: events fanned out, deliveries created, attempts and their results."""

    events: int = 0
    deliveries_created: int = 0
    claimed: int = 0
    succeeded: int = 0
    retried: int = 0
    failed: int = 0
    disabled: int = 0

    def add(self, other: DispatchStats) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


class Dispatcher:
    """Sends due webhook deliveries; ``start()`` runs it in the background, :meth:`drain` runs it to idle.

    ``lease_s`` (default :func:`default_lease_s`) is how long a claim lasts; ``poll_interval_s`` is the
    longest idle wait between rounds.  ``transport`` replaces the SSRF-guarded transport (benchmarks).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        worker_id: str | None = None,
        lease_s: float | None = None,
        poll_interval_s: float = DEFAULT_POLL_INTERVAL_S,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.settings = settings
        self.worker_id = worker_id or new_worker_id()
        self.lease_s = lease_s if lease_s is not None else default_lease_s(settings)
        self.poll_interval_s = poll_interval_s
        self.capacity = max(1, settings.webhook_concurrency)
        self.per_endpoint = max(1, settings.webhook_per_endpoint_concurrency)
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._claimed: dict[str, int] = {}  # endpoint id -> claimed deliveries not yet sent or ended
        self._slots = asyncio.Semaphore(self.capacity)
        self.window = claim_window(settings)
        # A new round starts once this many claims have been sent; the 1.5 x concurrency still
        # claimed keep every slot busy while it runs.
        self._round_threshold = max(self.window // 4, self.window - (3 * self.capacity) // 2)
        self._released: list[int] = []  # queued too long: handed back unsent in the next round
        self._tasks: set[asyncio.Task] = set()
        self._outcomes: list[AttemptOutcome] = []
        self._semaphores: dict[str, asyncio.Semaphore] = {}
        self._wake: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: asyncio.Task | None = None
        self._remove_waker = None
        self._listener: OutboxListener | None = None
        self._stopping = False
        self._heartbeat: Heartbeat | None = None
        self._db_lock: asyncio.Lock | None = None
        self.stats = DispatchStats()

    # ------------------------------------------------------------ lifecycle
    async def open(self) -> None:
        """Create the shared HTTP client and bind to the running loop (idempotent)."""
        if self._client is not None:
            return
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        # One transaction at a time per dispatcher: renewals and rounds write the same delivery rows,
        # and two transactions of one process updating them in different orders could deadlock.
        self._db_lock = asyncio.Lock()
        self._heartbeat = await Heartbeat(
            table=Delivery, worker_id=self.worker_id, lease_s=self.lease_s, run_write=self._write
        ).__aenter__()
        limits = httpx.Limits(max_connections=self.capacity, max_keepalive_connections=self.capacity)
        transport = self._transport or GuardedTransport(
            allow_private=self.settings.allow_private_networks, limits=limits
        )
        # Redirects are never followed (Standard Webhooks; a redirect could also point inside the
        # network).  The guarded transport connects only to addresses that passed the SSRF check.
        self._client = httpx.AsyncClient(
            transport=transport,
            timeout=httpx.Timeout(self.settings.webhook_timeout_s),
            follow_redirects=False,
            trust_env=False,
            headers={"user-agent": "chipwatch-webhooks/1"},
        )

    async def close(self) -> None:
        """Stop renewing claims and close the HTTP client (in-flight attempts must have ended)."""
        if self._heartbeat is not None:
            await self._heartbeat.__aexit__(None, None, None)
            self._heartbeat = None
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def __aenter__(self) -> Dispatcher:
        await self.open()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def start(self) -> None:
        """Run rounds in the background until :meth:`stop`; commits that emit events wake it at once."""
        await self.open()
        self._stopping = False
        # Called from whichever thread committed; wake() hands over to the dispatcher's loop.
        self._remove_waker = add_waker(self.wake)
        conninfo = libpq_conninfo(self.settings.resolved_database_url)
        if conninfo is not None:
            self._listener = OutboxListener(conninfo, self.wake)
            self._listener.start()
        self._runner = asyncio.create_task(self._run_forever(), name="webhooks.dispatcher")
        _active.add(self)
        log.info("webhook dispatcher started", extra={"worker_id": self.worker_id})

    async def stop(self, grace_s: float | None = None) -> None:
        """Stop taking work, let in-flight attempts finish (up to ``grace_s``, default the timeout),
        record their outcomes and close the client.  Attempts cut short are re-sent after their lease."""
        self._stopping = True
        _active.discard(self)
        if self._remove_waker is not None:
            self._remove_waker()
            self._remove_waker = None
        if self._listener is not None:
            await self._listener.stop()
            self._listener = None
        if self._wake is not None:
            self._wake.set()
        if self._runner is not None:
            try:
                await self._runner
            finally:
                self._runner = None
        if self._tasks:
            _done, pending = await asyncio.wait(
                set(self._tasks), timeout=self.settings.webhook_timeout_s if grace_s is None else grace_s
            )
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending)
        if self._outcomes or self._released:
            await self._locked(self._record_only)
        await self.close()
        log.info("webhook dispatcher stopped", extra={"worker_id": self.worker_id})

    def wake(self) -> None:
        """Start a round soon; safe to call from any thread."""
        if self._wake is None or self._loop is None:
            return
        try:
            self._loop.call_soon_threadsafe(self._wake.set)
        except RuntimeError:  # the loop has closed
            pass

    # ------------------------------------------------------------ rounds
    async def _run_forever(self) -> None:
        assert self._wake is not None
        while not self._stopping:
            self._wake.clear()
            try:
                stats, next_due = await self.round()
            except Exception:  # a failing round (database gone) must not end the dispatcher
                log.exception("webhook dispatch round failed")
                stats, next_due = DispatchStats(), None
            if self._stopping:
                break
            room = self._room()
            if stats.claimed and room >= self._round_threshold:
                continue  # more may be due right now
            wait_s = self.poll_interval_s
            if next_due is not None and room >= self._round_threshold:
                wait_s = min(wait_s, (next_due - utcnow()).total_seconds())
            # Something due that could not be claimed (its endpoint's slots are busy, another worker
            # holds it) is picked up when attempts end or a commit wakes us; never spin on it.
            wait_s = max(wait_s, MIN_IDLE_WAIT_S)
            try:
                await asyncio.wait_for(self._wake.wait(), timeout=wait_s)
            except TimeoutError:
                pass

    def _room(self) -> int:
        """How many more deliveries to claim (see :func:`claim_window`)."""
        return self.window - sum(self._claimed.values())

    async def round(self) -> tuple[DispatchStats, datetime | None]:
        """One round: record finished attempts, fan out, claim what fits and start sending it.

        Returns this round's stats and when the next delivery falls due (None: nothing pending).
        Sending continues in background tasks; :meth:`drain` waits for them.
        """
        assert self._client is not None, "open() the dispatcher first"
        outcomes, self._outcomes = self._outcomes, []
        released, self._released = self._released, []
        try:
            stats, claims, next_due = await self._locked(
                self._db_round, outcomes, released, self._room(), dict(self._claimed)
            )
        except BaseException:
            # Keep them for the next round; if the process dies instead, the claims lapse and the
            # deliveries are sent again.
            self._outcomes[:0] = outcomes
            self._released[:0] = released
            raise
        if self._heartbeat is not None:
            self._heartbeat.drop([o.delivery_id for o in outcomes])
            self._heartbeat.drop(released)
            self._heartbeat.hold(claim.delivery_id for claim in claims)
        # A claim must start sending while a whole attempt still fits in its lease (with a lease
        # shorter than that, as tests use, within the first half of it).
        fits = self.lease_s - self.settings.webhook_timeout_s - LEASE_MARGIN_S / 2
        send_by = time.monotonic() + max(fits, self.lease_s / 2)
        bodies: dict[int, str] = {}
        for claim in claims:
            body = bodies.get(claim.event_id)
            if body is None:
                # Serialised once per event per round: every endpoint gets the same bytes, signed apart.
                body = signing.event_body(claim.event_type, claim.occurred_at, claim.data)
                bodies[claim.event_id] = body
            self._claimed[claim.endpoint_id] = self._claimed.get(claim.endpoint_id, 0) + 1
            task = asyncio.create_task(self._attempt(claim, body, send_by))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        self.stats.add(stats)
        return stats, next_due

    async def _locked(self, fn, *args):
        """``fn(*args)`` in a worker thread, one database transaction of this dispatcher at a time."""
        assert self._db_lock is not None
        async with self._db_lock:
            return await asyncio.to_thread(fn, *args)

    async def _write(self, fn):
        """``fn(session)`` in a committed transaction of its own (the heartbeat's renewals)."""

        def run():
            with session_scope(self.settings) as session:
                return fn(session)

        return await self._locked(run)

    def _db_round(
        self, outcomes: list[AttemptOutcome], released: list[int], room: int, claimed: dict[str, int]
    ) -> tuple[DispatchStats, list[ClaimedDelivery], datetime | None]:
        # One short transaction per round: every commit costs a disk sync and, on SQLite, the
        # database-wide write lock.
        stats = DispatchStats()
        claims: list[ClaimedDelivery] = []
        next_due = None
        with session_scope(self.settings) as session:
            if outcomes:
                result = outbox.record_attempts(session=session, outcomes=outcomes, settings=self.settings)
                stats.succeeded, stats.retried, stats.failed = result.succeeded, result.retried, result.failed
                stats.disabled = len(result.disabled)
            if released:
                outbox.release_claims(session=session, delivery_ids=released, worker_id=self.worker_id)
            fanned = outbox.fan_out(session=session)
            stats.events, stats.deliveries_created = fanned.events, fanned.deliveries
            if room > 0 and not self._stopping:
                claims = outbox.claim_due(
                    session=session,
                    worker_id=self.worker_id,
                    lease_s=self.lease_s,
                    limit=room,
                    per_endpoint_limit=self.per_endpoint,
                    in_flight=claimed,
                )
            if len(claims) < room:
                next_due = outbox.next_due_at(session=session)
        stats.claimed = len(claims)
        if stats.disabled:
            metrics.DELIVERIES.labels("disabled").inc(stats.disabled)
        return stats, claims, next_due

    def _record_only(self) -> None:
        outcomes, self._outcomes = self._outcomes, []
        released, self._released = self._released, []
        with session_scope(self.settings) as session:
            result = outbox.record_attempts(session=session, outcomes=outcomes, settings=self.settings)
            if released:
                outbox.release_claims(session=session, delivery_ids=released, worker_id=self.worker_id)
        self.stats.add(DispatchStats(succeeded=result.succeeded, retried=result.retried, failed=result.failed,
                                     disabled=len(result.disabled)))

    async def drain(self, *, max_rounds: int = 10_000) -> DispatchStats:
        """Run rounds until nothing is due now and nothing is in flight; returns the summed stats.

        Retries due at once (a 0 s schedule step) are sent within the same call; later ones are not
        waited for.
        """
        total = DispatchStats()
        await self.open()
        assert self._wake is not None
        idle_rounds = 0
        for _ in range(max_rounds):
            self._wake.clear()
            stats, next_due = await self.round()
            total.add(stats)
            if self._tasks:
                idle_rounds = 0
                await self._wake.wait()  # set by attempts once part of the claim window is free
                continue
            if self._outcomes or self._released or stats.claimed:
                continue
            if next_due is None or next_due > utcnow() or idle_rounds >= MAX_IDLE_ROUNDS:
                break
            # Due now but not claimable here (another worker holds the event or the delivery).
            idle_rounds += 1
            await asyncio.sleep(MIN_IDLE_WAIT_S / 4)
        return total

    # ------------------------------------------------------------ one attempt
    async def _attempt(self, claim: ClaimedDelivery, body: str, send_by: float) -> None:
        sem = self._semaphores.get(claim.endpoint_id)
        if sem is None:
            sem = self._semaphores[claim.endpoint_id] = asyncio.Semaphore(self.per_endpoint)
        outcome: AttemptOutcome | None = None
        try:
            # Claims never exceed an endpoint's limit, so only the global slots can make this wait.
            async with sem, self._slots:
                if time.monotonic() <= send_by:
                    outcome = await self.send(claim, body)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # never lose the claim's outcome to an unexpected error
            log.exception("webhook attempt crashed", extra={"delivery_id": claim.delivery_id})
            outcome = AttemptOutcome(
                delivery_id=claim.delivery_id, endpoint_id=claim.endpoint_id, worker_id=claim.worker_id,
                attempted_at=utcnow(), latency_ms=0.0, error=f"internal error: {type(exc).__name__}",
            )
        finally:
            left = self._claimed.get(claim.endpoint_id, 1) - 1
            if left > 0:
                self._claimed[claim.endpoint_id] = left
            else:
                self._claimed.pop(claim.endpoint_id, None)
                self._semaphores.pop(claim.endpoint_id, None)
        if outcome is None:
            self._released.append(claim.delivery_id)
        else:
            self._outcomes.append(outcome)
            metrics.DELIVERIES.labels("succeeded" if outcome.succeeded else "failed").inc()
            metrics.DELIVERY_LATENCY.observe(outcome.latency_ms / 1000)
        # Rounds cost a transaction each; start one when part of the claim window is free, not
        # after every attempt.
        if self._wake is not None and (self._room() >= self._round_threshold or not self._claimed):
            self._wake.set()

    async def send(self, claim: ClaimedDelivery, body: str) -> AttemptOutcome:
        """POST one signed attempt and describe what happened (never raises for network errors).

        Fresh ``webhook-timestamp`` and signatures on every attempt, the same ``webhook-id``; the whole
        attempt (connect, send, read at most 4 KiB of the answer) is bounded by ``webhook_timeout_s``.
        """
        assert self._client is not None
        attempted_at = utcnow()
        headers = signing.delivery_headers(claim.secrets, claim.msg_id, body)
        outcome = AttemptOutcome(
            delivery_id=claim.delivery_id, endpoint_id=claim.endpoint_id, worker_id=claim.worker_id,
            attempted_at=attempted_at, latency_ms=0.0,
        )
        started = time.perf_counter()
        try:
            async with asyncio.timeout(self.settings.webhook_timeout_s):
                content = body.encode()
                async with self._client.stream("POST", claim.url, content=content, headers=headers) as resp:
                    outcome.status_code = resp.status_code
                    outcome.location = resp.headers.get("location")
                    outcome.retry_after_s = parse_retry_after(resp.headers.get("retry-after"))
                    outcome.response_excerpt = await _read_excerpt(resp)
        except TimeoutError:
            outcome.status_code = None
            outcome.error = f"timed out after {self.settings.webhook_timeout_s:g} s"
        except BlockedAddressError as exc:
            outcome.error = f"refused by the SSRF guard: {exc}"
        except HostResolutionError as exc:
            outcome.error = str(exc)
        except httpx.TimeoutException as exc:
            outcome.error = f"timed out ({type(exc).__name__})"
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            outcome.error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        except OSError as exc:
            outcome.error = f"{type(exc).__name__}: {exc}"
        outcome.latency_ms = (time.perf_counter() - started) * 1000
        if outcome.error is not None:
            # An answer that arrived before a read error still counts as no answer.
            outcome.status_code = None
        log.debug(
            "webhook attempt %s -> %s", claim.url, outcome.status_code or outcome.error,
            extra={"delivery_id": claim.delivery_id, "webhook_id": claim.endpoint_id},
        )
        return outcome


async def _read_excerpt(resp: httpx.Response) -> str:
    chunks: list[bytes] = []
    size = 0
    async for chunk in resp.aiter_raw():
        chunks.append(chunk)
        size += len(chunk)
        if size >= RESPONSE_READ_BYTES:
            break
    return b"".join(chunks)[:RESPONSE_READ_BYTES].decode("utf-8", "replace")


_active: set[Dispatcher] = set()


def running_dispatcher() -> Dispatcher | None:
    """A dispatcher started in this process, if any (the scheduled job wakes it instead of competing)."""
    return next(iter(_active), None)


async def run_once(settings: Settings, **dispatcher_kwargs) -> DispatchStats:
    """Fan out, claim and send everything due now, retries due at once included; returns the stats.

    The scheduled job and tests call this; a long-running service uses :class:`Dispatcher` instead.
    """
    async with Dispatcher(settings, **dispatcher_kwargs) as dispatcher:
        return await dispatcher.drain()
