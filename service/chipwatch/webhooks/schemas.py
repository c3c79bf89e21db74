"""Request and response models of the webhooks API (the tables live in ``models.py``).

The API serves webhook *endpoints* under ``/v1/webhooks``; the class names below are the OpenAPI
component names the API has published (``WebhookCreate``, ``WebhookPublic``...), so they keep them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from chipwatch.kit.pagination import Page
from chipwatch.kit.time import as_utc
from chipwatch.outbox.models import EVENT_TYPES

EventType = Literal[EVENT_TYPES]  # type: ignore[valid-type]
DeliveryStatus = Literal["pending", "succeeded", "failed"]
# SQLite hands back naive datetimes; every stored time is UTC, so say so in the answer.
UtcDatetime = Annotated[datetime, AfterValidator(as_utc)]

# An endpoint that names no types gets every change announcement; ``webhook.test`` is always
# delivered to the endpoint it was sent to, whatever types it names.
DEFAULT_EVENT_TYPES: tuple[str, ...] = tuple(t for t in EVENT_TYPES if t != "webhook.test")


class WebhookBase(BaseModel):
    """Fields chosen when an endpoint is created."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(
        min_length=1,
        max_length=2000,
        description="http(s) URL that receives POSTs; refused when it resolves to an internal address",
        examples=["https://example.com/hooks/chipwatch"],
    )
    description: str | None = Field(default=None, max_length=2000, description="free text for humans")
    event_types: list[EventType] = Field(
        default_factory=lambda: list(DEFAULT_EVENT_TYPES),
        min_length=1,
        description="event types to receive, each once (default: every signal and source event)",
    )
    signal_ids: list[str] = Field(
        default_factory=list,
        max_length=500,
        description="only signal.* events of these signals, each once (empty: all signals); other events "
        "unaffected",
    )


class WebhookCreate(WebhookBase):
    """Body of ``POST /v1/webhooks``."""


class WebhookUpdate(BaseModel):
    """Body of ``PATCH /v1/webhooks/{id}``: only the fields present change.

    ``enabled: true`` re-enables an endpoint that was disabled (410 or days of failures) and clears the
    reason; its pending deliveries then resume.
    """

    model_config = ConfigDict(extra="forbid")

    url: str | None = Field(default=None, min_length=1, max_length=2000)
    description: str | None = Field(default=None, max_length=2000)
    event_types: list[EventType] | None = Field(default=None, min_length=1)
    signal_ids: list[str] | None = Field(default=None, max_length=500)
    enabled: bool | None = None


class WebhookPublic(BaseModel):
    """An endpoint as the API shows it; the secret is never shown again after creation or rotation."""

    id: str
    url: str
    description: str | None
    event_types: list[str]
    signal_ids: list[str]
    enabled: bool
    disabled_reason: str | None = Field(description="why the endpoint was disabled (410, days of failures)")
    failing_since: UtcDatetime | None = Field(description="first failed attempt since the last success")
    previous_secret_expires_at: UtcDatetime | None = Field(
        description="until then deliveries are also signed with the secret before the last rotation"
    )
    created_at: UtcDatetime


class WebhookWithSecret(WebhookPublic):
    """Answer of ``POST /v1/webhooks``: the endpoint and its signing secret, shown this once."""

    secret: str = Field(description="whsec_... signing secret; store it now, it is not shown again")


class SecretRotated(BaseModel):
    """Answer of ``POST /v1/webhooks/{id}/rotate-secret``: the new secret, shown this once."""

    id: str
    secret: str = Field(description="the new whsec_... secret")
    previous_secret_expires_at: UtcDatetime = Field(description="the old secret keeps signing until then")


class WebhookTestIn(BaseModel):
    """Optional body of ``POST /v1/webhooks/{id}/test``."""

    model_config = ConfigDict(extra="forbid")

    message: str = Field(default="chipwatch test delivery", max_length=500)


class WebhookTestQueued(BaseModel):
    """A ``webhook.test`` event queued for one endpoint; follow it in ``GET /v1/webhooks/{id}/deliveries``."""

    delivery_id: int
    event_id: int
    msg_id: str = Field(description="the webhook-id header the receiver will see")


class DeliveryAttemptPublic(BaseModel):
    """One HTTP attempt: when, the answer's status code (null when no answer), latency and error."""

    id: int
    attempted_at: UtcDatetime
    status_code: int | None
    latency_ms: float | None
    error: str | None


class DeliveryPublic(BaseModel):
    """One event to one endpoint, with every attempt (oldest first)."""

    id: int
    webhook_id: str
    event_id: int
    msg_id: str = Field(description="webhook-id header, the same on every attempt")
    event_type: str
    status: DeliveryStatus
    attempts: int
    next_attempt_at: UtcDatetime | None
    last_attempt_at: UtcDatetime | None
    last_status_code: int | None
    last_error: str | None
    created_at: UtcDatetime
    attempt_log: list[DeliveryAttemptPublic]


WebhookPage = Page[WebhookPublic]
DeliveryPage = Page[DeliveryPublic]
