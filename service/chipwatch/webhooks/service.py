"""Webhook subscriptions, outbox fan-out, delivery claims, attempt outcomes and event payload builders.

Every function that touches the database takes a keyword-only ``session`` and never commits: the edge
(request dependency, dispatcher round, job) owns the transaction.  The delivery rules implemented here
come from ``DESIGN.md`` (Webhooks) and the Standard Webhooks specification:

* 2xx is success; anything else, including 3xx (redirects are never followed), is a failed attempt;
* 410 Gone disables the endpoint and says so in ``disabled_reason``;
* 429 and 503 with ``Retry-After`` push the next attempt at least that far out;
* other failures wait ``settings.retry_schedule_s[n]`` seconds before attempt ``n + 1``; when the
  schedule runs out the delivery is ``failed``;
* an endpoint whose attempts have all failed for ``settings.webhook_disable_after_s`` is disabled.
"""

from __future__ import annotations

import logging
import secrets as _secrets
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import and_, delete, func, insert, or_, select, update
from sqlmodel import Session

from chipwatch.config import Settings
from chipwatch.db import is_postgres
from chipwatch.netguard import BlockedAddressError, HostResolutionError, check_url, split_url
from chipwatch.outbox.emit import emit
from chipwatch.outbox.models import EVENT_TYPES, Event
from chipwatch.webhooks import signing
from chipwatch.webhooks.models import Delivery, DeliveryAttempt, Webhook
from chipwatch.webhooks.schemas import DEFAULT_EVENT_TYPES, WebhookCreate, WebhookUpdate

log = logging.getLogger(__name__)

SECRET_OVERLAP = timedelta(hours=24)
"""How long the secret replaced by a rotation keeps signing (receivers roll over within it)."""
RESPONSE_EXCERPT_CHARS = 1000
FAN_OUT_BATCH = 200
TEST_EVENT = "webhook.test"


# ---------------------------------------------------------------- errors
class WebhookNotFound(LookupError):
    """No webhook with this id."""

    def __init__(self, webhook_id: str) -> None:
        super().__init__(webhook_id)
        self.webhook_id = webhook_id


class DeliveryNotFound(LookupError):
    """No delivery with this id for this webhook."""

    def __init__(self, delivery_id: int) -> None:
        super().__init__(str(delivery_id))
        self.delivery_id = delivery_id


class InvalidWebhook(ValueError):
    """A subscription field is refused; ``field`` names it, the message says why."""

    def __init__(self, field_: str, message: str) -> None:
        super().__init__(f"{field_}: {message}")
        self.field, self.message = field_, message


class DeliveryConflict(Exception):
    """The request does not fit the current state (endpoint disabled, attempt in flight)."""


# ---------------------------------------------------------------- small helpers
def utcnow() -> datetime:
    """Timezone-aware now in UTC."""
    return datetime.now(UTC)


def as_utc(value: datetime | None) -> datetime | None:
    """``value`` as an aware UTC datetime; naive values (SQLite hands those back) are taken as UTC."""
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _iso(value: datetime | date | None) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return signing.isoformat_z(value)
    return value.isoformat()


def new_webhook_id() -> str:
    """``wh_`` + 12 hex digits of milliseconds since the epoch + 8 random hex digits (sorts by creation)."""
    return f"wh_{int(time.time() * 1000):012x}{_secrets.token_hex(4)}"


# ---------------------------------------------------------------- subscriptions
def validate_target(url: str, *, allow_private: bool) -> str:
    """The stripped URL when it may receive deliveries; raises :class:`InvalidWebhook` (field ``url``).

    The SSRF rule (``chipwatch.netguard``): http/https only, and unless ``allow_private`` every address
    the host resolves to must be public.  A host that does not resolve is refused too.
    """
    url = url.strip()
    try:
        split_url(url)
        check_url(url, allow_private=allow_private)
    except BlockedAddressError as exc:
        raise InvalidWebhook("url", str(exc)) from exc
    except HostResolutionError as exc:
        raise InvalidWebhook("url", str(exc)) from exc
    return url


