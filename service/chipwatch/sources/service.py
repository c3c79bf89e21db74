"""Sources and items: refreshing a source, storing its items once, linking mentions, and the queries
the API and CLI need.

:func:`refresh_source` is the one code path for a feed check, used by the scheduler
(:func:`chipwatch.sources.jobs.check_due`), ``POST /v1/sources/{id}/check`` and ``chipwatch check``::

    read the source (short read transaction)
      -> fetch (no transaction open during HTTP)
      -> parse (pure, in a worker thread)
      -> one write transaction: store items (dedup), link mentions, evaluate signals, record health

Because no transaction may span the HTTP exchange, :func:`refresh_source` opens its own short
transactions; every other function here takes a keyword-only ``session`` and never commits.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import importlib
import logging
import random
import re
import sys
import threading
import unicodedata
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit

import httpx
from sqlalchemy import delete, literal, or_, select, text, union_all
from sqlmodel import Session

from chipwatch import netguard
from chipwatch.config import Settings, get_settings
from chipwatch.db import is_postgres, session_scope
from chipwatch.knowledge.models import Benchmark, Chip, Model, Vendor
from chipwatch.metrics import CHECKS, FETCH_LATENCY, ITEMS_STORED
from chipwatch.sources.fetch import FetchResult, fetch_feed
from chipwatch.sources.models import FEED_KINDS, Item, ItemMention, Source
from chipwatch.sources.parse import (
    FeedParseError,
    ParsedEntry,
    ParsedFeed,
    build_opml,
    content_hash,
    normalise_link,
    parse_feed,
    parse_opml,
)
from chipwatch.sources.schedule import adaptive_interval_s, next_check_at

logger = logging.getLogger(__name__)
T = TypeVar("T")

# A stored URL is rewritten only after this many consecutive checks ended behind the same permanent
# redirect (301/308): one 301 can be a misconfiguration that is reverted the next day, and RFC 9110
# 15.4.2 only says a client "ought to" update its references. 302/307 never count.
PERMANENT_REDIRECT_CHECKS = 3

# Entries whose text is shorter than this are hashed together with their title: a short teaser such
# as "Read more..." is shared by many different posts. Longer bodies are hashed without the title, so
# a story re-published with an edited headline and slug still matches the stored item.
SHORT_BODY_CHARS = 80

# Column widths of the items and sources tables (PostgreSQL enforces them; SQLite does not).
GUID_MAX, LINK_MAX, AUTHOR_MAX, ETAG_MAX, LAST_MODIFIED_MAX, URL_MAX = 1000, 2000, 500, 512, 128, 2000
ERROR_MAX = 2000
IN_CHUNK = 500  # bound on IN (...) list sizes

_rng = random.Random()
_SLUG_STRIP = re.compile(r"[^a-z0-9]+")


class SourceNotFound(LookupError):
    """No source with that id."""

    def __init__(self, source_id: str) -> None:
        super().__init__(f"no source with id {source_id!r}")
        self.source_id = source_id


class NotAFeed(ValueError):
    """The source is not a polled feed (a seed article, report or page, or it has no URL)."""


class SourceConflict(ValueError):
    """A source with that id or URL already exists."""


class InvalidSourceURL(ValueError):
    """The URL is malformed, not http(s), or (unless private networks are allowed) internal."""


# --------------------------------------------------------------------------------------------------
# Outcomes and snapshots


@dataclass(slots=True)
class CheckOutcome:
    """What one check of one source did.

    ``status`` is ``ok`` (fetched and stored), ``not_modified`` (304) or ``error`` (``error`` says
    why: network, HTTP status, limits, malformed feed, or storage). ``http_status`` is the last HTTP
    status seen, if any. ``new_items``/``updated_items`` count stored rows added / changed;
    ``next_check_at`` is when the source is due again (aware UTC).
    """

    source_id: str
    status: str
    http_status: int | None = None
    new_items: int = 0
    updated_items: int = 0
    error: str | None = None
    next_check_at: datetime | None = None
    new_item_ids: list[int] = field(default_factory=list, repr=False)
    updated_item_ids: list[int] = field(default_factory=list, repr=False)


@dataclass(frozen=True, slots=True)
class SourceSnapshot:
    """The fields of a source a check needs, read in a short transaction before the fetch."""

    id: str
    name: str
    url: str
    kind: str
    etag: str | None
    last_modified: str | None
    last_body_sha256: str | None

    @classmethod
    def of(cls, source: Source) -> SourceSnapshot:
        """Snapshot of a source row; raises :class:`NotAFeed` for a source that is not polled."""
        if source.kind not in FEED_KINDS or not source.url:
            raise NotAFeed(
                f"source {source.id!r} is not a polled feed (kind {source.kind!r}"
                f"{', no URL' if not source.url else ''}); only rss, atom, rdf, json or unknown are checked"
            )
        return cls(
            id=source.id,
            name=source.name,
            url=source.url,
            kind=source.kind,
            etag=source.etag,
            last_modified=source.last_modified,
            last_body_sha256=source.last_body_sha256,
        )


def is_feed(source: Source) -> bool:
    """True when ``source`` is polled: a feed kind (rss, atom, rdf, json, unknown) with a URL."""
    return source.kind in FEED_KINDS and bool(source.url)


def load_snapshot(*, session: Session, source_id: str) -> SourceSnapshot:
    """The check snapshot of ``source_id``; raises :class:`SourceNotFound` or :class:`NotAFeed`."""
    source = session.get(Source, source_id)
    if source is None:
        raise SourceNotFound(source_id)
    return SourceSnapshot.of(source)


# --------------------------------------------------------------------------------------------------
# Write transactions


class Writer(Protocol):
    """Runs ``fn(session)`` in a write transaction, off the event loop, and returns its result.

    ``source_id`` names the source row ``fn`` will update, so a batching writer can load the rows of
    a whole batch in one query; ``urgent`` asks a batching writer not to wait for more work first.
    """

    def run(
        self, fn: Callable[[Session], T], *, source_id: str | None = None, urgent: bool = False
    ) -> Awaitable[T]: ...


class ThreadWriter:
    """One write transaction per call, in a worker thread (the database driver blocks)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    async def run(
        self, fn: Callable[[Session], T], *, source_id: str | None = None, urgent: bool = False
    ) -> T:
        """``fn(session)`` in its own committed transaction; exceptions roll back and propagate."""
        return await asyncio.to_thread(self._run, fn)

    def _run(self, fn: Callable[[Session], T]) -> T:
        with session_scope(self.settings) as session:
            return fn(session)


