"""Dataset sources checked on the feeds' schedule machinery: claimed through the kit's row leases,
fetched by the sources domain's guarded fetcher (conditional GET, SSRF guard, size and time caps),
imported when the bytes changed, with the source's health and next check recorded as for a feed.

The same function serves the ``imports.check_datasets`` job and ``POST /v1/imports/sources/{id}/check``
(manual and scheduled work share one code path). A source that cannot be reached fails politely: the
error is its ``last_error``, its failures count up, the next check backs off, and a
``source.health_changed`` event is written when it turns from healthy to failing or back.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
from dataclasses import dataclass
from datetime import datetime

import httpx
from sqlalchemy import and_, or_, select
from sqlmodel import Session

from chipwatch.config import Settings, get_settings
from chipwatch.db import session_scope
from chipwatch.imports.service import ImportRefused, ImportRequest, record_refusal, run_import
from chipwatch.kit.claims import claim_rows, new_worker_id, unclaimed
from chipwatch.kit.time import utcnow
from chipwatch.sources.events import emit_health_changed
from chipwatch.sources.fetch import FetchResult, fetch_feed, make_client
from chipwatch.sources.models import DATASET_SOURCE_KINDS, Source
from chipwatch.sources.schedule import Interval, next_check

CLAIM_BATCH = 4  # datasets are few and large: a pass takes a handful
# A lease long enough for a large file's fetch and import; a crashed worker's claim lapses after it.
LEASE_S = 900
ERROR_MAX = 2000
_rng = random.Random()


class NotADatasetSource(LookupError):
    """The source does not exist, is not of a dataset kind, has no URL, or was removed."""


@dataclass(slots=True)
class DatasetCheck:
    """What one check of a dataset source did: ``status`` ``imported``, ``unchanged`` (304 or the same
    bytes as last time), ``refused`` (the file was refused: ``error`` says why) or ``error`` (fetch or
    storage failure); ``import_id`` is the import written, if any."""

    source_id: str
    status: str
    http_status: int | None = None
    import_id: int | None = None
    error: str | None = None
    next_check_at: datetime | None = None


def _due(now: datetime):
    return and_(
        Source.enabled.is_(True),
        Source.removed_at.is_(None),
        Source.kind.in_(DATASET_SOURCE_KINDS),
        Source.url.is_not(None),
        or_(Source.next_check_at.is_(None), Source.next_check_at <= now),
        unclaimed(Source, now),
    )


def claim_due_datasets(*, session: Session, worker_id: str, limit: int, now: datetime) -> list[str]:
    """Claim up to ``limit`` due dataset sources (longest overdue first); returns their ids."""
    stmt = select(Source.id).where(_due(now)).order_by(Source.next_check_at.asc().nulls_first(), Source.id)
    candidates = list(session.scalars(stmt.limit(limit)))
    lease_until = datetime.fromtimestamp(now.timestamp() + LEASE_S, tz=now.tzinfo)
    return claim_rows(
        session=session,
        table=Source,
        ids=candidates,
        due=_due(now),
        worker_id=worker_id,
        lease_until=lease_until,
    )


def _snapshot(settings: Settings, source_id: str) -> Source:
    with session_scope(settings, write=False) as session:
        source = session.get(Source, source_id)
        if source is None or source.kind not in DATASET_SOURCE_KINDS or not source.url or source.removed_at:
            raise NotADatasetSource(source_id)
        return source


async def check_dataset_source(
    source_id: str, *, settings: Settings | None = None, client: httpx.AsyncClient | None = None
) -> DatasetCheck:
    """Check one dataset source now: conditional GET, import when the bytes changed, record health and
    the next check. Raises :class:`NotADatasetSource` before any fetch; never raises after it."""
    settings = settings or get_settings()
    snapshot = await asyncio.to_thread(_snapshot, settings, source_id)
    if client is None:
        async with make_client(settings) as own:
            fetched = await fetch_feed(
                own,
                snapshot.url or "",
                etag=snapshot.etag,
                last_modified=snapshot.last_modified,
                settings=settings,
            )
    else:
        fetched = await fetch_feed(
            client,
            snapshot.url or "",
            etag=snapshot.etag,
            last_modified=snapshot.last_modified,
            settings=settings,
        )
    try:
        return await asyncio.to_thread(_record, settings, source_id, fetched)
    except Exception as exc:  # storage failed: the import rolled back; the failure goes into health
        failed = FetchResult(
            status="error",
            url=fetched.url,
            final_url=fetched.final_url,
            http_status=fetched.http_status,
            error=f"could not store: {type(exc).__name__}: {exc}",
        )
        return await asyncio.to_thread(_record, settings, source_id, failed)


def _record(settings: Settings, source_id: str, fetched: FetchResult) -> DatasetCheck:
    with session_scope(settings) as session:
        return record_dataset_check(session=session, source_id=source_id, fetched=fetched, settings=settings)


def record_dataset_check(
    *, session: Session, source_id: str, fetched: FetchResult, settings: Settings, now: datetime | None = None
) -> DatasetCheck:
    """Apply one fetch of a dataset source in ``session``: import changed bytes (a refused file is
    recorded as refused and counts as a failure), then health, validators and the next check."""
    now = now or utcnow()
    source = session.get(Source, source_id)
    if source is None:
        return DatasetCheck(source_id, "error", error="source was deleted during the check")
    was_healthy = source.consecutive_failures == 0
    check = DatasetCheck(source_id, "unchanged", http_status=fetched.http_status)
    if fetched.status == "error":
        check.status, check.error = "error", fetched.error or "fetch failed"
    elif fetched.status == "ok" and fetched.body is not None:
        digest = hashlib.sha256(fetched.body).hexdigest()
        if digest != source.last_body_sha256:
            _import(session, source, fetched, digest, check)
    _health(source, fetched, check, now)
    if source.check_interval_s:
        interval = Interval(source.check_interval_s, "fixed interval (check_interval_s)")
    else:
        interval = Interval(settings.default_check_interval_s, "a dataset source: the default interval")
    source.next_check_at, reason = next_check(
        now,
        interval=interval,
        max_age_s=fetched.max_age_s,
        retry_after_s=fetched.retry_after_s,
        failures=source.consecutive_failures,
        rng=_rng,
        max_s=settings.max_check_interval_s,
    )
    source.interval_reason = reason[:500]
    source.claimed_until = source.claimed_by = None
    session.add(source)
    if (source.consecutive_failures == 0) != was_healthy:
        emit_health_changed(session, source)
    check.next_check_at = source.next_check_at
    return check


def _import(session: Session, source: Source, fetched: FetchResult, digest: str, check: DatasetCheck) -> None:
    name = fetched.final_url.rsplit("?", 1)[0].rsplit("/", 1)[-1]
    request = ImportRequest(
        kind=source.kind,
        data=fetched.body or b"",
        file_name=name,
        url=fetched.final_url,
        source_id=source.id,
        actor="source",
    )
    try:
        with session.begin_nested():
            imp = run_import(session=session, request=request)
    except ImportRefused as refusal:
        check.status, check.error = "refused", f"import refused: {refusal.reason}"
        check.import_id = record_refusal(session=session, request=request, refusal=refusal).id
        return
    check.status, check.import_id = "imported", imp.id
    source.last_body_sha256 = digest


def _health(source: Source, fetched: FetchResult, check: DatasetCheck, now: datetime) -> None:
    source.last_checked_at = now
    source.last_http_status = fetched.http_status
    if check.status in ("error", "refused"):
        source.last_status = "error"
        source.last_error = (check.error or "")[:ERROR_MAX]
        source.consecutive_failures += 1
        return
    # Validators only from an answer that was used, so a refused file is fetched again in full.
    source.etag, source.last_modified = fetched.etag, fetched.last_modified
    source.last_status = "not_modified" if fetched.status == "not_modified" else "ok"
    source.last_success_at, source.last_error, source.consecutive_failures = now, None, 0


async def check_due_datasets(settings: Settings | None = None) -> list[DatasetCheck]:
    """Claim the dataset sources that are due and check them one after another (the job's body)."""
    settings = settings or get_settings()
    worker_id = new_worker_id()

    def claim() -> list[str]:
        with session_scope(settings) as session:
            return claim_due_datasets(session=session, worker_id=worker_id, limit=CLAIM_BATCH, now=utcnow())

    ids = await asyncio.to_thread(claim)
    if not ids:
        return []
    checks = []
    async with make_client(settings) as client:
        for source_id in sorted(ids):
            checks.append(await check_dataset_source(source_id, settings=settings, client=client))
    return checks
