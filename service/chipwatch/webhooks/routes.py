"""Webhook endpoints API (admin only): subscribe, change, rotate secrets, test sends, the delivery log.

Each route makes one service call; the services raise the kit's problem+json errors (404, 409, 422).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body, Path, Query, Request, Response
from sqlmodel import Session

from chipwatch.config import get_settings
from chipwatch.kit.auth import AdminDep
from chipwatch.kit.pagination import CursorQ, LimitQ
from chipwatch.kit.sessions import ReadSession, WriteSession
from chipwatch.kit.validation import body_check
from chipwatch.webhooks import deliveries, endpoints
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


def _field_problems(session: Session, fields: dict[str, Any], request: Request) -> list[tuple[str, str]]:
    """The endpoint checks over a body's fields that passed the request layer (kit.validation)."""
    return endpoints.field_problems(
        session=session, fields=fields, allow_private=get_settings().allow_private_networks
    )


@router.post("", status_code=201, response_model=WebhookWithSecret)
@body_check(_field_problems)
def create_webhook(webhook_in: WebhookCreate, session: Session = WriteSession):
    """Subscribe a URL; the answer carries the ``whsec_`` signing secret, shown this once only.

    The URL is refused (422) when it resolves to a loopback, private, link-local, multicast or reserved
    address, unless ``CHIPWATCH_ALLOW_PRIVATE_NETWORKS=1``.
    """
    row = endpoints.create_endpoint(
        session=session, endpoint_in=webhook_in, allow_private=get_settings().allow_private_networks
    )
    return WebhookWithSecret.model_validate(row, from_attributes=True)


@router.get("", response_model=WebhookPage)
def list_webhooks(
    limit: int = LimitQ, cursor: str | None = CursorQ, session: Session = ReadSession
):
    """Every endpoint, oldest first (secrets are never shown)."""
    rows, next_cursor = endpoints.list_endpoints(session=session, cursor=cursor, limit=limit)
    return {"items": rows, "next_cursor": next_cursor}


@router.get("/{webhook_id}", response_model=WebhookPublic, responses=NOT_FOUND)
def get_webhook(webhook_id: str = WebhookId, session: Session = ReadSession):
    """One endpoint, with ``enabled`` and, when disabled, ``disabled_reason``."""
    return endpoints.get_endpoint(session=session, endpoint_id=webhook_id)


@router.patch("/{webhook_id}", response_model=WebhookPublic, responses=NOT_FOUND)
@body_check(_field_problems)
def update_webhook(
    webhook_in: WebhookUpdate, webhook_id: str = WebhookId, session: Session = WriteSession
):
    """Change url, description, event types, signal ids or ``enabled`` (``true`` re-enables and resumes)."""
    return endpoints.update_endpoint(
        session=session,
        endpoint_id=webhook_id,
        endpoint_in=webhook_in,
        allow_private=get_settings().allow_private_networks,
    )


@router.delete("/{webhook_id}", status_code=204, responses=NOT_FOUND)
def delete_webhook(webhook_id: str = WebhookId, session: Session = WriteSession):
    """Remove the endpoint, its pending deliveries and its delivery log."""
    endpoints.delete_endpoint(session=session, endpoint_id=webhook_id)
    return Response(status_code=204)


@router.post("/{webhook_id}/rotate-secret", response_model=SecretRotated, responses=NOT_FOUND)
def rotate_secret(webhook_id: str = WebhookId, session: Session = WriteSession):
    """Issue a new secret (shown this once); for 24 hours deliveries carry signatures by both secrets."""
    return endpoints.rotate_secret(session=session, endpoint_id=webhook_id)


@router.post("/{webhook_id}/test", status_code=202, response_model=WebhookTestQueued, responses=NOT_FOUND)
def send_test(
    webhook_id: str = WebhookId,
    test_in: WebhookTestIn | None = Body(None),
    session: Session = WriteSession,
):
    """Queue a ``webhook.test`` event for this endpoint only; answers with the delivery to follow."""
    message = (test_in or WebhookTestIn()).message
    return endpoints.send_test(session=session, endpoint_id=webhook_id, message=message)


@router.get("/{webhook_id}/deliveries", response_model=DeliveryPage, responses=NOT_FOUND)
def list_deliveries(
    webhook_id: str = WebhookId,
    status: DeliveryStatus | None = Query(None, description="pending | succeeded | failed"),
    limit: int = LimitQ,
    cursor: str | None = CursorQ,
    session: Session = ReadSession,
):
    """Deliveries to this endpoint, newest first, each with its attempt log (time, status code, latency,
    error)."""
    items, next_cursor = deliveries.list_deliveries(
        session=session, endpoint_id=webhook_id, status=status, cursor=cursor, limit=limit
    )
    return {"items": items, "next_cursor": next_cursor}


@router.post(
    "/{webhook_id}/deliveries/{delivery_id}/retry",
    status_code=202,
    response_model=DeliveryPublic,
    responses=NOT_FOUND,
)
def retry_delivery(
    webhook_id: str = WebhookId, delivery_id: int = DeliveryId, session: Session = WriteSession
):
    """Queue the delivery for an attempt now (also a replay of one that succeeded or failed)."""
    return deliveries.retry_delivery(session=session, endpoint_id=webhook_id, delivery_id=delivery_id)