class BatchWriter:
    """Runs write functions one after another in one thread, committing those queued together at once.

    Used when many checks finish at about the same time (a scheduled pass, ``chipwatch check``).
    Why: SQLite has a single writer, and threads queueing on its lock wait in the busy handler's
    coarse sleeps, while one writer thread never waits; and one commit (and one query loading the
    batch's source rows) per batch instead of per check saves most of the rest ("group commit").

    The functions of a batch share one transaction. If any of them raises, the transaction is rolled
    back and each function is run again in a transaction of its own, so one failing check cannot
    lose the others' results and its caller gets its exception. Functions must therefore depend only
    on the database and their own inputs (``record_check`` does). ``max_batch`` bounds how many
    checks share one transaction, and so how long its locks are held.

    A batch is started ``linger_s`` seconds after the first function of an idle writer arrives (or
    at once for an ``urgent`` function or a full batch), so that results finishing close together
    share it; functions queued while a batch commits form the next one straight away. Larger batches
    also mean fewer hand-overs of the interpreter lock between this thread and the event loop, which
    under load cost more than the statements themselves.

    Use as ``async with BatchWriter(settings) as writer:``.
    """

    def __init__(self, settings: Settings, *, max_batch: int = 128, linger_s: float = 0.25) -> None:
        self.settings = settings
        self.max_batch = max(1, max_batch)
        self.linger_s = max(0.0, linger_s)
        self._pending: list[tuple[Callable[[Session], Any], str | None, asyncio.Future]] = []
        self._wake = asyncio.Event()
        self._flush_now = asyncio.Event()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="chipwatch-writer")
        self._pump: asyncio.Task | None = None
        self.batches = 0

    async def __aenter__(self) -> BatchWriter:
        self._pump = asyncio.create_task(self._run_pump())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._pump is not None:
            self._pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._pump
        for _fn, _key, future in self._pending:  # only left when the pass itself was cancelled
            if not future.done():
                future.cancel()
        self._executor.shutdown(wait=True)

    async def run(
        self, fn: Callable[[Session], T], *, source_id: str | None = None, urgent: bool = False
    ) -> T:
        """Queue ``fn(session)`` and return its result once its batch has committed."""
        if self._pump is None:
            raise RuntimeError("BatchWriter is used outside its 'async with' block")
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        self._pending.append((fn, source_id, future))
        self._wake.set()
        if urgent or len(self._pending) >= self.max_batch:
            self._flush_now.set()
        return await future

    async def _run_pump(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await self._wake.wait()
            if self.linger_s and not self._flush_now.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._flush_now.wait(), self.linger_s)
            self._wake.clear()
            self._flush_now.clear()
            while self._pending:
                batch, self._pending = self._pending[: self.max_batch], self._pending[self.max_batch :]
                work = [(fn, key) for fn, key, _future in batch]
                results = await loop.run_in_executor(self._executor, self._commit, work)
                self.batches += 1
                for (_fn, _key, future), (ok, value) in zip(batch, results, strict=True):
                    if future.done():
                        continue
                    if ok:
                        future.set_result(value)
                    else:
                        future.set_exception(value)

    def _commit(self, work: list[tuple[Callable[[Session], Any], str | None]]) -> list[tuple[bool, Any]]:
        try:
            with session_scope(self.settings) as session:
                keys = [key for _fn, key in work if key is not None]
                loaded: list[Source] = []
                if keys:
                    # Loads the rows into the session (kept referenced: the identity map is weak), so
                    # each function's session.get() is free; on PostgreSQL it also locks them, in id
                    # order so two writers cannot deadlock.
                    stmt = select(Source).where(Source.id.in_(keys)).order_by(Source.id)
                    if is_postgres(session.get_bind().engine):
                        stmt = stmt.with_for_update()
                    loaded = list(session.scalars(stmt))
                results = [(True, fn(session)) for fn, _key in work]
                del loaded
                return results
        except Exception:
            if len(work) > 1:
                logger.info("a batch of %d check results failed; storing them one by one", len(work))
        results: list[tuple[bool, Any]] = []
        for fn, _key in work:
            try:
                with session_scope(self.settings) as session:
                    results.append((True, fn(session)))
            except Exception as exc:
                results.append((False, exc))
        return results


class FetchSlots:
    """Concurrency limits for fetches: ``fetch_concurrency`` overall and ``fetch_per_host_limit`` per host.

    The host slot is taken first, so a fetch waiting for a busy host does not hold one of the overall
    slots that fetches to other hosts could use.
    """

    def __init__(self, settings: Settings) -> None:
        self._overall = asyncio.Semaphore(max(1, settings.fetch_concurrency))
        self._per_host = max(1, settings.fetch_per_host_limit)
        self._hosts: dict[str, asyncio.Semaphore] = {}

    @asynccontextmanager
    async def hold(self, url: str) -> AsyncIterator[None]:
        """Hold one slot for a fetch of ``url`` for the duration of the block."""
        host = (urlsplit(url).hostname or "").lower()
        semaphore = self._hosts.get(host)
        if semaphore is None:
            semaphore = self._hosts[host] = asyncio.Semaphore(self._per_host)
        async with semaphore, self._overall:
            yield