def _event_types(values: Iterable[str] | None) -> list[str]:
    if values is None:
        return list(DEFAULT_EVENT_TYPES)
    out: list[str] = []
    for v in values:
        if v not in EVENT_TYPES:
            raise InvalidWebhook(
                "event_types", f"unknown event type {v!r}; expected one of {list(EVENT_TYPES)}"
            )
        if v not in out:
            out.append(v)
    if not out:
        raise InvalidWebhook("event_types", "name at least one event type")
    return out


def _signal_ids(session: Session, values: Iterable[str]) -> list[str]:
    from chipwatch.signals.models import Signal

    ids = list(dict.fromkeys(v.strip() for v in values))
    if not ids:
        return []
    known = set(session.scalars(select(Signal.id).where(Signal.id.in_(ids))).all())
    missing = [i for i in ids if i not in known]
    if missing:
        raise InvalidWebhook("signal_ids", f"unknown signal id(s): {', '.join(missing)}")
    return ids


def create_webhook(*, session: Session, webhook_in: WebhookCreate, allow_private: bool) -> Webhook:
    """Add a subscription with a new ``whsec_`` secret and return it (flushed).

    Raises :class:`InvalidWebhook` for a refused URL (SSRF rule, unresolvable host), an unknown event
    type or an unknown signal id.
    """
    row = Webhook(
        id=new_webhook_id(),
        url=validate_target(webhook_in.url, allow_private=allow_private),
        description=webhook_in.description,
        event_types=_event_types(webhook_in.event_types),
        signal_ids=_signal_ids(session, webhook_in.signal_ids),
        secret=signing.new_secret(),
    )
    session.add(row)
    session.flush()
    log.info("webhook created", extra={"webhook_id": row.id})
    return row


def get_webhook(*, session: Session, webhook_id: str) -> Webhook:
    """The webhook ``webhook_id``; raises :class:`WebhookNotFound`."""
    row = session.get(Webhook, webhook_id)
    if row is None:
        raise WebhookNotFound(webhook_id)
    return row


def list_webhooks(*, session: Session, limit: int, after_id: str | None) -> tuple[list[Webhook], str | None]:
    """A page of webhooks in creation order and the id to continue after (None on the last page)."""
    stmt = select(Webhook).order_by(Webhook.id).limit(limit + 1)
    if after_id is not None:
        stmt = stmt.where(Webhook.id > str(after_id))
    rows = list(session.scalars(stmt).all())
    more = len(rows) > limit
    rows = rows[:limit]
    return rows, (rows[-1].id if more and rows else None)


def update_webhook(
    *, session: Session, webhook_id: str, webhook_in: WebhookUpdate, allow_private: bool
) -> Webhook:
    """Apply the fields set in ``webhook_in``; re-enabling clears ``disabled_reason`` and ``failing_since``.

    Raises :class:`WebhookNotFound` or :class:`InvalidWebhook`.
    """
    row = get_webhook(session=session, webhook_id=webhook_id)
    changes = webhook_in.model_dump(exclude_unset=True)
    if "url" in changes and changes["url"] is not None:
        row.url = validate_target(changes["url"], allow_private=allow_private)
    if "description" in changes:
        row.description = changes["description"]
    if changes.get("event_types") is not None:
        row.event_types = _event_types(changes["event_types"])
    if changes.get("signal_ids") is not None:
        row.signal_ids = _signal_ids(session, changes["signal_ids"])
    if changes.get("enabled") is not None:
        if changes["enabled"] and not row.enabled:
            row.disabled_reason = None
            row.failing_since = None
        elif not changes["enabled"] and row.enabled:
            row.disabled_reason = "disabled by an administrator"
        row.enabled = changes["enabled"]
    session.add(row)
    session.flush()
    return row


