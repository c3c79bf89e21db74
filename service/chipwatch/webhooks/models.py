"""Webhook endpoints, deliveries and delivery attempts (the event outbox is ``chipwatch.outbox``)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Index, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from chipwatch.kit.sealing import SealedText
from chipwatch.kit.time import utcnow
from chipwatch.types import UTCDateTime


class Endpoint(SQLModel, table=True):
    """A webhook endpoint: a URL and the events it subscribed to (the API's ``/v1/webhooks/{id}``)."""

    __tablename__ = "webhooks"

    id: str = Field(primary_key=True, max_length=64)
    url: str = Field(max_length=2000)
    description: str | None = Field(default=None, sa_type=Text)
    event_types: list[str] = Field(default_factory=list, sa_type=JSON)
    signal_ids: list[str] = Field(default_factory=list, sa_type=JSON)
    # Stored encrypted (Fernet, kit.sealing); the ORM reads and writes them clear.
    secret: str = Field(sa_type=SealedText)
    previous_secret: str | None = Field(default=None, sa_type=SealedText)
    previous_secret_expires_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    enabled: bool = True
    disabled_reason: str | None = Field(default=None, sa_type=Text)
    failing_since: datetime | None = Field(default=None, sa_type=UTCDateTime)
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)


class Delivery(SQLModel, table=True):
    """One event to one endpoint; retried until it succeeds or the schedule runs out.

    ``webhook_id`` is the endpoint's id (the column and the API field keep the published name).
    """

    __tablename__ = "deliveries"
    __table_args__ = (
        UniqueConstraint("webhook_id", "event_id"),
        Index("ix_deliveries_due", "status", "next_attempt_at"),
    )

    id: int | None = Field(default=None, primary_key=True)
    webhook_id: str = Field(foreign_key="webhooks.id", max_length=64, index=True)
    event_id: int = Field(foreign_key="events.id")
    status: str = Field(default="pending", max_length=16, description="pending | succeeded | failed")
    attempts: int = 0
    next_attempt_at: datetime | None = Field(default_factory=utcnow, sa_type=UTCDateTime)
    last_attempt_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    last_status_code: int | None = None
    last_error: str | None = Field(default=None, sa_type=Text)
    claimed_until: datetime | None = Field(default=None, sa_type=UTCDateTime)
    claimed_by: str | None = Field(default=None, max_length=64)
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)


class DeliveryAttempt(SQLModel, table=True):
    """One HTTP attempt of a delivery, kept for the log and replay."""

    __tablename__ = "delivery_attempts"

    id: int | None = Field(default=None, primary_key=True)
    delivery_id: int = Field(foreign_key="deliveries.id", index=True)
    attempted_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)
    status_code: int | None = None
    latency_ms: float | None = None
    error: str | None = Field(default=None, sa_type=Text)
    response_excerpt: str | None = Field(default=None, sa_type=Text)