# --------------------------------------------------------------------------------------------------
# The refresh


async def refresh_source(
    source_id: str,
    *,
    settings: Settings | None = None,
    client: httpx.AsyncClient,
    snapshot: SourceSnapshot | None = None,
    writer: Writer | None = None,
    slots: FetchSlots | None = None,
) -> CheckOutcome:
    """Check one source now: fetch, parse, store new and changed items, and record its health.

    ``client`` is the shared client from :func:`chipwatch.sources.fetch.make_client`. ``snapshot``
    skips the initial read when the caller (the scheduler's claim) already has the row; ``writer``
    decides how the final write transaction runs (default: its own transaction in a worker thread);
    ``slots`` limits concurrent fetches overall and per host.

    Returns a :class:`CheckOutcome`. Raises :class:`SourceNotFound` or :class:`NotAFeed` before any
    fetch; after that it never raises: network failures, HTTP errors, limits, malformed or hostile
    feeds and storage failures all end as ``status="error"`` with a readable ``error``, recorded in
    the source's health, with its earlier items kept.
    """
    settings = settings or get_settings()
    writer = writer or ThreadWriter(settings)
    if snapshot is None:
        snapshot = await asyncio.to_thread(_read_snapshot, settings, source_id)

    if slots is not None:
        async with slots.hold(snapshot.url):
            fetched = await fetch_feed(
                client,
                snapshot.url,
                etag=snapshot.etag,
                last_modified=snapshot.last_modified,
                settings=settings,
            )
    else:
        fetched = await fetch_feed(
            client, snapshot.url, etag=snapshot.etag, last_modified=snapshot.last_modified, settings=settings
        )

    parsed, parse_error, digest = None, None, None
    if fetched.status == "ok" and fetched.body is not None:
        digest = hashlib.sha256(fetched.body).hexdigest()
        if digest != snapshot.last_body_sha256:
            # Parsing is CPU work on untrusted bytes: off the event loop, outside any transaction.
            parsed, parse_error = await asyncio.to_thread(_parse, fetched)
        fetched.body = None  # the bytes are no longer needed; do not keep them alive while waiting

    def record(session: Session) -> CheckOutcome:
        return record_check(
            session=session,
            snapshot=snapshot,
            fetched=fetched,
            parsed=parsed,
            parse_error=parse_error,
            body_sha256=digest,
            settings=settings,
        )

    FETCH_LATENCY.observe(fetched.elapsed_s)
    try:
        outcome = await writer.run(record, source_id=snapshot.id)
    except Exception as exc:  # storage must not take the caller down; the failure goes into health
        logger.exception(
            "storing the check of source %s failed", snapshot.id, extra={"source_id": snapshot.id}
        )
        message = f"could not store the check: {type(exc).__name__}: {exc}"
        outcome = await _record_failure_safely(writer, snapshot, fetched.http_status, message, settings)
    CHECKS.labels(outcome=outcome.status).inc()
    ITEMS_STORED.labels(change="new").inc(len(outcome.new_item_ids))
    ITEMS_STORED.labels(change="updated").inc(len(outcome.updated_item_ids))
    return outcome


def _read_snapshot(settings: Settings, source_id: str) -> SourceSnapshot:
    with session_scope(settings, write=False) as session:
        return load_snapshot(session=session, source_id=source_id)


def _parse(fetched: FetchResult) -> tuple[ParsedFeed | None, str | None]:
    """Parse a fetched body: ``(feed, None)`` or ``(None, readable error)``; never raises."""
    try:
        return (
            parse_feed(
                fetched.body or b"", url=fetched.final_url, headers=fetched.headers, now=datetime.now(UTC)
            ),
            None,
        )
    except FeedParseError as exc:
        return None, str(exc)
    except Exception as exc:  # the parser is run on hostile input; any crash is that feed's error
        logger.exception("parser crashed on %s", fetched.final_url)
        return None, f"parser crashed: {type(exc).__name__}: {exc}"


async def _record_failure_safely(
    writer: Writer, snapshot: SourceSnapshot, http_status: int | None, message: str, settings: Settings
) -> CheckOutcome:
    failed = FetchResult(
        status="error",
        url=snapshot.url,
        final_url=snapshot.url,
        http_status=http_status,
        etag=snapshot.etag,
        last_modified=snapshot.last_modified,
        error=message,
    )

    def record(session: Session) -> CheckOutcome:
        return record_check(
            session=session,
            snapshot=snapshot,
            fetched=failed,
            parsed=None,
            parse_error=None,
            body_sha256=None,
            settings=settings,
        )

    try:
        return await writer.run(record)
    except Exception:
        logger.exception("recording the failure of source %s failed too", snapshot.id)
        return CheckOutcome(source_id=snapshot.id, status="error", http_status=http_status, error=message)


def _fits(value: str | None, width: int) -> str | None:
    """``value`` if it fits its column, else None: a cut-off validator or URL would be wrong, not short."""
    return value if value is not None and len(value) <= width else None


