"""Checking one source: fetch, parse, store, record health and schedule. The one code path for a
check of a feed or a dataset source, used by the scheduled pass (:mod:`chipwatch.sources.check_pass`),
``POST /v1/sources/{id}/check`` and ``chipwatch check``::

    read the source (short read transaction, or the snapshot a claim already read)
      -> fetch (no transaction open during HTTP)
      -> parse (pure, in a worker thread; skipped when the body is the one parsed last time)
      -> one write transaction (a Writer): store items, link mentions, notify the items-stored
         listeners (signal evaluation), record health, schedule the next check; a feed of more than
         STORE_CHUNK_ITEMS entries first stores its leading entries in transactions of that many each

A dataset source (a source of a dataset kind: MLPerf, Epoch AI, InferenceX files) goes the same way
with one difference: its changed bytes are not parsed into items but handed, in the write transaction,
to the importer the wiring registered (:func:`chipwatch.sources.hooks.import_dataset`), which diffs them
against the dataset's previous version. A refused file is the source's failure, like a malformed feed.

Because no transaction may span the HTTP exchange, :func:`check_source` opens its own short
transactions; :func:`record_check` takes a keyword-only ``session`` and never commits.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime

import httpx
from sqlalchemy import select
from sqlmodel import Session

from chipwatch.config import Settings, get_settings
from chipwatch.db import is_postgres, session_scope
from chipwatch.kit.time import utcnow
from chipwatch.metrics import CHECKS, FETCH_LATENCY, ITEMS_STORED
from chipwatch.sources.errors import FeedParseError, NotAFeed, SourceNotFound, SourceRemoved
from chipwatch.sources.events import emit_health_changed
from chipwatch.sources.fetch import FetchResult, FetchSlots, fetch_feed, make_client
from chipwatch.sources.hooks import import_dataset, notify_items_stored, prepare_store
from chipwatch.sources.mentions import entity_matcher, link_mentions
from chipwatch.sources.models import DATASET_SOURCE_KINDS, FEED_KINDS, Item, Source
from chipwatch.sources.parse import ParsedFeed, parse_feed
from chipwatch.sources.schedule import RECENT_ITEMS, Interval, adaptive_interval, clamped, next_check
from chipwatch.sources.store import store_items
from chipwatch.sources.writers import ThreadWriter, Writer

logger = logging.getLogger(__name__)

# A stored URL is rewritten only after this many consecutive checks ended behind the same permanent
# redirect (301/308): one 301 can be a misconfiguration that is reverted the next day, and RFC 9110
# 15.4.2 only says a client "ought to" update its references. 302/307 never count.
PERMANENT_REDIRECT_CHECKS = 3

# Column widths of the sources table (PostgreSQL enforces them; SQLite does not).
ETAG_MAX, LAST_MODIFIED_MAX, URL_MAX, ERROR_MAX, REASON_MAX = 512, 128, 2000, 2000, 500

STORE_CHUNK_ITEMS = 200
"""Feed entries stored per write transaction. Storing an entry (its item, mentions, signal evaluation
and candidate extraction) takes about a millisecond, all of it inside the transaction; on SQLite every
other writer waits for the whole of it. A feed of 5,000 new entries stored at once held the lock for
about 7 s; in transactions of this many, another writer waits for one of them (see db.WriteGate), a
fraction of a second. Each transaction is whole: a failure after some of them keeps those entries and
records the error, and the next check reads the feed again (its digest is stored only at the end)."""

_rng = random.Random()


@dataclass(slots=True)
class CheckOutcome:
    """What one check of one source did.

    ``status`` is ``ok`` (fetched and stored), ``not_modified`` (304) or ``error`` (``error`` says
    why: network, HTTP status, limits, malformed feed, a refused dataset file, or storage).
    ``http_status`` is the last HTTP status seen, if any. ``new_items``/``updated_items`` count stored
    rows added / changed; ``import_id`` is the import a dataset source's changed bytes made (applied, or
    refused when ``status`` is ``error``), None when there was nothing new; ``next_check_at`` is when
    the source is due again (aware UTC).
    """

    source_id: str
    status: str
    http_status: int | None = None
    new_items: int = 0
    updated_items: int = 0
    error: str | None = None
    next_check_at: datetime | None = None
    import_id: int | None = None
    new_item_ids: list[int] = field(default_factory=list, repr=False)
    updated_item_ids: list[int] = field(default_factory=list, repr=False)


def is_feed(source: Source) -> bool:
    """True when ``source`` is a feed: a feed kind (rss, atom, rdf, json, unknown) with a URL."""
    return source.kind in FEED_KINDS and bool(source.url)


def is_dataset_kind(kind: str) -> bool:
    """True for the kinds of dataset sources (``epoch-ml-hardware``, ``mlperf-inference-summary``...)."""
    return kind in DATASET_SOURCE_KINDS


def is_checked(source: Source) -> bool:
    """True when ``source`` is checked on a schedule: a feed, or a dataset source, with a URL."""
    return (source.kind in FEED_KINDS or is_dataset_kind(source.kind)) and bool(source.url)


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
    timezone: str | None = None

    @classmethod
    def of(cls, source: Source) -> SourceSnapshot:
        """Snapshot of a source row; raises :class:`~chipwatch.sources.errors.NotAFeed` for a source
        that is not checked (:class:`~chipwatch.sources.errors.SourceRemoved` for a removed one)."""
        if source.removed_at is not None:
            raise SourceRemoved(
                f"source {source.id!r} was removed at {source.removed_at.isoformat()}; "
                'PATCH it with {"enabled": true} to check it again'
            )
        if not is_checked(source):
            raise NotAFeed(
                f"source {source.id!r} is not a polled feed or dataset source (kind {source.kind!r}"
                f"{', no URL' if not source.url else ''}); only rss, atom, rdf, json, unknown and the dataset"
                " kinds are checked"
            )
        return cls(
            id=source.id,
            name=source.name,
            url=source.url or "",
            kind=source.kind,
            etag=source.etag,
            last_modified=source.last_modified,
            last_body_sha256=source.last_body_sha256,
            timezone=source.timezone,
        )


def load_snapshot(*, session: Session, source_id: str) -> SourceSnapshot:
    """The check snapshot of ``source_id``; raises :class:`~chipwatch.sources.errors.SourceNotFound`
    or :class:`~chipwatch.sources.errors.NotAFeed`."""
    source = session.get(Source, source_id)
    if source is None:
        raise SourceNotFound(source_id)
    return SourceSnapshot.of(source)


# --------------------------------------------------------------------------------------------------
# One check


async def check_source(
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
    skips the initial read when the caller (the pass's claim) already has the row; ``writer`` decides
    how the final write transaction runs (default: its own transaction in a worker thread); ``slots``
    limits concurrent fetches overall and per host.

    A dataset source's changed bytes are imported in the write transaction instead of parsed here (see
    the module docstring).

    Returns a :class:`CheckOutcome`. Raises :class:`~chipwatch.sources.errors.SourceNotFound` or
    :class:`~chipwatch.sources.errors.NotAFeed` before any fetch; after that it never raises: network
    failures, HTTP errors, limits, malformed or hostile feeds, refused dataset files and storage
    failures all end as ``status="error"`` with a readable ``error``, recorded in the source's health,
    with its earlier items and facts kept.
    """
    settings = settings or get_settings()
    writer = writer or ThreadWriter(settings)
    if snapshot is None:
        snapshot = await asyncio.to_thread(_read_snapshot, settings, source_id)
    fetched = await _fetch(client, snapshot, settings, slots)
    parsed, parse_error, digest, dataset = None, None, None, None
    if fetched.status == "ok" and fetched.body is not None:
        digest = hashlib.sha256(fetched.body).hexdigest()
        if digest != snapshot.last_body_sha256 and is_dataset_kind(snapshot.kind):
            dataset = fetched.body  # imported in the write: the diff reads the facts it would change
        elif digest != snapshot.last_body_sha256:
            # Parsing is CPU work on untrusted bytes: off the event loop, outside any transaction.
            parsed, parse_error = await asyncio.to_thread(_parse, fetched, snapshot.timezone)
        fetched.body = None  # the bytes are no longer needed; do not keep them alive while waiting
    if parsed is not None and parsed.entries:
        await asyncio.to_thread(_prepare_store, settings)

    FETCH_LATENCY.observe(fetched.elapsed_s)
    try:
        earlier = CheckOutcome(source_id=snapshot.id, status="ok")
        if parsed is not None and len(parsed.entries) > STORE_CHUNK_ITEMS:
            parsed = await _store_leading_chunks(writer, snapshot, parsed, earlier, settings)
        record = _recorder(
            snapshot,
            fetched,
            parsed=parsed,
            parse_error=parse_error,
            body_sha256=digest,
            dataset=dataset,
            settings=settings,
            earlier=earlier,
        )
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


