"""The outbox table: one row per event, written in the same transaction as the change it announces."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Index
from sqlmodel import Field, SQLModel

from chipwatch.kit.time import utcnow
from chipwatch.types import UTCDateTime

EVENT_TYPES = (
    "signal.status_changed",
    "signal.evidence_added",
    "signal.deadline_approaching",
    "source.health_changed",
    "fact.changed",
    "candidate.created",
    "webhook.test",
)
"""Every event type; each has a JSON Schema in ``schema/events/<type>.schema.json``."""


class Event(SQLModel, table=True):
    """An outbox row, written in the same transaction as the change it announces."""

    __tablename__ = "events"
    __table_args__ = (Index("ix_events_undispatched", "dispatched", "id"),)

    id: int | None = Field(default=None, primary_key=True)
    msg_id: str = Field(max_length=64, unique=True, description="webhook-id, stable across retries")
    type: str = Field(max_length=64, index=True)
    signal_id: str | None = Field(default=None, max_length=64, index=True)
    source_id: str | None = Field(default=None, max_length=64)
    data: dict[str, Any] = Field(default_factory=dict, sa_type=JSON)
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)
    dispatched: bool = Field(default=False, description="fanned out into deliveries")