def record_check(
    *,
    session: Session,
    snapshot: SourceSnapshot,
    fetched: FetchResult,
    parsed: ParsedFeed | None,
    parse_error: str | None,
    body_sha256: str | None,
    settings: Settings,
    now: datetime | None = None,
) -> CheckOutcome:
    """Apply one check's result in ``session``: items, mentions, signal evaluation, health, schedule.

    ``parsed`` is None for a 304, an error, a parse failure (``parse_error`` says why) or a body
    identical to the last one parsed (``body_sha256`` equal to the stored digest). Health fields are
    set on every call (flushed by the caller's commit); a ``source.health_changed`` event is emitted
    when the source goes from healthy (no consecutive failures) to failing or back. Returns the
    :class:`CheckOutcome`.
    """
    now = now or datetime.now(UTC)
    source = session.get(Source, snapshot.id, with_for_update=is_postgres(session.get_bind().engine) or None)
    if source is None:  # deleted while it was being fetched
        return CheckOutcome(
            source_id=snapshot.id, status="error", error="source was deleted during the check"
        )
    was_healthy = source.consecutive_failures == 0
    source.last_checked_at = now
    source.last_http_status = fetched.http_status
    source.claimed_until = None
    source.claimed_by = None

    error = fetched.error if fetched.status == "error" else None
    if error is None and parse_error is not None:
        error = f"malformed feed: {parse_error}"
    outcome = CheckOutcome(source_id=source.id, status="error" if error else fetched.status)
    outcome.http_status = fetched.http_status

    new_count_before = source.items_count
    if error is None:
        # Validators only from answers that were used: storing those of a malformed body would turn the
        # next check into a 304 and hide that the feed is still broken.
        source.etag = _fits(fetched.etag, ETAG_MAX)
        source.last_modified = _fits(fetched.last_modified, LAST_MODIFIED_MAX)
        if parsed is not None:
            stored = store_items(session=session, source=source, feed=parsed, now=now)
            source.kind = parsed.kind
            source.last_body_sha256 = body_sha256
            outcome.new_item_ids = [i.id for i in stored.new if i.id is not None]
            outcome.updated_item_ids = [i.id for i in stored.updated if i.id is not None]
            if stored.new or stored.updated:
                link_mentions(session=session, items=[*stored.new, *stored.updated])
                evaluate_signals(session=session, item_ids=[*outcome.new_item_ids, *outcome.updated_item_ids])
            if parsed.bozo:
                # Common in the wild and already handled (entries recovered): worth a note, not an alarm.
                logger.info(
                    "source %s: feed is not well-formed; %d entries recovered (%s)",
                    source.id,
                    len(parsed.entries),
                    "; ".join(parsed.warnings)[:300],
                    extra={"source_id": source.id},
                )
        source.last_status = fetched.status
        source.last_success_at = now
        source.last_error = None
        source.consecutive_failures = 0
    else:
        source.last_status = "error"
        source.last_error = error[:ERROR_MAX]
        source.consecutive_failures += 1
        logger.info(
            "source %s check failed (%d in a row): %s",
            source.id,
            source.consecutive_failures,
            error,
            extra={"source_id": source.id},
        )
    if fetched.status != "error":
        _follow_permanent_redirect(session, source, fetched.permanent_redirect_to)

    outcome.new_items = len(outcome.new_item_ids)
    outcome.updated_items = len(outcome.updated_item_ids)
    interval = check_interval_s(
        session=session,
        source=source,
        settings=settings,
        items_changed=source.items_count != new_count_before,
    )
    source.next_check_at = next_check_at(
        now,
        interval_s=interval,
        max_age_s=fetched.max_age_s,
        retry_after_s=fetched.retry_after_s,
        failures=source.consecutive_failures,
        rng=_rng,
        max_s=settings.max_check_interval_s,
    )
    outcome.next_check_at = source.next_check_at
    outcome.error = error
    healthy = source.consecutive_failures == 0
    if healthy != was_healthy:
        _emit_health_changed(session, source)
    # No final flush: the source's UPDATE goes out with the commit, where a batch of checks is sent
    # as one executemany.
    return outcome


def _follow_permanent_redirect(session: Session, source: Source, target: str | None) -> None:
    """Count consecutive checks behind the same 301/308 chain; rewrite the URL after enough of them."""
    if not target or target == source.url:
        source.permanent_redirects = 0
        source.redirect_target = None
        return
    if source.redirect_target == target:
        source.permanent_redirects += 1
    else:
        source.redirect_target = _fits(target, URL_MAX)
        source.permanent_redirects = 1
    if source.permanent_redirects < PERMANENT_REDIRECT_CHECKS or source.redirect_target is None:
        return
    taken = session.scalar(select(Source.id).where(Source.url == target, Source.id != source.id).limit(1))
    if taken is not None:
        logger.warning(
            "source %s moved permanently to %s, which source %s already watches; URL kept",
            source.id,
            target,
            taken,
            extra={"source_id": source.id},
        )
        return
    logger.info(
        "source %s moved permanently (%d checks in a row): %s -> %s",
        source.id,
        source.permanent_redirects,
        source.url,
        target,
        extra={"source_id": source.id},
    )
    source.url = target
    source.permanent_redirects = 0
    source.redirect_target = None