async def check_now(source_id: str, *, settings: Settings | None = None) -> CheckOutcome:
    """:func:`check_source` with a client of its own: one check on demand (``POST .../check``).

    Raises :class:`~chipwatch.sources.errors.SourceNotFound` or
    :class:`~chipwatch.sources.errors.NotAFeed`; every other failure is an ``error`` outcome.
    """
    settings = settings or get_settings()
    async with make_client(settings) as client:
        return await check_source(source_id, settings=settings, client=client)


async def _fetch(
    client: httpx.AsyncClient, snapshot: SourceSnapshot, settings: Settings, slots: FetchSlots | None
) -> FetchResult:
    """The conditional GET of the snapshot's URL, inside a fetch slot when ``slots`` is given."""
    async with slots.hold(snapshot.url) if slots is not None else contextlib.nullcontext():
        return await fetch_feed(
            client, snapshot.url, etag=snapshot.etag, last_modified=snapshot.last_modified, settings=settings
        )


def _read_snapshot(settings: Settings, source_id: str) -> SourceSnapshot:
    with session_scope(settings, write=False) as session:
        return load_snapshot(session=session, source_id=source_id)


def _prepare_store(settings: Settings) -> None:
    """Build the matchers the write will use (entity names, signal rules) in a read transaction, so a
    changed knowledge base or signal set is compiled here and not under the write lock; they are cached
    by fingerprint, so the write finds them ready unless the names change again in between."""
    try:
        with session_scope(settings, write=False) as session:
            entity_matcher(session=session)
            prepare_store(session=session)
    except Exception:  # a failed warm-up only costs time: the write builds what it needs itself
        logger.exception("preparing the matchers before a check failed")