def delete_webhook(*, session: Session, webhook_id: str) -> None:
    """Remove the webhook with its deliveries and their attempt log; raises :class:`WebhookNotFound`."""
    get_webhook(session=session, webhook_id=webhook_id)
    delivery_ids = select(Delivery.id).where(Delivery.webhook_id == webhook_id)
    session.execute(delete(DeliveryAttempt).where(DeliveryAttempt.delivery_id.in_(delivery_ids)))
    session.execute(delete(Delivery).where(Delivery.webhook_id == webhook_id))
    session.execute(delete(Webhook).where(Webhook.id == webhook_id))
    session.expire_all()


def rotate_secret(*, session: Session, webhook_id: str, now: datetime | None = None) -> Webhook:
    """Replace the secret; the old one keeps signing for :data:`SECRET_OVERLAP` (24 h).

    During the overlap every delivery carries two signatures in ``webhook-signature`` (new first), so a
    receiver verifies with either secret.  Rotating again within the overlap drops the oldest secret.
    Raises :class:`WebhookNotFound`.
    """
    now = now or utcnow()
    row = get_webhook(session=session, webhook_id=webhook_id)
    row.previous_secret = row.secret
    row.previous_secret_expires_at = now + SECRET_OVERLAP
    row.secret = signing.new_secret()
    session.add(row)
    session.flush()
    log.info("webhook secret rotated", extra={"webhook_id": row.id})
    return row


def signing_secrets(webhook: Any, now: datetime | None = None) -> list[str]:
    """Secrets that sign a delivery now: the current one, then the previous one while it is unexpired."""
    now = now or utcnow()
    out = [webhook.secret]
    expires = as_utc(webhook.previous_secret_expires_at)
    if webhook.previous_secret and expires is not None and expires > now:
        out.append(webhook.previous_secret)
    return out


def queue_test_delivery(*, session: Session, webhook_id: str, message: str) -> tuple[Delivery, Event]:
    """Emit a ``webhook.test`` event for this endpoint only and queue its delivery; returns both rows.

    The event is written already fanned out (with its one delivery row) so no other endpoint receives
    it.  Raises :class:`WebhookNotFound`, or :class:`DeliveryConflict` when the endpoint is disabled.
    """
    hook = get_webhook(session=session, webhook_id=webhook_id)
    if not hook.enabled:
        raise DeliveryConflict(f"webhook {webhook_id} is disabled ({hook.disabled_reason}); enable it first")
    event = emit(session, TEST_EVENT, webhook_test_data(webhook_id=hook.id, message=message))
    event.dispatched = True
    delivery = Delivery(webhook_id=hook.id, event_id=event.id, next_attempt_at=utcnow())
    session.add_all([event, delivery])
    session.flush()
    return delivery, event


def _delivery_views(session: Session, rows: Sequence[Any]) -> list[dict[str, Any]]:
    """``(Delivery, msg_id, event_type)`` rows as ``schemas.DeliveryPublic`` dicts with their attempt logs."""
    ids = [d.id for d, _m, _t in rows]
    log_by_delivery: dict[int, list[dict[str, Any]]] = {i: [] for i in ids}
    if ids:
        attempts = session.scalars(
            select(DeliveryAttempt).where(DeliveryAttempt.delivery_id.in_(ids)).order_by(DeliveryAttempt.id)
        ).all()
        for a in attempts:
            log_by_delivery[a.delivery_id].append(
                {
                    "id": a.id,
                    "attempted_at": as_utc(a.attempted_at),
                    "status_code": a.status_code,
                    "latency_ms": a.latency_ms,
                    "error": a.error,
                }
            )
    return [
        {
            "id": d.id,
            "webhook_id": d.webhook_id,
            "event_id": d.event_id,
            "msg_id": msg_id,
            "event_type": type_,
            "status": d.status,
            "attempts": d.attempts,
            "next_attempt_at": as_utc(d.next_attempt_at),
            "last_attempt_at": as_utc(d.last_attempt_at),
            "last_status_code": d.last_status_code,
            "last_error": d.last_error,
            "created_at": as_utc(d.created_at),
            "attempt_log": log_by_delivery[d.id],
        }
        for d, msg_id, type_ in rows
    ]