def check_interval_s(*, session: Session, source: Source, settings: Settings, items_changed: bool) -> int:
    """Seconds between healthy checks of ``source``.

    A fixed ``check_interval_s`` wins. Otherwise the adaptive interval of
    :func:`chipwatch.sources.schedule.adaptive_interval_s` over the source's newest items (publication
    time, or first-seen time for undated items), clamped to ``min_check_interval_s`` ..
    ``max_check_interval_s``; a source without items gets ``default_check_interval_s``. It is
    recomputed only when items were added (else the stored ``effective_interval_s`` stands) and is
    saved in ``effective_interval_s``.
    """
    if source.check_interval_s:
        interval = max(1, int(source.check_interval_s))
    elif source.items_count == 0:
        interval = min(
            max(settings.default_check_interval_s, settings.min_check_interval_s),
            settings.max_check_interval_s,
        )
    elif items_changed or source.effective_interval_s is None:
        times = list(
            session.scalars(
                select(Item.sort_at)
                .where(Item.source_id == source.id)
                .order_by(Item.sort_at.desc())
                .limit(20)
            )
        )
        interval = adaptive_interval_s(
            times,
            default_s=settings.default_check_interval_s,
            min_s=settings.min_check_interval_s,
            max_s=settings.max_check_interval_s,
        )
    else:
        interval = source.effective_interval_s
    source.effective_interval_s = interval
    return interval


def health_event_data(source: Source) -> dict[str, Any]:
    """The ``data`` of a ``source.health_changed`` event (schema/events/source.health_changed.schema.json)."""
    return {
        "source_id": source.id,
        "name": source.name,
        "healthy": source.consecutive_failures == 0,
        "last_error": source.last_error,
        "consecutive_failures": source.consecutive_failures,
        "last_checked_at": source.last_checked_at.isoformat() if source.last_checked_at else None,
    }


def _emit_health_changed(session: Session, source: Source) -> None:
    from chipwatch.events import emit

    emit(session, "source.health_changed", health_event_data(source), source_id=source.id)


EVALUATION_MODULE = "chipwatch.signals.evaluation"
_evaluation_missing = False


def evaluate_signals(*, session: Session, item_ids: Sequence[int]) -> bool:
    """Hand new and changed items to the signal evaluator in the caller's transaction.

    Calls ``chipwatch.signals.evaluation.evaluate_items(session=..., item_ids=[...])`` and returns True;
    returns False (and does nothing) when there are no ids or this build has no such function.
    Errors raised by the evaluator propagate, so items and their evidence commit or roll back together.
    """
    global _evaluation_missing
    if not item_ids:
        return False
    module = sys.modules.get(EVALUATION_MODULE)
    if module is None:
        if _evaluation_missing:
            # A failed import is not cached by Python and costs a file-system search every time.
            return False
        try:
            module = importlib.import_module(EVALUATION_MODULE)
        except ModuleNotFoundError as exc:
            if exc.name != EVALUATION_MODULE:
                raise
            _evaluation_missing = True
            return False
    evaluate = getattr(module, "evaluate_items", None)
    if evaluate is None:
        return False
    evaluate(session=session, item_ids=list(item_ids))
    return True


# --------------------------------------------------------------------------------------------------
# Storing items


@dataclass(slots=True)
class StoreResult:
    """Rows added and rows changed by :func:`store_items`; ``unchanged`` counts entries already stored
    as they are; ``duplicates`` counts entries repeated verbatim within the same document."""

    new: list[Item] = field(default_factory=list)
    updated: list[Item] = field(default_factory=list)
    unchanged: int = 0
    duplicates: int = 0


@dataclass(slots=True)
class _Candidate:
    entry: ParsedEntry
    guid: str | None
    link: str | None
    link_norm: str | None
    content_hash: str
    title: str
    summary: str | None
    content: str | None
    author: str | None
    use_guid: bool = True
    use_link: bool = True
    match: Item | None = None


def _text(value: str | None) -> str | None:
    # PostgreSQL text cannot hold NUL characters; feeds occasionally carry them.
    return value.replace("\x00", "") if value else value


def _key(value: str | None, width: int) -> str | None:
    """A dedup key that fits its column: a longer one is replaced by its digest (still unique)."""
    value = _text(value)
    if not value:
        return None
    if len(value) <= width:
        return value
    return "sha256:" + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


def item_content_hash(entry: ParsedEntry) -> str:
    """The third dedup key: a digest of the entry's body and publication date.

    The title is left out when the body is long enough to identify the story on its own
    (``SHORT_BODY_CHARS``), so a re-published story with an edited headline, slug and guid still
    matches; short bodies include the title. An estimated (missing) date hashes as empty.
    """
    body = entry.content or entry.summary or ""
    date = entry.published_at.isoformat() if entry.published_at and not entry.published_is_estimated else ""
    title = entry.title if len(body.strip()) < SHORT_BODY_CHARS else ""
    return content_hash(f"{date}\n{title}", body)


def _candidates(entries: Iterable[ParsedEntry]) -> tuple[list[_Candidate], int]:
    seen: set[tuple[str | None, str | None, str]] = set()
    out: list[_Candidate] = []
    duplicates = 0
    for entry in entries:
        link = _text(entry.link)
        if link is not None and len(link) > LINK_MAX:
            link = None  # a cut-off URL would point nowhere; link_norm (a digest then) still dedups
        norm = _key(normalise_link(entry.link), LINK_MAX) if entry.link else None
        candidate = _Candidate(
            entry=entry,
            guid=_key(entry.guid, GUID_MAX),
            link=link,
            link_norm=norm,
            content_hash=item_content_hash(entry),
            title=_text(entry.title) or "",
            summary=_text(entry.summary) or None,
            content=_text(entry.content) or None,
            author=(_text(entry.author) or "")[:AUTHOR_MAX] or None,
        )
        identity = (candidate.guid, candidate.link_norm, candidate.content_hash)
        if identity in seen:
            duplicates += 1
            continue
        seen.add(identity)
        out.append(candidate)
    return out, duplicates


def _existing(session: Session, source_id: str, column, values: set[str]) -> list[Item]:
    rows: list[Item] = []
    ordered = sorted(values)
    for start in range(0, len(ordered), IN_CHUNK):
        chunk = ordered[start : start + IN_CHUNK]
        rows.extend(session.scalars(select(Item).where(Item.source_id == source_id, column.in_(chunk))))
    return rows