def _parse(fetched: FetchResult, timezone: str | None) -> tuple[ParsedFeed | None, str | None]:
    """Parse a fetched body, reading its dates in the source's ``timezone``: ``(feed, None)`` or
    ``(None, readable error)``; never raises."""
    try:
        body, url, headers = fetched.body or b"", fetched.final_url, fetched.headers
        feed = parse_feed(body, url=url, headers=headers, now=utcnow(), default_tz=timezone)
        return feed, None
    except FeedParseError as exc:
        return None, str(exc)
    except Exception as exc:  # the parser is run on hostile input; any crash is that feed's error
        logger.exception("parser crashed on %s", fetched.final_url)
        return None, f"parser crashed: {type(exc).__name__}: {exc}"


async def _store_leading_chunks(
    writer: Writer, snapshot: SourceSnapshot, parsed: ParsedFeed, earlier: CheckOutcome, settings: Settings
) -> ParsedFeed:
    """Store all but the last ``STORE_CHUNK_ITEMS`` entries of ``parsed``, that many per transaction, adding
    the ids stored to ``earlier``; returns the feed with the entries left for the check's own write.

    Raises what a chunk's transaction raised (that chunk is rolled back; the ones before it stay)."""
    entries = parsed.entries
    cut = len(entries) - STORE_CHUNK_ITEMS
    for start in range(0, cut, STORE_CHUNK_ITEMS):
        chunk = replace(parsed, entries=entries[start : min(start + STORE_CHUNK_ITEMS, cut)])
        stored = await writer.run(_chunk_storer(snapshot.id, chunk, settings), source_id=snapshot.id)
        if stored is None:  # the source was deleted meanwhile: the check's own write says so
            break
        earlier.new_item_ids += stored.new_item_ids
        earlier.updated_item_ids += stored.updated_item_ids
    return replace(parsed, entries=entries[cut:])