def _deliveries_query(webhook_id: str):
    return (
        select(Delivery, Event.msg_id, Event.type)
        .join(Event, Event.id == Delivery.event_id)
        .where(Delivery.webhook_id == webhook_id)
    )


def list_deliveries(
    *,
    session: Session,
    webhook_id: str,
    status: str | None,
    limit: int,
    before_id: int | None,
) -> tuple[list[dict[str, Any]], int | None]:
    """A page of deliveries, newest first, each with its attempt log (oldest first).

    Returns ``(items, next_before_id)``; items have the shape of ``schemas.DeliveryPublic``.
    Raises :class:`WebhookNotFound`.
    """
    get_webhook(session=session, webhook_id=webhook_id)
    stmt = _deliveries_query(webhook_id).order_by(Delivery.id.desc()).limit(limit + 1)
    if status:
        stmt = stmt.where(Delivery.status == status)
    if before_id is not None:
        stmt = stmt.where(Delivery.id < int(before_id))
    rows = session.execute(stmt).all()
    more = len(rows) > limit
    rows = rows[:limit]
    return _delivery_views(session, rows), (rows[-1][0].id if more and rows else None)


def get_delivery(*, session: Session, webhook_id: str, delivery_id: int) -> dict[str, Any]:
    """One delivery with its attempt log (``schemas.DeliveryPublic`` shape).

    Raises :class:`WebhookNotFound` or :class:`DeliveryNotFound`.
    """
    get_webhook(session=session, webhook_id=webhook_id)
    rows = session.execute(_deliveries_query(webhook_id).where(Delivery.id == delivery_id)).all()
    if not rows:
        raise DeliveryNotFound(delivery_id)
    return _delivery_views(session, rows)[0]


def retry_delivery(
    *, session: Session, webhook_id: str, delivery_id: int, now: datetime | None = None
) -> Delivery:
    """Queue the delivery for an attempt now (a replay when it already succeeded or failed).

    The attempt count carries on: a replay of a delivery whose schedule has run out gets one attempt.
    Raises :class:`WebhookNotFound`, :class:`DeliveryNotFound`, or :class:`DeliveryConflict` when the
    endpoint is disabled or an attempt of this delivery is in flight.
    """
    now = now or utcnow()
    hook = get_webhook(session=session, webhook_id=webhook_id)
    delivery = session.get(Delivery, delivery_id)
    if delivery is None or delivery.webhook_id != webhook_id:
        raise DeliveryNotFound(delivery_id)
    if not hook.enabled:
        raise DeliveryConflict(f"webhook {webhook_id} is disabled ({hook.disabled_reason}); enable it first")
    claimed_until = as_utc(delivery.claimed_until)
    if delivery.status == "pending" and claimed_until is not None and claimed_until > now:
        raise DeliveryConflict(f"delivery {delivery_id} has an attempt in flight; retry after it ends")
    delivery.status = "pending"
    delivery.next_attempt_at = now
    delivery.claimed_until = None
    delivery.claimed_by = None
    session.add(delivery)
    session.flush()
    return delivery


# ---------------------------------------------------------------- fan-out
def _subscribed(hook: Webhook, event: Event) -> bool:
    if event.type == TEST_EVENT:
        return (event.data or {}).get("webhook_id") == hook.id
    if event.type not in (hook.event_types or ()):
        return False
    # The signal filter narrows signal.* events only; source events carry no signal id.
    if hook.signal_ids and event.type.startswith("signal.") and event.signal_id not in hook.signal_ids:
        return False
    # A subscriber receives changes from the moment it subscribed, not the backlog before it.
    return as_utc(hook.created_at) <= as_utc(event.created_at)