def store_items(*, session: Session, source: Source, feed: ParsedFeed, now: datetime) -> StoreResult:
    """Store ``feed``'s entries for ``source``: each story once, changed stories updated in place.

    Each entry is matched to a stored item of the same source by guid, else by normalised link, else
    by :func:`item_content_hash`; a stored item is matched by at most one entry per document, guid
    matches first. A guid shared by several entries of the document (or by several stored items)
    is not trusted and the next key is used, with a warning; the same holds for links, and a link that
    is just the site's home page is never a key. A match whose fields differ is updated (a story
    re-published under a new slug keeps its row, ``first_seen_at`` and id); a stored date is kept when
    the entry has none. Unmatched entries become new items (``first_seen_at = now``; an entry without
    a usable date gets ``published_at = None`` and ``published_is_estimated = True``). Fetching the
    same document again adds and changes nothing. Flushes; never commits.
    """
    candidates, duplicates = _candidates(feed.entries)
    result = StoreResult(duplicates=duplicates)
    if not candidates:
        return result

    guid_counts = Counter(c.guid for c in candidates if c.guid)
    link_counts = Counter(c.link_norm for c in candidates if c.link_norm)
    home = normalise_link(feed.link) if feed.link else None
    for guid, count in guid_counts.items():
        if count > 1:
            logger.warning(
                "source %s: guid %r is shared by %d entries; matching them by link or content instead",
                source.id,
                guid[:200],
                count,
                extra={"source_id": source.id},
            )
    for c in candidates:
        c.use_guid = bool(c.guid) and guid_counts[c.guid] == 1
        c.use_link = (
            bool(c.link_norm)
            and link_counts[c.link_norm] == 1
            and c.link_norm != home
            and urlsplit(c.link_norm).path not in ("", "/")
        )

    by_guid: dict[str, list[Item]] = defaultdict(list)
    by_link: dict[str, list[Item]] = defaultdict(list)
    by_hash: dict[str, list[Item]] = defaultdict(list)
    stored: dict[int, Item] = {}
    for rows in (
        _existing(session, source.id, Item.guid, {c.guid for c in candidates if c.use_guid}),
        _existing(session, source.id, Item.link_norm, {c.link_norm for c in candidates if c.use_link}),
        _existing(session, source.id, Item.content_hash, {c.content_hash for c in candidates}),
    ):
        for row in rows:
            stored[row.id] = row
    for row in sorted(stored.values(), key=lambda r: r.id):
        if row.guid:
            by_guid[row.guid].append(row)
        if row.link_norm:
            by_link[row.link_norm].append(row)
        by_hash[row.content_hash].append(row)

    claimed: set[int] = set()

    def take(rows: list[Item], *, unique: bool) -> Item | None:
        free = [r for r in rows if r.id not in claimed]
        if not free or (unique and len(rows) > 1):
            return None
        claimed.add(free[0].id)
        return free[0]

    for c in candidates:  # guids first, so a link or content match never steals a guid's item
        if c.use_guid:
            c.match = take(by_guid.get(c.guid, []), unique=True)
    for c in candidates:
        if c.match is None and c.use_link:
            c.match = take(by_link.get(c.link_norm, []), unique=True)
    for c in candidates:
        if c.match is None:
            c.match = take(by_hash.get(c.content_hash, []), unique=False)

    for c in candidates:
        if c.match is None:
            item = Item(
                source_id=source.id,
                guid=c.guid,
                link=c.link,
                link_norm=c.link_norm,
                content_hash=c.content_hash,
                title=c.title,
                summary=c.summary,
                content=c.content,
                author=c.author,
                published_at=c.entry.published_at,
                published_is_estimated=c.entry.published_is_estimated,
                first_seen_at=now,
            )
            session.add(item)
            result.new.append(item)
        elif _update(c, now):
            result.updated.append(c.match)
        else:
            result.unchanged += 1
    source.items_count += len(result.new)
    session.flush()
    return result


def _update(c: _Candidate, now: datetime) -> bool:
    """Copy a matched entry's fields onto its stored item; True when anything changed."""
    item = c.match
    assert item is not None
    changes: dict[str, Any] = {
        # A link that differs only in tracking parameters, case or fragment (same normalised form) is
        # left as stored: some feeds rotate such parameters on every fetch.
        "link": c.link if c.link_norm != item.link_norm else item.link,
        "link_norm": c.link_norm,
        "content_hash": c.content_hash,
        "title": c.title,
        "summary": c.summary,
        "content": c.content,
        "author": c.author,
    }
    if c.use_guid or not item.guid:
        changes["guid"] = c.guid if c.guid else item.guid
    if c.entry.published_at is not None:
        changes["published_at"] = c.entry.published_at
        changes["published_is_estimated"] = False
    changed = False
    for name, value in changes.items():
        if getattr(item, name) != value:
            setattr(item, name, value)
            changed = True
    if changed:
        item.updated_at = now
    return changed


# --------------------------------------------------------------------------------------------------
# Mentions


@dataclass(frozen=True, slots=True)
class _MatcherEntry:
    fingerprint: str
    matcher: Any
    kinds: dict[str, str]


_matcher_lock = threading.Lock()
_matcher_cache: _MatcherEntry | None = None
ENTITY_TABLES: tuple[tuple[str, Any], ...] = (
    ("vendor", Vendor),
    ("chip", Chip),
    ("model", Model),
    ("benchmark", Benchmark),
)