def _chunk_storer(
    source_id: str, chunk: ParsedFeed, settings: Settings
) -> Callable[[Session], CheckOutcome | None]:
    """A write function storing ``chunk``'s entries, with their mentions and listeners; None when the
    source is gone. Health, validators and the body's digest are left to the check's last write."""

    def store_chunk(session: Session) -> CheckOutcome | None:
        locking = is_postgres(session.get_bind().engine) or None
        source = session.get(Source, source_id, with_for_update=locking)
        if source is None:
            return None
        stored = CheckOutcome(source_id=source_id, status="ok")
        _store(session, source, chunk, source.last_body_sha256, stored, utcnow())
        return stored

    store_chunk.weight = len(chunk.entries)  # type: ignore[attr-defined]  # see writers.BatchWriter
    return store_chunk


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
    try:
        return await writer.run(_recorder(snapshot, failed, settings=settings))
    except Exception:
        logger.exception("recording the failure of source %s failed too", snapshot.id)
        return CheckOutcome(source_id=snapshot.id, status="error", http_status=http_status, error=message)


# --------------------------------------------------------------------------------------------------
# Recording a check


def _recorder(
    snapshot: SourceSnapshot,
    fetched: FetchResult,
    *,
    parsed: ParsedFeed | None = None,
    parse_error: str | None = None,
    body_sha256: str | None = None,
    dataset: bytes | None = None,
    settings: Settings,
    earlier: CheckOutcome | None = None,
) -> Callable[[Session], CheckOutcome]:
    """A write function recording this check with :func:`record_check`, for a :class:`Writer`."""

    def record(session: Session) -> CheckOutcome:
        return record_check(
            session=session,
            snapshot=snapshot,
            fetched=fetched,
            parsed=parsed,
            parse_error=parse_error,
            body_sha256=body_sha256,
            dataset=dataset,
            settings=settings,
            earlier=earlier,
        )

    record.weight = len(parsed.entries) if parsed is not None else 1  # type: ignore[attr-defined]
    return record


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
    dataset: bytes | None = None,
    now: datetime | None = None,
    earlier: CheckOutcome | None = None,
) -> CheckOutcome:
    """Apply one check's result in ``session``: items, mentions, listeners, health, schedule.

    ``parsed`` is None for a 304, an error, a parse failure (``parse_error`` says why) or a body
    identical to the last one parsed (``body_sha256`` equal to the stored digest). ``dataset`` is a
    dataset source's changed body, imported here (a refused file is this check's error). Health fields are
    set on every call (flushed by the caller's commit); a ``source.health_changed`` event is emitted
    when the source goes from healthy (no consecutive failures) to failing or back. Returns the
    :class:`CheckOutcome`. Exceptions of the items-stored listeners propagate (the caller rolls back).
    ``earlier`` holds the ids a large feed's leading entries were stored under, in committed transactions
    of their own before this one (:data:`STORE_CHUNK_ITEMS`); they count in the outcome and the schedule.
    """
    now = now or utcnow()
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
    if error is None and dataset is not None:
        imported = import_dataset(
            session=session, source_id=source.id, kind=source.kind, body=dataset, url=fetched.final_url
        )
        error = imported.error
        if error is None:
            source.last_body_sha256 = body_sha256
    else:
        imported = None
    outcome = CheckOutcome(source_id=source.id, status="error" if error else fetched.status)
    if earlier is not None:
        outcome.new_item_ids += earlier.new_item_ids
        outcome.updated_item_ids += earlier.updated_item_ids
    outcome.http_status = fetched.http_status
    outcome.import_id = imported.import_id if imported is not None else None
    items_before = source.items_count
    if error is None:
        _record_success(session, source, fetched, parsed, body_sha256, outcome, now)
    else:
        _record_failure(source, error)
    if fetched.status != "error":
        _follow_permanent_redirect(session, source, fetched.permanent_redirect_to)
    outcome.new_items = len(outcome.new_item_ids)
    outcome.updated_items = len(outcome.updated_item_ids)
    items_changed = source.items_count != items_before or bool(earlier and earlier.new_item_ids)
    _schedule_next(session, source, fetched, settings, now, items_changed=items_changed)
    outcome.next_check_at = source.next_check_at
    outcome.error = error
    if (source.consecutive_failures == 0) != was_healthy:
        emit_health_changed(session, source)
    # No final flush: the source's UPDATE goes out with the commit, where a batch of checks is sent
    # as one executemany.
    return outcome