@dataclass
class FanOutResult:
    """What one fan-out did: events marked dispatched, delivery rows created, events still waiting."""

    events: int = 0
    deliveries: int = 0
    more: bool = False


def fan_out(*, session: Session, max_events: int = 1000, now: datetime | None = None) -> FanOutResult:
    """Turn undispatched outbox events into one ``pending`` delivery per subscribed, enabled endpoint.

    Processes at most ``max_events`` events (oldest first) and marks them dispatched in the same
    transaction, so a crash either keeps both or neither.  On PostgreSQL the events are locked with
    ``FOR UPDATE SKIP LOCKED`` so concurrent workers never fan out the same event.
    """
    now = now or utcnow()
    result = FanOutResult()
    postgres = is_postgres(session.get_bind())
    hooks: list[Webhook] | None = None
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
        if hooks is None:
            hooks = list(
                session.scalars(
                    select(Webhook).where(Webhook.enabled.is_(True)).order_by(Webhook.created_at, Webhook.id)
                ).all()
            )
        rows = [
            {"webhook_id": h.id, "event_id": e.id, "status": "pending", "attempts": 0,
             "next_attempt_at": now, "created_at": now}
            for e in events
            for h in hooks
            if _subscribed(h, e)
        ]
        if rows:
            session.execute(insert(Delivery), rows)
        session.execute(update(Event).where(Event.id.in_([e.id for e in events])).values(dispatched=True))
        result.events += len(events)
        result.deliveries += len(rows)
    result.more = True
    return result