def entity_matcher(*, session: Session) -> tuple[Any, dict[str, str]]:
    """``(EntityMatcher over every knowledge-base entity, {entity id: kind})``.

    Kinds are ``vendor``, ``chip``, ``model``, ``benchmark``; an id used by two kinds is one entity
    named by both lists of names (kind from the first table). The compiled matcher is cached keyed on a
    digest of every id, name and alias, so it is rebuilt exactly when the knowledge base's names change.
    """
    from chipwatch.signals.rules import Entity, EntityMatcher

    global _matcher_cache
    rows = [tuple(row) for row in session.execute(_entity_names_query())]
    fingerprint = hashlib.sha256(repr(rows).encode("utf-8", "surrogatepass")).hexdigest()
    with _matcher_lock:
        cached = _matcher_cache
        if cached is not None and cached.fingerprint == fingerprint:
            return cached.matcher, cached.kinds
    names: dict[str, list[str]] = {}
    kinds: dict[str, str] = {}
    for _rank, kind, entity_id, name, aliases in rows:
        kinds.setdefault(entity_id, kind)
        names.setdefault(entity_id, []).extend([name, *(aliases or [])])
    matcher = EntityMatcher([Entity(id=i, names=n) for i, n in sorted(names.items())])
    with _matcher_lock:
        _matcher_cache = _MatcherEntry(fingerprint, matcher, kinds)
    return matcher, kinds


@functools.cache
def _entity_names_query():
    """Every entity's names in one round trip (this runs in every check that stored something),
    ordered so that the digest is stable and the first table listed names an id's kind."""
    parts = [
        select(literal(rank).label("rank"), literal(kind).label("kind"), t.id, t.name, t.aliases)
        for rank, (kind, t) in enumerate(ENTITY_TABLES)
    ]
    return union_all(*parts).order_by(text("rank"), text("id"))


def item_text(item: Item) -> str:
    """The text mentions are looked for in: title, summary and content."""
    return "\n".join(part for part in (item.title, item.summary, item.content) if part)


def link_mentions(*, session: Session, items: Sequence[Item]) -> int:
    """Replace the mention rows of ``items`` (flushed, with ids) with the entities their text names.

    Latin names and aliases match on word boundaries, CJK ones as substrings (see
    :class:`chipwatch.signals.rules.EntityMatcher`). Returns the number of mention rows written.
    """
    ids = [i.id for i in items if i.id is not None]
    if not ids:
        return 0
    matcher, kinds = entity_matcher(session=session)
    for start in range(0, len(ids), IN_CHUNK):
        session.execute(delete(ItemMention).where(ItemMention.item_id.in_(ids[start : start + IN_CHUNK])))
    rows = []
    for item in items:
        for entity_id in sorted(matcher.entities_in(item_text(item))):
            rows.append(
                ItemMention(item_id=item.id, entity_id=entity_id, entity_kind=kinds.get(entity_id, ""))
            )
    session.add_all(rows)
    session.flush()
    return len(rows)


# --------------------------------------------------------------------------------------------------
# Sources: create, import, export