def _record_success(
    session: Session,
    source: Source,
    fetched: FetchResult,
    parsed: ParsedFeed | None,
    body_sha256: str | None,
    outcome: CheckOutcome,
    now: datetime,
) -> None:
    # Validators only from answers that were used: storing those of a malformed body would turn the
    # next check into a 304 and hide that the feed is still broken.
    source.etag = _fits(fetched.etag, ETAG_MAX)
    source.last_modified = _fits(fetched.last_modified, LAST_MODIFIED_MAX)
    if parsed is not None:
        _store(session, source, parsed, body_sha256, outcome, now)
    source.last_status = fetched.status
    source.last_success_at = now
    source.last_error = None
    source.consecutive_failures = 0


def _store(
    session: Session,
    source: Source,
    parsed: ParsedFeed,
    body_sha256: str | None,
    outcome: CheckOutcome,
    now: datetime,
) -> None:
    """Store the parsed entries, link their mentions and hand the ids to the items-stored listeners."""
    stored = store_items(session=session, source=source, feed=parsed, now=now)
    source.kind = parsed.kind
    source.last_body_sha256 = body_sha256
    new_ids = [i.id for i in stored.new if i.id is not None]
    updated_ids = [i.id for i in stored.updated if i.id is not None]
    outcome.new_item_ids += new_ids
    outcome.updated_item_ids += updated_ids
    if stored.new or stored.updated:
        link_mentions(session=session, items=[*stored.new, *stored.updated])
        notify_items_stored(session=session, item_ids=[*new_ids, *updated_ids])
    if parsed.bozo:
        # Common in the wild and already handled (entries recovered): worth a note, not an alarm.
        logger.info(
            "source %s: feed is not well-formed; %d entries recovered (%s)",
            source.id,
            len(parsed.entries),
            "; ".join(parsed.warnings)[:300],
            extra={"source_id": source.id},
        )


def _record_failure(source: Source, error: str) -> None:
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


def _schedule_next(
    session: Session,
    source: Source,
    fetched: FetchResult,
    settings: Settings,
    now: datetime,
    *,
    items_changed: bool,
) -> None:
    interval = check_interval(session=session, source=source, settings=settings, items_changed=items_changed)
    source.next_check_at, reason = next_check(
        now,
        interval=interval,
        max_age_s=fetched.max_age_s,
        retry_after_s=fetched.retry_after_s,
        failures=source.consecutive_failures,
        rng=_rng,
        max_s=settings.max_check_interval_s,
    )
    source.interval_reason = _fits(reason, REASON_MAX)


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


def check_interval(*, session: Session, source: Source, settings: Settings, items_changed: bool) -> Interval:
    """Seconds between healthy checks of ``source``, with the reason in words.

    A fixed ``check_interval_s`` wins. Otherwise the adaptive interval of
    :func:`chipwatch.sources.schedule.adaptive_interval` over the source's newest items (publication
    time, or first-seen time for undated items), clamped to ``min_check_interval_s`` ..
    ``max_check_interval_s``; a source without items gets ``default_check_interval_s``. The adaptive
    interval is recomputed only when items were added (else the stored ``effective_interval_s`` and
    the reason it was given stand); the seconds are saved in ``effective_interval_s``.
    """
    if source.check_interval_s:
        interval = Interval(max(1, int(source.check_interval_s)), "fixed interval (check_interval_s)")
    elif source.items_count == 0:
        interval = clamped(
            settings.default_check_interval_s,
            min_s=settings.min_check_interval_s,
            max_s=settings.max_check_interval_s,
            what="no items yet, so the default interval",
        )
    elif items_changed or source.effective_interval_s is None or not source.interval_reason:
        recent = (
            select(Item.sort_at)
            .where(Item.source_id == source.id)
            .order_by(Item.sort_at.desc())
            .limit(RECENT_ITEMS)
        )
        interval = adaptive_interval(
            list(session.scalars(recent)),
            default_s=settings.default_check_interval_s,
            min_s=settings.min_check_interval_s,
            max_s=settings.max_check_interval_s,
        )
    else:
        # The interval's own reason is the first clause of the stored one (reasons never hold "; ").
        interval = Interval(source.effective_interval_s, source.interval_reason.split("; ", 1)[0])
    source.effective_interval_s = interval.seconds
    return interval


__all__ = [
    "PERMANENT_REDIRECT_CHECKS",
    "CheckOutcome",
    "SourceSnapshot",
    "check_interval",
    "check_now",
    "check_source",
    "is_checked",
    "is_dataset_kind",
    "is_feed",
    "load_snapshot",
    "record_check",
]