# ---------------------------------------------------------------- claims
@dataclass(frozen=True)
class ClaimedDelivery:
    """Everything needed to send one attempt without a database session (plain values only)."""

    delivery_id: int
    webhook_id: str
    url: str
    secrets: tuple[str, ...]
    event_id: int
    msg_id: str
    event_type: str
    occurred_at: datetime
    data: dict[str, Any]
    attempts: int
    worker_id: str


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
    lapsed (the holder died or hung).  At most ``per_endpoint_limit - in_flight[webhook_id]`` are taken
    per endpoint, so every claimed delivery can be sent at once and a slow endpoint's backlog never
    fills the batch.  PostgreSQL locks the rows with ``FOR UPDATE SKIP LOCKED``; SQLite relies on the
    write lock taken at BEGIN plus an UPDATE guarded by the same conditions.
    """
    now = now or utcnow()
    in_flight = in_flight or {}
    if limit <= 0:
        return []
    free = {w: per_endpoint_limit - n for w, n in in_flight.items()}
    saturated = [w for w, n in free.items() if n <= 0]
    lapsed = or_(Delivery.claimed_until.is_(None), Delivery.claimed_until < now)
    due = and_(Delivery.status == "pending", Delivery.next_attempt_at <= now, lapsed)

    def pick(candidates: Sequence[Any], room_left: dict[str, int]) -> list[int]:
        picked: list[int] = []
        for delivery_id, webhook_id in candidates:
            room = room_left.get(webhook_id, per_endpoint_limit)
            if room <= 0:
                continue
            room_left[webhook_id] = room - 1
            picked.append(delivery_id)
            if len(picked) >= limit:
                break
        return picked

    base = select(Delivery.id, Delivery.webhook_id).join(Webhook, Webhook.id == Delivery.webhook_id)
    base = base.where(due, Webhook.enabled.is_(True))
    if saturated:
        base = base.where(Delivery.webhook_id.not_in(saturated))
    # Fast path: the oldest due rows straight from the (status, next_attempt_at) index.  It is enough
    # unless a few endpoints' backlogs fill the scan; then rank per endpoint so each gets its share.
    scan = 2 * limit + per_endpoint_limit
    candidates = session.execute(base.order_by(Delivery.next_attempt_at, Delivery.id).limit(scan)).all()
    chosen = pick(candidates, dict(free))
    if len(chosen) < limit and len(candidates) == scan:
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
        chosen = pick(candidates, dict(free))
    if not chosen:
        return []
    lease_until = now + timedelta(seconds=lease_s)
    if is_postgres(session.get_bind()):
        chosen = list(
            session.scalars(
                select(Delivery.id).where(Delivery.id.in_(chosen), due).with_for_update(skip_locked=True)
            ).all()
        )
        if not chosen:
            return []
    session.execute(
        update(Delivery)
        .where(Delivery.id.in_(chosen), due)
        .values(claimed_until=lease_until, claimed_by=worker_id)
        .execution_options(synchronize_session=False)
    )
    # Plain columns, not ORM objects: this runs every round and only values leave the transaction.
    rows = session.execute(
        select(
            Delivery.id.label("delivery_id"),
            Delivery.attempts,
            Webhook.id.label("webhook_id"),
            Webhook.url,
            Webhook.secret,
            Webhook.previous_secret,
            Webhook.previous_secret_expires_at,
            Event.id.label("event_id"),
            Event.msg_id,
            Event.type,
            Event.created_at,
            Event.data,
        )
        .join(Webhook, Webhook.id == Delivery.webhook_id)
        .join(Event, Event.id == Delivery.event_id)
        .where(Delivery.id.in_(chosen))
        .where(Delivery.claimed_by == worker_id, Delivery.claimed_until == lease_until)
        .order_by(Delivery.next_attempt_at, Delivery.id)
    ).all()
    return [
        ClaimedDelivery(
            delivery_id=r.delivery_id,
            webhook_id=r.webhook_id,
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
    result = session.execute(
        update(Delivery)
        .where(Delivery.id.in_(list(delivery_ids)), Delivery.claimed_by == worker_id)
        .values(claimed_until=None, claimed_by=None)
        .execution_options(synchronize_session=False)
    )
    return result.rowcount or 0


def next_due_at(*, session: Session, now: datetime | None = None) -> datetime | None:
    """When the next delivery becomes claimable (``now`` if outbox events await fan-out), or None."""
    now = now or utcnow()
    if session.scalar(select(Event.id).where(Event.dispatched.is_(False)).limit(1)) is not None:
        return now
    pending = and_(Delivery.status == "pending", Webhook.enabled.is_(True))
    unclaimed = session.scalar(
        select(func.min(Delivery.next_attempt_at))
        .join(Webhook, Webhook.id == Delivery.webhook_id)
        .where(pending, or_(Delivery.claimed_until.is_(None), Delivery.claimed_until < now))
    )
    # A claim whose holder died becomes claimable when its lease ends.
    lease_ends = session.scalar(
        select(func.min(Delivery.claimed_until))
        .join(Webhook, Webhook.id == Delivery.webhook_id)
        .where(pending, Delivery.claimed_until >= now)
    )
    times = [as_utc(t) for t in (unclaimed, lease_ends) if t is not None]
    return min(times) if times else None


# ---------------------------------------------------------------- attempt outcomes
@dataclass
class AttemptOutcome:
    """What one HTTP attempt produced; ``status_code`` is None when no answer came (``error`` says why)."""

    delivery_id: int
    webhook_id: str
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


def record_attempts(
    *, session: Session, outcomes: Sequence[AttemptOutcome], settings: Settings, now: datetime | None = None
) -> RecordResult:
    """Log each attempt and move its delivery on (succeeded, next retry, failed); disable endpoints.

    An outcome for a delivery that is gone (webhook deleted) is dropped; one for a delivery already
    settled, or re-claimed by another worker after this worker's lease lapsed, is only logged, except
    that a success still settles it.  Retry-After is capped at ``webhook_disable_after_s``.
    """
    now = now or utcnow()
    result = RecordResult()
    if not outcomes:
        return result
    schedule = settings.retry_schedule_s
    # Plain rows and one bulk UPDATE: this runs every dispatcher round.
    columns = (Delivery.id, Delivery.status, Delivery.attempts, Delivery.claimed_by, Delivery.claimed_until)
    ids = {o.delivery_id for o in outcomes}
    current = {r.id: r for r in session.execute(select(*columns).where(Delivery.id.in_(ids))).all()}
    failing_hooks = {o.webhook_id for o in outcomes if not o.succeeded}
    hooks = {
        w.id: w for w in session.scalars(select(Webhook).where(Webhook.id.in_(failing_hooks))).all()
    } if failing_hooks else {}
    recovered: set[str] = set()
    disable_after = timedelta(seconds=settings.webhook_disable_after_s)
    attempt_rows: list[dict[str, Any]] = []
    updates: dict[int, dict[str, Any]] = {}
    for o in sorted(outcomes, key=lambda o: o.attempted_at):
        row = current.get(o.delivery_id)
        if row is None:
            continue
        error = None if o.succeeded else describe_failure(o)
        attempt_rows.append(
            {
                "delivery_id": o.delivery_id,
                "attempted_at": o.attempted_at,
                "status_code": o.status_code,
                "latency_ms": round(o.latency_ms, 3),
                "error": error,
                "response_excerpt": (o.response_excerpt or "")[:RESPONSE_EXCERPT_CHARS] or None,
            }
        )
        state = updates.get(o.delivery_id) or {
            "id": row.id, "status": row.status, "attempts": row.attempts, "claimed_by": row.claimed_by,
            "claimed_until": row.claimed_until,
        }
        if state["status"] != "pending":
            continue
        claimed_until = as_utc(state["claimed_until"])
        # The lease lapsed and another worker holds the delivery now: it decides the next step.
        taken_over = state["claimed_by"] not in (None, o.worker_id) and (claimed_until or now) > now
        if taken_over and not o.succeeded:
            continue
        state.update(attempts=state["attempts"] + 1, last_attempt_at=o.attempted_at,
                     last_status_code=o.status_code, last_error=error)
        if not taken_over:
            state.update(claimed_until=None, claimed_by=None)
        updates[o.delivery_id] = state
        hook = hooks.get(o.webhook_id)
        if o.succeeded:
            state.update(status="succeeded", next_attempt_at=None)
            result.succeeded += 1
            if hook is not None:
                hook.failing_since = None
            else:
                recovered.add(o.webhook_id)
            continue
        if hook is not None and hook.enabled:
            hook.failing_since = as_utc(hook.failing_since) or o.attempted_at
            reason = None
            if o.status_code == 410:
                reason = f"receiver answered 410 Gone at {signing.isoformat_z(o.attempted_at)}"
            elif o.attempted_at - hook.failing_since >= disable_after:
                reason = (
                    f"every attempt failed since {signing.isoformat_z(hook.failing_since)} "
                    f"(more than {settings.webhook_disable_after_s / 86400:g} days); last error: {error}"
                )
            if reason is not None:
                hook.enabled = False
                hook.disabled_reason = reason
                result.disabled.append(hook.id)
                log.warning("webhook disabled: %s", reason, extra={"webhook_id": hook.id})
        if o.status_code == 410:
            state.update(status="failed", next_attempt_at=None)
            result.failed += 1
            continue
        retry_after = None
        if o.retry_after_s is not None and o.status_code in (429, 503):
            retry_after = min(o.retry_after_s, float(settings.webhook_disable_after_s))
        delay = retry_delay_s(state["attempts"], schedule, retry_after)
        if delay is None:
            state.update(status="failed", next_attempt_at=None)
            result.failed += 1
            log.info("delivery failed after %d attempts", state["attempts"],
                     extra={"delivery_id": o.delivery_id, "webhook_id": o.webhook_id})
        else:
            state["next_attempt_at"] = now + timedelta(seconds=delay)
            result.retried += 1
    if updates:
        # Every dict has the same keys, so this is one executemany.
        keys = ("id", "status", "attempts", "last_attempt_at", "last_status_code", "last_error",
                "claimed_by", "claimed_until", "next_attempt_at")
        session.execute(update(Delivery), [{k: u.get(k) for k in keys} for u in updates.values()])
    if recovered:
        session.execute(
            update(Webhook)
            .where(Webhook.id.in_(recovered), Webhook.failing_since.is_not(None))
            .values(failing_since=None)
            .execution_options(synchronize_session=False)
        )
    if attempt_rows:
        session.execute(insert(DeliveryAttempt), attempt_rows)
    session.flush()
    return result


# ---------------------------------------------------------------- event payloads
# Producers build ``data`` with these functions so payloads match schema/events/<type>.schema.json.
# They read attributes only (duck typing), so they work on table rows and on plain objects alike.
def evidence_data(evidence: Any) -> dict[str, Any]:
    """One evidence row as it appears in event payloads (``schema/events/*``: ``$defs/evidence``)."""
    return {
        "id": evidence.id,
        "ref_kind": evidence.ref_kind,
        "ref_id": str(evidence.ref_id),
        "side": evidence.side,
        "condition_index": evidence.condition_index,
        "reason": evidence.reason,
        "trust": evidence.trust,
        "source_id": evidence.source_id,
        "title": evidence.title,
        "url": evidence.url,
        "published_at": _iso(evidence.published_at),
        "recorded_at": _iso(evidence.recorded_at),
    }


def status_changed_data(signal: Any, history: Any, evidence_rows: Iterable[Any]) -> dict[str, Any]:
    """``data`` of ``signal.status_changed`` for the transition recorded in ``history``.

    ``signal`` is the Signal after the transition, ``history`` its new SignalHistory row and
    ``evidence_rows`` the deciding Evidence rows (those named in ``history.evidence_ids``).  Receivers
    order changes of one signal by ``version``.
    """
    to_status = history.to_status
    return {
        "signal_id": history.signal_id,
        "question": signal.question,
        "version": history.version,
        "previous": {"status": history.from_status, "outcome": history.from_outcome},
        "current": {"status": to_status, "outcome": history.to_outcome},
        "cause": history.cause,
        "note": history.note,
        "changed_at": _iso(history.at),
        "known_at": _iso(history.known_at),
        "resolved_at": _iso(signal.resolved_at) if to_status == "resolved" else None,
        "evidence": [evidence_data(e) for e in evidence_rows],
    }


def evidence_added_data(signal: Any, evidence: Any) -> dict[str, Any]:
    """``data`` of ``signal.evidence_added``: the new evidence and the signal's state when it arrived."""
    return {
        "signal_id": signal.id,
        "question": signal.question,
        "status": signal.status,
        "outcome": signal.outcome,
        "version": signal.version,
        "evidence": evidence_data(evidence),
    }


def deadline_approaching_data(signal: Any, *, today: date) -> dict[str, Any]:
    """``data`` of ``signal.deadline_approaching``: the deadline and whole days left from ``today``."""
    return {
        "signal_id": signal.id,
        "question": signal.question,
        "deadline": signal.deadline.isoformat(),
        "days_left": (signal.deadline - today).days,
        "on_deadline": signal.on_deadline,
        "version": signal.version,
    }


def source_health_changed_data(source: Any, *, healthy: bool) -> dict[str, Any]:
    """``data`` of ``source.health_changed`` after a check moved ``source`` between healthy and failing."""
    return {
        "source_id": source.id,
        "name": getattr(source, "name", None),
        "healthy": bool(healthy),
        "last_error": source.last_error,
        "consecutive_failures": int(source.consecutive_failures or 0),
        "last_checked_at": _iso(getattr(source, "last_checked_at", None)),
    }


def webhook_test_data(*, webhook_id: str, message: str) -> dict[str, Any]:
    """``data`` of ``webhook.test``."""
    return {"webhook_id": webhook_id, "message": message}
