"""The dispatcher's side of the database: fan outbox events out to endpoints, claim due deliveries,
record attempt outcomes and schedule retries.

Events come from :mod:`chipwatch.outbox` (producers write them); this module turns each into one
delivery per subscribed endpoint and moves deliveries on.  Every function takes a keyword-only
``session`` and never commits: the dispatcher round owns the transaction.  The delivery rules come
from ``DESIGN.md`` (Webhooks) and the Standard Webhooks specification:

* 2xx is success; anything else, including 3xx (redirects are never followed), is a failed attempt;
* 410 Gone disables the endpoint and says so in ``disabled_reason``;
* 429 and 503 with ``Retry-After`` push the next attempt at least that far out;
* other failures wait ``settings.retry_schedule_s[n]`` seconds before attempt ``n + 1``; when the
  schedule runs out the delivery is ``failed``;
* an endpoint whose attempts have all failed for ``settings.webhook_disable_after_s`` is disabled.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, func, insert, select, update
from sqlalchemy.sql import ColumnElement
from sqlmodel import Session

from chipwatch.config import Settings
from chipwatch.db import is_postgres
from chipwatch.kit.claims import claim_rows, release_rows, unclaimed
from chipwatch.kit.retry_after import RETRY_AFTER_STATUSES
from chipwatch.kit.time import as_utc, rfc3339, utcnow
from chipwatch.outbox.models import Event
from chipwatch.webhooks.endpoints import TEST_EVENT, signing_secrets
from chipwatch.webhooks.models import Delivery, DeliveryAttempt, Endpoint

log = logging.getLogger(__name__)

RESPONSE_EXCERPT_CHARS = 1000
FAN_OUT_BATCH = 200


# ---------------------------------------------------------------- fan-out
def _subscribed(endpoint: Endpoint, event: Event) -> bool:
    if event.type == TEST_EVENT:
        return (event.data or {}).get("webhook_id") == endpoint.id
    if event.type not in (endpoint.event_types or ()):
        return False
    # The signal filter narrows signal.* events only; source events carry no signal id.
    signal_ids = endpoint.signal_ids
    if signal_ids and event.type.startswith("signal.") and event.signal_id not in signal_ids:
        return False
    # An endpoint receives changes from the moment it subscribed, not the backlog before it.
    return as_utc(endpoint.created_at) <= as_utc(event.created_at)


@dataclass
class FanOutResult:
    """What one fan-out did: events marked dispatched and delivery rows created."""

    events: int = 0
    deliveries: int = 0


def fan_out(*, session: Session, max_events: int = 1000, now: datetime | None = None) -> FanOutResult:
    """Turn undispatched outbox events into one ``pending`` delivery per subscribed, enabled endpoint.

    Processes at most ``max_events`` events (oldest first; the rest wait for the next round) and marks
    them dispatched in the same transaction, so a crash either keeps both or neither.  On PostgreSQL
    the events are locked with ``FOR UPDATE SKIP LOCKED`` so concurrent workers never fan out the same
    event.
    """
    now = now or utcnow()
    result = FanOutResult()
    postgres = is_postgres(session.get_bind())
    endpoints: list[Endpoint] | None = None
    while result.events < max_events:
        stmt = (
            select(Event)
            .where(Event.dispatched.is_(False))
            .order_by(Event.id)
            .limit(min(FAN_OUT_BATCH, max_events - result.events))
        )
        if postgres:
            stmt = stmt.with_for_update(skip_locked=True)
        events = list(session.scalars(stmt).all())
        if not events:
            return result
        if endpoints is None:
            enabled = select(Endpoint).where(Endpoint.enabled.is_(True))
            endpoints = list(session.scalars(enabled.order_by(Endpoint.created_at, Endpoint.id)).all())
        rows = [
            {"webhook_id": ep.id, "event_id": e.id, "status": "pending", "attempts": 0,
             "next_attempt_at": now, "created_at": now}
            for e in events
            for ep in endpoints
            if _subscribed(ep, e)
        ]
        if rows:
            session.execute(insert(Delivery), rows)
        session.execute(update(Event).where(Event.id.in_([e.id for e in events])).values(dispatched=True))
        result.events += len(events)
        result.deliveries += len(rows)
    return result


# ---------------------------------------------------------------- claims
@dataclass(frozen=True)
class ClaimedDelivery:
    """Everything needed to send one attempt without a database session (plain values only)."""

    delivery_id: int
    endpoint_id: str
    url: str
    secrets: tuple[str, ...]
    event_id: int
    msg_id: str
    event_type: str
    occurred_at: datetime
    data: dict[str, Any]
    attempts: int
    worker_id: str


def _due(now: datetime) -> ColumnElement[bool]:
    return and_(Delivery.status == "pending", Delivery.next_attempt_at <= now, unclaimed(Delivery, now))


def _pick(
    candidates: Sequence[Any], room_left: dict[str, int], limit: int, per_endpoint_limit: int
) -> list[int]:
    """Delivery ids from ``(delivery_id, endpoint_id)`` candidates, in order, while endpoints have room."""
    picked: list[int] = []
    for delivery_id, endpoint_id in candidates:
        room = room_left.get(endpoint_id, per_endpoint_limit)
        if room <= 0:
            continue
        room_left[endpoint_id] = room - 1
        picked.append(delivery_id)
        if len(picked) >= limit:
            break
    return picked


def _choose_due(
    session: Session, now: datetime, *, limit: int, per_endpoint_limit: int, in_flight: Mapping[str, int]
) -> list[int]:
    """Ids of up to ``limit`` due deliveries of enabled endpoints, oldest first, within each endpoint's
    room (``per_endpoint_limit`` less what is ``in_flight``)."""
    free = {w: per_endpoint_limit - n for w, n in in_flight.items()}
    saturated = [w for w, n in free.items() if n <= 0]
    base = select(Delivery.id, Delivery.webhook_id).join(Endpoint, Endpoint.id == Delivery.webhook_id)
    base = base.where(_due(now), Endpoint.enabled.is_(True))
    if saturated:
        base = base.where(Delivery.webhook_id.not_in(saturated))
    # Fast path: the oldest due rows straight from the (status, next_attempt_at) index.  It is enough
    # unless a few endpoints' backlogs fill the scan; then rank per endpoint so each gets its share.
    scan = 2 * limit + per_endpoint_limit
    candidates = session.execute(base.order_by(Delivery.next_attempt_at, Delivery.id).limit(scan)).all()
    chosen = _pick(candidates, dict(free), limit, per_endpoint_limit)
    if len(chosen) >= limit or len(candidates) < scan:
        return chosen
    rank = (
        func.row_number()
        .over(partition_by=Delivery.webhook_id, order_by=(Delivery.next_attempt_at, Delivery.id))
        .label("rank")
    )
    ranked = base.add_columns(Delivery.next_attempt_at, rank).subquery("ranked")
    candidates = session.execute(
        select(ranked.c.id, ranked.c.webhook_id)
        .where(ranked.c.rank <= per_endpoint_limit)
        .order_by(ranked.c.next_attempt_at, ranked.c.id)
        .limit(limit + len(in_flight) * per_endpoint_limit)
    ).all()
    return _pick(candidates, dict(free), limit, per_endpoint_limit)


def claim_due(
    *,
    session: Session,
    worker_id: str,
    lease_s: float,
    limit: int,
    per_endpoint_limit: int,
    in_flight: Mapping[str, int] | None = None,
    now: datetime | None = None,
) -> list[ClaimedDelivery]:
    """Claim up to ``limit`` due deliveries of enabled endpoints for ``lease_s`` seconds.

    A delivery is due when ``pending``, ``next_attempt_at <= now`` and unclaimed or its claim has
    lapsed (the holder died or hung).  At most ``per_endpoint_limit - in_flight[endpoint_id]`` are
    taken per endpoint, so every claimed delivery can be sent at once and a slow endpoint's backlog
    never fills the batch.  The claim itself is :func:`chipwatch.kit.claims.claim_rows` (PostgreSQL
    ``FOR UPDATE SKIP LOCKED``; SQLite's write lock), the one used for feed checks too.
    """
    now = now or utcnow()
    if limit <= 0:
        return []
    chosen = _choose_due(
        session, now, limit=limit, per_endpoint_limit=per_endpoint_limit, in_flight=in_flight or {}
    )
    ids = claim_rows(
        session=session, table=Delivery, ids=chosen, due=_due(now), worker_id=worker_id,
        lease_until=now + timedelta(seconds=lease_s),
    )
    return _claimed(session, ids, worker_id=worker_id, now=now) if ids else []


def _claimed(session: Session, ids: Sequence[int], *, worker_id: str, now: datetime) -> list[ClaimedDelivery]:
    # Plain columns, not ORM objects: this runs every round and only values leave the transaction.
    rows = session.execute(
        select(
            Delivery.id.label("delivery_id"),
            Delivery.attempts,
            Endpoint.id.label("endpoint_id"),
            Endpoint.url,
            Endpoint.secret,
            Endpoint.previous_secret,
            Endpoint.previous_secret_expires_at,
            Event.id.label("event_id"),
            Event.msg_id,
            Event.type,
            Event.created_at,
            Event.data,
        )
        .join(Endpoint, Endpoint.id == Delivery.webhook_id)
        .join(Event, Event.id == Delivery.event_id)
        .where(Delivery.id.in_(list(ids)))
        .order_by(Delivery.next_attempt_at, Delivery.id)
    ).all()
    return [
        ClaimedDelivery(
            delivery_id=r.delivery_id,
            endpoint_id=r.endpoint_id,
            url=r.url,
            secrets=tuple(signing_secrets(r, now)),
            event_id=r.event_id,
            msg_id=r.msg_id,
            event_type=r.type,
            occurred_at=as_utc(r.created_at),
            data=dict(r.data or {}),
            attempts=r.attempts,
            worker_id=worker_id,
        )
        for r in rows
    ]


def release_claims(*, session: Session, delivery_ids: Sequence[int], worker_id: str) -> int:
    """Hand back claims ``worker_id`` holds without an attempt (due again at once); returns how many."""
    return release_rows(session=session, table=Delivery, ids=delivery_ids, worker_id=worker_id)


def next_due_at(*, session: Session, now: datetime | None = None) -> datetime | None:
    """When the next delivery becomes claimable (``now`` if outbox events await fan-out), or None."""
    now = now or utcnow()
    if session.scalar(select(Event.id).where(Event.dispatched.is_(False)).limit(1)) is not None:
        return now
    pending = and_(Delivery.status == "pending", Endpoint.enabled.is_(True))
    joined = Endpoint.id == Delivery.webhook_id
    earliest = select(func.min(Delivery.next_attempt_at)).join(Endpoint, joined)
    unclaimed_at = session.scalar(earliest.where(pending, unclaimed(Delivery, now)))
    # A claim whose holder died becomes claimable when its lease ends.
    first_lease_end = select(func.min(Delivery.claimed_until)).join(Endpoint, joined)
    lease_ends = session.scalar(first_lease_end.where(pending, Delivery.claimed_until >= now))
    times = [as_utc(t) for t in (unclaimed_at, lease_ends) if t is not None]
    return min(times) if times else None


# ---------------------------------------------------------------- attempts and the retry schedule
@dataclass
class AttemptOutcome:
    """What one HTTP attempt produced; ``status_code`` is None when no answer came (``error`` says why)."""

    delivery_id: int
    endpoint_id: str
    worker_id: str
    attempted_at: datetime
    latency_ms: float
    status_code: int | None = None
    error: str | None = None
    retry_after_s: float | None = None
    location: str | None = None
    response_excerpt: str | None = None

    @property
    def succeeded(self) -> bool:
        """2xx and nothing else (Standard Webhooks; 3xx is a failure because redirects are not followed)."""
        return self.status_code is not None and 200 <= self.status_code < 300


def describe_failure(outcome: AttemptOutcome) -> str:
    """The attempt log's error text for a failed attempt."""
    code = outcome.status_code
    if code is None:
        return outcome.error or "no response"
    if 300 <= code < 400:
        where = f" to {outcome.location}" if outcome.location else ""
        return f"HTTP {code}: redirect{where} not followed; redirects count as failures"
    if code == 410:
        return "HTTP 410 Gone: the receiver asked to stop; endpoint disabled"
    if outcome.retry_after_s is not None:
        return f"HTTP {code}; Retry-After {outcome.retry_after_s:g} s"
    return f"HTTP {code}"


def retry_delay_s(attempts_made: int, schedule: Sequence[float], retry_after_s: float | None) -> float | None:
    """Seconds until the next attempt after ``attempts_made`` failed ones, or None when the schedule is spent.

    ``schedule[n]`` is the wait before attempt ``n + 1`` (``schedule[0]``, normally 0, is the first
    send), so a schedule of eight delays allows eight attempts.  A ``Retry-After`` (429/503) makes the
    wait at least that long.
    """
    if attempts_made >= len(schedule):
        return None
    delay = float(schedule[attempts_made])
    if retry_after_s is not None:
        delay = max(delay, retry_after_s)
    return delay


@dataclass
class RecordResult:
    """Counts from one :func:`record_attempts` call."""

    succeeded: int = 0
    retried: int = 0
    failed: int = 0
    disabled: list[str] = field(default_factory=list)


_STATE_COLUMNS = ("id", "status", "attempts", "claimed_by", "claimed_until")
_WRITTEN_COLUMNS = ("id", "status", "attempts", "last_attempt_at", "last_status_code", "last_error",
                    "claimed_by", "claimed_until", "next_attempt_at")


def next_delivery_state(
    state: dict[str, Any], outcome: AttemptOutcome, *, error: str | None, settings: Settings, now: datetime
) -> tuple[dict[str, Any] | None, str | None]:
    """Decide what one attempt does to its delivery (pure): ``(new state, verdict)``.

    ``state`` holds the delivery's :data:`_STATE_COLUMNS`; the new state adds the columns
    :func:`record_attempts` writes.  The verdict is ``succeeded``, ``retried`` or ``failed``; ``(None,
    None)`` means the attempt is only logged: the delivery was settled already, or another worker took
    it over after this worker's lease lapsed and the attempt failed (a success still settles it).
    """
    if state["status"] != "pending":
        return None, None
    claimed_until = as_utc(state["claimed_until"])
    taken_over = state["claimed_by"] not in (None, outcome.worker_id) and (claimed_until or now) > now
    if taken_over and not outcome.succeeded:
        return None, None
    new = {**state, "attempts": state["attempts"] + 1, "last_attempt_at": outcome.attempted_at,
           "last_status_code": outcome.status_code, "last_error": error}
    if not taken_over:
        new.update(claimed_until=None, claimed_by=None)
    if outcome.succeeded:
        return {**new, "status": "succeeded", "next_attempt_at": None}, "succeeded"
    if outcome.status_code == 410:
        return {**new, "status": "failed", "next_attempt_at": None}, "failed"
    retry_after = None
    if outcome.retry_after_s is not None and outcome.status_code in RETRY_AFTER_STATUSES:
        retry_after = min(outcome.retry_after_s, float(settings.webhook_disable_after_s))
    delay = retry_delay_s(new["attempts"], settings.retry_schedule_s, retry_after)
    if delay is None:
        return {**new, "status": "failed", "next_attempt_at": None}, "failed"
    return {**new, "next_attempt_at": now + timedelta(seconds=delay)}, "retried"


def disable_reason(
    endpoint: Endpoint, outcome: AttemptOutcome, error: str | None, settings: Settings
) -> str | None:
    """Why a failed attempt disables ``endpoint`` (410, or failures for ``webhook_disable_after_s``), or None.

    Updates ``endpoint.failing_since`` to the first failure since the last success.
    """
    endpoint.failing_since = as_utc(endpoint.failing_since) or outcome.attempted_at
    if outcome.status_code == 410:
        return f"receiver answered 410 Gone at {rfc3339(outcome.attempted_at)}"
    if outcome.attempted_at - endpoint.failing_since >= timedelta(seconds=settings.webhook_disable_after_s):
        return (
            f"every attempt failed since {rfc3339(endpoint.failing_since)} "
            f"(more than {settings.webhook_disable_after_s / 86400:g} days); last error: {error}"
        )
    return None


def _attempt_row(outcome: AttemptOutcome, error: str | None) -> dict[str, Any]:
    return {
        "delivery_id": outcome.delivery_id,
        "attempted_at": outcome.attempted_at,
        "status_code": outcome.status_code,
        "latency_ms": round(outcome.latency_ms, 3),
        "error": error,
        "response_excerpt": (outcome.response_excerpt or "")[:RESPONSE_EXCERPT_CHARS] or None,
    }


def record_attempts(
    *, session: Session, outcomes: Sequence[AttemptOutcome], settings: Settings, now: datetime | None = None
) -> RecordResult:
    """Log each attempt and move its delivery on (succeeded, next retry, failed); disable endpoints.

    An outcome for a delivery that is gone (endpoint deleted) is dropped; see
    :func:`next_delivery_state` for one that is only logged.  Retry-After is capped at
    ``webhook_disable_after_s``.  Returns the counts and the ids of endpoints disabled.
    """
    now = now or utcnow()
    result = RecordResult()
    if not outcomes:
        return result
    # Plain rows and one bulk UPDATE: this runs every dispatcher round.
    columns = [getattr(Delivery, c) for c in _STATE_COLUMNS]
    ids = {o.delivery_id for o in outcomes}
    states = {r.id: dict(r._mapping) for r in session.execute(select(*columns).where(Delivery.id.in_(ids)))}
    failing = {o.endpoint_id for o in outcomes if not o.succeeded}
    endpoints = {e.id: e for e in session.scalars(select(Endpoint).where(Endpoint.id.in_(failing)))}
    recovered: set[str] = set()
    attempt_rows: list[dict[str, Any]] = []
    for o in sorted(outcomes, key=lambda o: o.attempted_at):
        if o.delivery_id not in states:
            continue
        error = None if o.succeeded else describe_failure(o)
        attempt_rows.append(_attempt_row(o, error))
        new, verdict = next_delivery_state(states[o.delivery_id], o, error=error, settings=settings, now=now)
        if new is None:
            continue
        states[o.delivery_id] = new
        setattr(result, verdict, getattr(result, verdict) + 1)
        endpoint = endpoints.get(o.endpoint_id)
        if o.succeeded:
            if endpoint is not None:
                endpoint.failing_since = None
            else:
                recovered.add(o.endpoint_id)
        elif endpoint is not None and endpoint.enabled:
            _disable_if_due(endpoint, o, error, settings, result)
        if verdict == "failed" and o.status_code != 410:
            log.info("delivery failed after %d attempts", new["attempts"],
                     extra={"delivery_id": o.delivery_id, "webhook_id": o.endpoint_id})
    changed = [{k: s.get(k) for k in _WRITTEN_COLUMNS} for s in states.values() if "last_attempt_at" in s]
    _write_outcomes(session, changed, recovered, attempt_rows)
    return result


def _disable_if_due(
    endpoint: Endpoint, outcome: AttemptOutcome, error: str | None, settings: Settings, result: RecordResult
) -> None:
    reason = disable_reason(endpoint, outcome, error, settings)
    if reason is not None:
        endpoint.enabled = False
        endpoint.disabled_reason = reason
        result.disabled.append(endpoint.id)
        log.warning("webhook endpoint disabled: %s", reason, extra={"webhook_id": endpoint.id})


def _write_outcomes(
    session: Session, changed: list[dict[str, Any]], recovered: set[str], attempt_rows: list[dict[str, Any]]
) -> None:
    if changed:
        # Every dict has the same keys, so this is one executemany.
        session.execute(update(Delivery), changed)
    if recovered:
        session.execute(
            update(Endpoint)
            .where(Endpoint.id.in_(recovered), Endpoint.failing_since.is_not(None))
            .values(failing_since=None)
            .execution_options(synchronize_session=False)
        )
    if attempt_rows:
        session.execute(insert(DeliveryAttempt), attempt_rows)
    session.flush()
