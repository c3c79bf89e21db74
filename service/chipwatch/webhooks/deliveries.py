"""The delivery log as the API shows it: an endpoint's deliveries with their attempts, and manual retries.

Every function takes a keyword-only ``session`` and never commits.  Items have the shape of
``schemas.DeliveryPublic``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlmodel import Session

from chipwatch.kit.errors import Conflict, NotFound
from chipwatch.kit.pagination import keyset_page
from chipwatch.kit.time import as_utc, utcnow
from chipwatch.outbox.models import Event
from chipwatch.webhooks.endpoints import disabled_conflict, get_endpoint
from chipwatch.webhooks.models import Delivery, DeliveryAttempt


def _attempt_logs(session: Session, delivery_ids: Sequence[int]) -> dict[int, list[dict[str, Any]]]:
    logs: dict[int, list[dict[str, Any]]] = {i: [] for i in delivery_ids}
    if not delivery_ids:
        return logs
    attempts = session.scalars(
        select(DeliveryAttempt)
        .where(DeliveryAttempt.delivery_id.in_(list(delivery_ids)))
        .order_by(DeliveryAttempt.id)
    )
    for a in attempts:
        logs[a.delivery_id].append(
            {
                "id": a.id,
                "attempted_at": as_utc(a.attempted_at),
                "status_code": a.status_code,
                "latency_ms": a.latency_ms,
                "error": a.error,
            }
        )
    return logs


def _views(session: Session, rows: Sequence[Any]) -> list[dict[str, Any]]:
    """``(Delivery, msg_id, event_type)`` rows as ``DeliveryPublic`` dicts with their attempt logs."""
    logs = _attempt_logs(session, [d.id for d, _m, _t in rows])
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
            "attempt_log": logs[d.id],
        }
        for d, msg_id, type_ in rows
    ]


def _with_event(endpoint_id: str):
    return (
        select(Delivery, Event.msg_id, Event.type)
        .join(Event, Event.id == Delivery.event_id)
        .where(Delivery.webhook_id == endpoint_id)
    )


def list_deliveries(
    *, session: Session, endpoint_id: str, status: str | None, cursor: str | None, limit: int
) -> tuple[list[dict[str, Any]], str | None]:
    """A page of the endpoint's deliveries, newest first, each with its attempt log (oldest first).

    Returns ``(items, next_cursor)``.  Raises a 404 for an unknown endpoint, a 422 for a bad cursor.
    """
    get_endpoint(session=session, endpoint_id=endpoint_id)
    stmt = _with_event(endpoint_id)
    if status:
        stmt = stmt.where(Delivery.status == status)
    rows, next_cursor = keyset_page(
        session, stmt, keys=(Delivery.id,), cursor=cursor, limit=limit, descending=True,
        row_key=lambda row: (row[0].id,),
    )
    return _views(session, rows), next_cursor


def get_delivery(*, session: Session, endpoint_id: str, delivery_id: int) -> dict[str, Any]:
    """One delivery with its attempt log; raises a 404 for an unknown endpoint or delivery."""
    get_endpoint(session=session, endpoint_id=endpoint_id)
    rows = session.execute(_with_event(endpoint_id).where(Delivery.id == delivery_id)).all()
    if not rows:
        raise NotFound("delivery", str(delivery_id))
    return _views(session, rows)[0]


def retry_delivery(
    *, session: Session, endpoint_id: str, delivery_id: int, now: datetime | None = None
) -> dict[str, Any]:
    """Queue the delivery for an attempt now (a replay when it already succeeded or failed); returns it.

    The attempt count carries on: a replay of a delivery whose schedule has run out gets one attempt.
    Raises a 404 for an unknown endpoint or delivery, or a 409 when the endpoint is disabled or an
    attempt of this delivery is in flight.
    """
    now = now or utcnow()
    endpoint = get_endpoint(session=session, endpoint_id=endpoint_id)
    delivery = session.get(Delivery, delivery_id)
    if delivery is None or delivery.webhook_id != endpoint_id:
        raise NotFound("delivery", str(delivery_id))
    if not endpoint.enabled:
        raise disabled_conflict(endpoint)
    claimed_until = as_utc(delivery.claimed_until)
    if delivery.status == "pending" and claimed_until is not None and claimed_until > now:
        raise Conflict(f"delivery {delivery_id} has an attempt in flight; retry after it ends")
    delivery.status = "pending"
    delivery.next_attempt_at = now
    delivery.claimed_until = None
    delivery.claimed_by = None
    session.add(delivery)
    session.flush()
    return get_delivery(session=session, endpoint_id=endpoint_id, delivery_id=delivery_id)
