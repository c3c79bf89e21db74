"""Webhook endpoints (admin only): subscriptions, secret rotation, test sends and the delivery log."""

from __future__ import annotations

from fastapi import APIRouter, Body, Depends, Path, Query, Response
from sqlmodel import Session

from chipwatch.api import (
    AdminDep,
    ApiError,
    Conflict,
    CursorQ,
    LimitQ,
    NotFound,
    decode_cursor,
    encode_cursor,
    invalid,
    read_session,
    write_session,
)
from chipwatch.config import get_settings
from chipwatch.webhooks import service
from chipwatch.webhooks.schemas import (
    DeliveryPage,
    DeliveryPublic,
    DeliveryStatus,
    SecretRotated,
    WebhookCreate,
    WebhookPage,
    WebhookPublic,
    WebhookTestIn,
    WebhookTestQueued,
    WebhookUpdate,
    WebhookWithSecret,
)

router = APIRouter(prefix="/v1/webhooks", tags=["webhooks"], dependencies=[AdminDep])
WebhookId = Path(..., max_length=64, description="webhook id (wh_...)")
DeliveryId = Path(..., ge=1, le=2**62, description="delivery id")
NOT_FOUND = {404: {"description": "unknown id"}}


def _mapped(exc: Exception) -> ApiError:
    """The problem+json error for one of :data:`SERVICE_ERRORS`: 404, 422 naming the field, or 409."""
    if isinstance(exc, service.WebhookNotFound):
        return NotFound("webhook", exc.webhook_id)
    if isinstance(exc, service.DeliveryNotFound):
        return NotFound("delivery", str(exc.delivery_id))
    if isinstance(exc, service.InvalidWebhook):
        return invalid(exc.field, exc.message)
    return Conflict(str(exc))


SERVICE_ERRORS = (
    service.WebhookNotFound,
    service.DeliveryNotFound,
    service.InvalidWebhook,
    service.DeliveryConflict,
)


def _public(row) -> WebhookPublic:
    return WebhookPublic.model_validate(row, from_attributes=True)


@router.post("", status_code=201, response_model=WebhookWithSecret)
def create_webhook(webhook_in: WebhookCreate, session: Session = Depends(write_session)):
    """Subscribe a URL; the answer carries the ``whsec_`` signing secret, shown this once only.

    The URL is refused (422) when it resolves to a loopback, private, link-local, multicast or reserved
    address, unless ``CHIPWATCH_ALLOW_PRIVATE_NETWORKS=1``.
    """
    try:
        row = service.create_webhook(
            session=session, webhook_in=webhook_in, allow_private=get_settings().allow_private_networks
        )
    except SERVICE_ERRORS as exc:
        raise _mapped(exc) from exc
    return WebhookWithSecret(**_public(row).model_dump(), secret=row.secret)


@router.get("", response_model=WebhookPage)
def list_webhooks(
    limit: int = LimitQ, cursor: str | None = CursorQ, session: Session = Depends(read_session)
):
    """Every subscription, oldest first (secrets are never shown)."""
    rows, last = service.list_webhooks(session=session, limit=limit, after_id=decode_cursor(cursor, str))
    return {"items": [_public(r) for r in rows], "next_cursor": encode_cursor(last) if last else None}


@router.get("/{webhook_id}", response_model=WebhookPublic, responses=NOT_FOUND)
def get_webhook(webhook_id: str = WebhookId, session: Session = Depends(read_session)):
    """One subscription, with ``enabled`` and, when disabled, ``disabled_reason``."""
    try:
        return _public(service.get_webhook(session=session, webhook_id=webhook_id))
    except SERVICE_ERRORS as exc:
        raise _mapped(exc) from exc


@router.patch("/{webhook_id}", response_model=WebhookPublic, responses=NOT_FOUND)
def update_webhook(
    webhook_in: WebhookUpdate, webhook_id: str = WebhookId, session: Session = Depends(write_session)
):
    """Change url, description, event types, signal ids or ``enabled`` (``true`` re-enables and resumes)."""
    try:
        row = service.update_webhook(
            session=session,
            webhook_id=webhook_id,
            webhook_in=webhook_in,
            allow_private=get_settings().allow_private_networks,
        )
    except SERVICE_ERRORS as exc:
        raise _mapped(exc) from exc
    return _public(row)


@router.delete("/{webhook_id}", status_code=204, responses=NOT_FOUND)
def delete_webhook(webhook_id: str = WebhookId, session: Session = Depends(write_session)):
    """Remove the subscription, its pending deliveries and its delivery log."""
    try:
        service.delete_webhook(session=session, webhook_id=webhook_id)
    except SERVICE_ERRORS as exc:
        raise _mapped(exc) from exc
    return Response(status_code=204)


@router.post("/{webhook_id}/rotate-secret", response_model=SecretRotated, responses=NOT_FOUND)
def rotate_secret(webhook_id: str = WebhookId, session: Session = Depends(write_session)):
    """Issue a new secret (shown this once); for 24 hours deliveries carry signatures by both secrets."""
    try:
        row = service.rotate_secret(session=session, webhook_id=webhook_id)
    except SERVICE_ERRORS as exc:
        raise _mapped(exc) from exc
    return SecretRotated(
        id=row.id, secret=row.secret, previous_secret_expires_at=row.previous_secret_expires_at
    )


@router.post("/{webhook_id}/test", status_code=202, response_model=WebhookTestQueued, responses=NOT_FOUND)
def send_test(
    webhook_id: str = WebhookId,
    test_in: WebhookTestIn | None = Body(None),
    session: Session = Depends(write_session),
):
    """Queue a ``webhook.test`` event for this endpoint only; answers with the delivery to follow."""
    message = (test_in or WebhookTestIn()).message
    try:
        delivery, event = service.queue_test_delivery(session=session, webhook_id=webhook_id, message=message)
    except SERVICE_ERRORS as exc:
        raise _mapped(exc) from exc
    return WebhookTestQueued(delivery_id=delivery.id, event_id=delivery.event_id, msg_id=event.msg_id)


@router.get("/{webhook_id}/deliveries", response_model=DeliveryPage, responses=NOT_FOUND)
def list_deliveries(
    webhook_id: str = WebhookId,
    status: DeliveryStatus | None = Query(None, description="pending | succeeded | failed"),
    limit: int = LimitQ,
    cursor: str | None = CursorQ,
    session: Session = Depends(read_session),
):
    """Deliveries to this endpoint, newest first, each with its attempt log (time, status code, latency,
    error)."""
    before = decode_cursor(cursor)
    if before is not None and not isinstance(before, int):
        raise invalid("cursor", "malformed cursor; pass back the next_cursor of a previous page")
    try:
        items, last = service.list_deliveries(
            session=session, webhook_id=webhook_id, status=status, limit=limit, before_id=before
        )
    except SERVICE_ERRORS as exc:
        raise _mapped(exc) from exc
    return {"items": items, "next_cursor": encode_cursor(last) if last else None}


@router.post(
    "/{webhook_id}/deliveries/{delivery_id}/retry",
    status_code=202,
    response_model=DeliveryPublic,
    responses=NOT_FOUND,
)
def retry_delivery(
    webhook_id: str = WebhookId, delivery_id: int = DeliveryId, session: Session = Depends(write_session)
):
    """Queue the delivery for an attempt now (also a replay of one that succeeded or failed)."""
    try:
        service.retry_delivery(session=session, webhook_id=webhook_id, delivery_id=delivery_id)
        return service.get_delivery(session=session, webhook_id=webhook_id, delivery_id=delivery_id)
    except SERVICE_ERRORS as exc:
        raise _mapped(exc) from exc