def slugify(text: str, *, max_length: int = 64) -> str:
    """A readable id from ``text``: ASCII lower-case letters and digits joined by ``-`` (may be empty)."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return _SLUG_STRIP.sub("-", ascii_text).strip("-")[:max_length].strip("-")


def _slug_from_url(url: str) -> str:
    host = (urlsplit(url).hostname or "").lower().removeprefix("www.").removeprefix("feeds.")
    return slugify(host.rsplit(".", 1)[0] if host.count(".") >= 1 else host) or "feed"


def check_source_url(url: str, *, settings: Settings) -> str:
    """``url`` stripped, if it may be watched; raises :class:`InvalidSourceURL` saying why not.

    http(s) with a host is always required. Unless ``allow_private_networks``, a host that resolves to
    an internal address is refused (the fetch checks again on every hop); a host that does not resolve
    now is accepted, since DNS can be down and the fetch's own guard applies later.
    """
    url = url.strip()
    if len(url) > URL_MAX:
        raise InvalidSourceURL(f"URL longer than {URL_MAX} characters")
    try:
        netguard.split_url(url)
        if not settings.allow_private_networks:
            try:
                netguard.check_url(url, allow_private=False)
            except netguard.HostResolutionError:
                pass
    except netguard.BlockedAddressError as exc:
        raise InvalidSourceURL(str(exc)) from exc
    return url


def _url_taken(session: Session, url: str) -> str | None:
    """Id of a source already watching ``url`` (compared after :func:`normalise_link`), or None."""
    wanted = normalise_link(url)
    for source_id, existing in session.execute(select(Source.id, Source.url).where(Source.url.is_not(None))):
        if existing == url or normalise_link(existing) == wanted:
            return source_id
    return None


def _free_id(session: Session, base: str) -> str:
    base = base[:58].strip("-") or "feed"
    candidate, n = base, 2
    while session.get(Source, candidate) is not None:
        candidate, n = f"{base}-{n}", n + 1
    return candidate


def create_source(
    *,
    session: Session,
    source_in: Any,
    settings: Settings,
) -> Source:
    """Add a feed source from ``source_in`` (a :class:`~chipwatch.sources.models.SourceCreate`).

    The id is ``source_in.id`` when given (409 on a duplicate: :class:`SourceConflict`), else a slug
    of the name (or of the URL's host for names without Latin letters), made unique with ``-2``,
    ``-3``... Raises :class:`InvalidSourceURL` for a URL that may not be watched and
    :class:`SourceConflict` when another source already watches the same URL. Flushes; never commits.
    """
    url = check_source_url(source_in.url, settings=settings)
    taken = _url_taken(session, url)
    if taken is not None:
        raise SourceConflict(f"source {taken!r} already watches {url}")
    if source_in.id:
        if session.get(Source, source_in.id) is not None:
            raise SourceConflict(f"a source with id {source_in.id!r} already exists")
        source_id = source_in.id
    else:
        source_id = _free_id(session, slugify(source_in.name) or _slug_from_url(url))
    source = Source(
        id=source_id,
        name=source_in.name,
        url=url,
        kind="unknown",
        trust=source_in.trust,
        language=source_in.language,
        publisher_id=source_in.publisher_id,
        check_interval_s=source_in.check_interval_s,
        enabled=source_in.enabled,
        notes=source_in.notes,
    )
    session.add(source)
    session.flush()
    return source


def import_opml(*, session: Session, body: bytes, trust: str, settings: Settings) -> dict[str, list]:
    """Add a source for each feed of an OPML document that is not watched yet.

    Returns ``{"created": [source ids], "skipped": [{"url", "reason"}]}``. Raises
    :class:`~chipwatch.sources.parse.FeedParseError` for a malformed, unsafe or non-OPML document
    (nothing is added then). Flushes; never commits.
    """
    from chipwatch.sources.models import SourceCreate

    created: list[str] = []
    skipped: list[dict[str, str]] = []
    for outline in parse_opml(body):
        name = (outline["name"] or outline["url"])[:200]
        try:
            source = create_source(
                session=session,
                source_in=SourceCreate.model_construct(
                    url=outline["url"],
                    name=name,
                    trust=trust,
                    id=None,
                    language=None,
                    publisher_id=None,
                    check_interval_s=None,
                    enabled=True,
                    notes=None,
                ),
                settings=settings,
            )
        except (InvalidSourceURL, SourceConflict) as exc:
            skipped.append({"url": outline["url"], "reason": str(exc)})
            continue
        created.append(source.id)
    return {"created": created, "skipped": skipped}


def export_opml(*, session: Session) -> bytes:
    """An OPML 2.0 document of every polled feed (enabled or not), ordered by id."""
    feeds = [s for s in session.scalars(select(Source).order_by(Source.id)) if is_feed(s)]
    return build_opml(feeds, title="chipwatch sources")


def feed_source_ids(*, session: Session, enabled_only: bool = True) -> list[str]:
    """Ids of the polled feeds (kind rss, atom, rdf, json or unknown, with a URL), ordered by id."""
    stmt = select(Source.id).where(Source.kind.in_(FEED_KINDS), Source.url.is_not(None)).order_by(Source.id)
    if enabled_only:
        stmt = stmt.where(Source.enabled.is_(True))
    return list(session.scalars(stmt))


# --------------------------------------------------------------------------------------------------
# Items: queries


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def list_items(
    *,
    session: Session,
    source_id: str | None = None,
    mentions: str | None = None,
    since: datetime | None = None,
    q: str | None = None,
    limit: int = 50,
    after: tuple[datetime, int] | None = None,
) -> tuple[list[Item], bool]:
    """One page of items, newest first by ``(sort_at, id)``, and whether another page follows.

    ``sort_at`` is the publication time, or the first-seen time for items without a usable date.
    Filters: ``source_id``; ``mentions`` (an entity id linked through item mentions); ``since`` (aware
    datetime: items at or after it); ``q`` (case-insensitive substring of title or summary).
    ``after`` is the ``(sort_at, id)`` of the last row of the previous page.
    """
    stmt = select(Item)
    if source_id:
        stmt = stmt.where(Item.source_id == source_id)
    if mentions:
        stmt = stmt.where(Item.id.in_(select(ItemMention.item_id).where(ItemMention.entity_id == mentions)))
    if since is not None:
        stmt = stmt.where(Item.sort_at >= since)
    if q:
        pattern = f"%{_like_escape(q)}%"
        stmt = stmt.where(
            or_(Item.title.ilike(pattern, escape="\\"), Item.summary.ilike(pattern, escape="\\"))
        )
    if after is not None:
        at, last_id = after
        stmt = stmt.where(or_(Item.sort_at < at, (Item.sort_at == at) & (Item.id < last_id)))
    stmt = stmt.order_by(Item.sort_at.desc(), Item.id.desc()).limit(limit + 1)
    rows = list(session.scalars(stmt))
    return rows[:limit], len(rows) > limit


def mentions_of(*, session: Session, item_ids: Sequence[int]) -> dict[int, list[ItemMention]]:
    """Mention rows of each item id (ordered by entity id); items without mentions map to ``[]``."""
    found: dict[int, list[ItemMention]] = {i: [] for i in item_ids}
    ids = list(item_ids)
    for start in range(0, len(ids), IN_CHUNK):
        stmt = (
            select(ItemMention)
            .where(ItemMention.item_id.in_(ids[start : start + IN_CHUNK]))
            .order_by(ItemMention.item_id, ItemMention.entity_id)
        )
        for row in session.scalars(stmt):
            found[row.item_id].append(row)
    return found


__all__ = [
    "BatchWriter",
    "CheckOutcome",
    "FetchSlots",
    "InvalidSourceURL",
    "NotAFeed",
    "PERMANENT_REDIRECT_CHECKS",
    "SourceConflict",
    "SourceNotFound",
    "SourceSnapshot",
    "StoreResult",
    "ThreadWriter",
    "Writer",
    "check_interval_s",
    "check_source_url",
    "create_source",
    "entity_matcher",
    "evaluate_signals",
    "export_opml",
    "feed_source_ids",
    "health_event_data",
    "import_opml",
    "is_feed",
    "item_content_hash",
    "link_mentions",
    "list_items",
    "load_snapshot",
    "mentions_of",
    "record_check",
    "refresh_source",
    "slugify",
    "store_items",
]
