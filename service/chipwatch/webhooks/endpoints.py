"""Webhook endpoints: subscribe a URL, read, change and delete it, rotate its secret, send it a test event.

An *endpoint* is a URL that receives signed POSTs for the event types it subscribed to (optionally only
for some signals).  The API serves endpoints under ``/v1/webhooks`` and calls an endpoint's id
``webhook_id``, as published; the table keeps its name ``webhooks``.

Every function takes a keyword-only ``session`` and never commits: the edge (request dependency, CLI,
dispatcher round) owns the transaction.  Refusals leave as problem+json errors of the kit (404 for an
unknown id, 422 naming the field, 409 for a state conflict).
"""

from __future__ import annotations

import logging
import secrets as _secrets
import time
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import String, delete, select, type_coerce, update
from sqlmodel import Session

from chipwatch.kit.errors import ApiError, Conflict, NotFound, invalid
from chipwatch.kit.pagination import keyset_page
from chipwatch.kit.sealing import is_sealed, sealed_by_newest, unseal
from chipwatch.kit.time import as_utc, utcnow
from chipwatch.netguard import BlockedAddressError, HostResolutionError, check_url, split_url
from chipwatch.outbox.emit import emit
from chipwatch.outbox.models import EVENT_TYPES
from chipwatch.signals.models import Signal
from chipwatch.webhooks import signing
from chipwatch.webhooks.models import Delivery, DeliveryAttempt, Endpoint
from chipwatch.webhooks.schemas import (
    DEFAULT_EVENT_TYPES,
    WebhookCreate,
    WebhookTestQueued,
    WebhookUpdate,
)

log = logging.getLogger(__name__)

SECRET_OVERLAP = timedelta(hours=24)
"""How long the secret replaced by a rotation keeps signing (receivers roll over within it)."""
TEST_EVENT = "webhook.test"
DISABLED_BY_ADMIN = "disabled by an administrator"


def new_endpoint_id() -> str:
    """``wh_`` + 12 hex digits of milliseconds since the epoch + 8 random hex digits (sorts by creation)."""
    return f"wh_{int(time.time() * 1000):012x}{_secrets.token_hex(4)}"


def endpoint_not_found(endpoint_id: str) -> NotFound:
    """The 404 for an unknown endpoint id."""
    return NotFound("webhook endpoint", endpoint_id)


def disabled_conflict(endpoint: Endpoint) -> Conflict:
    """The 409 for an action that needs the endpoint enabled."""
    reason = endpoint.disabled_reason
    return Conflict(f"webhook endpoint {endpoint.id} is disabled ({reason}); enable it first")


# ---------------------------------------------------------------- validation
def validate_target(url: str, *, allow_private: bool) -> str:
    """The stripped URL when it may receive deliveries; raises a 422 naming ``url`` otherwise.

    The SSRF rule (``chipwatch.netguard``): http/https only, and unless ``allow_private`` every address
    the host resolves to must be public.  A host that does not resolve is refused too.
    """
    url = url.strip()
    try:
        split_url(url)
        check_url(url, allow_private=allow_private)
    except (BlockedAddressError, HostResolutionError) as exc:
        raise invalid("url", str(exc)) from exc
    return url


def _repeats(field: str, values: list[str]) -> list[dict[str, str]]:
    """A problem for each entry of ``values`` equal to an earlier one, named by its place
    (``event_types.1``): a list that is a set in meaning names each member once, and a repeat is most
    often a slip for another value the client meant to send."""
    first: dict[str, int] = {}
    errors = []
    for n, v in enumerate(values):
        if v in first:
            errors.append({"field": f"{field}.{n}", "message": f"given twice (first at {field}.{first[v]})"})
        else:
            first[v] = n
    return errors


def _refuse(errors: list[dict[str, str]]) -> ApiError:
    """One 422 listing every refused field of an endpoint's body."""
    detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors)
    return ApiError(422, "Unprocessable Content", detail, errors=errors)


def _event_types(values: Iterable[str] | None) -> list[str]:
    if values is None:
        return list(DEFAULT_EVENT_TYPES)
    given = list(values)
    expected = f"expected one of {list(EVENT_TYPES)}"
    errors = [
        {"field": f"event_types.{n}", "message": f"unknown event type {v!r}; {expected}"}
        for n, v in enumerate(given) if v not in EVENT_TYPES
    ]
    errors += _repeats("event_types", given)
    if not given:
        errors.append({"field": "event_types", "message": "name at least one event type"})
    if errors:
        raise _refuse(errors)
    return given


def _signal_ids(session: Session, values: Iterable[str]) -> list[str]:
    given = [v.strip() for v in values]
    if not given:
        return []
    known = set(session.scalars(select(Signal.id).where(Signal.id.in_(set(given)))).all())
    # Each unknown id is named by its place in the list given (signal_ids.1), as every other field is.
    errors = [
        {"field": f"signal_ids.{n}", "message": f"no signal with id {v!r}"}
        for n, v in enumerate(given) if v not in known
    ]
    errors += _repeats("signal_ids", given)
    if errors:
        raise _refuse(errors)
    return given


def endpoint_values(*, session: Session, fields: dict[str, Any], allow_private: bool) -> dict[str, Any]:
    """The stored form of the endpoint ``fields`` given (url and signal ids stripped); raises one 422
    listing every refused field (a URL the SSRF rule refuses, an unknown event type, unknown signal ids,
    an event type or signal id given twice), not only the first."""
    values: dict[str, Any] = {}
    errors: list[dict[str, str]] = []
    checks = {
        "url": lambda v: validate_target(v, allow_private=allow_private),
        "event_types": _event_types,
        "signal_ids": lambda v: _signal_ids(session, v),
    }
    for field, check in checks.items():
        if fields.get(field) is None:
            continue
        try:
            values[field] = check(fields[field])
        except ApiError as exc:
            errors += exc.extra.get("errors") or []
    if errors:
        raise _refuse(errors)
    return values


def field_problems(*, session: Session, fields: dict[str, Any], allow_private: bool) -> list[tuple[str, str]]:
    """``(field, message)`` for every refused field among ``fields`` (see :func:`endpoint_values`)."""
    try:
        endpoint_values(session=session, fields=fields, allow_private=allow_private)
    except ApiError as exc:
        return [(e["field"], e["message"]) for e in exc.extra.get("errors") or []]
    return []


# ---------------------------------------------------------------- create, read, change, delete
def create_endpoint(*, session: Session, endpoint_in: WebhookCreate, allow_private: bool) -> Endpoint:
    """Add an endpoint with a new ``whsec_`` secret and return it (flushed).

    Raises one 422 listing every refused field: the URL (SSRF rule, unresolvable host), unknown event
    types, unknown signal ids.
    """
    values = endpoint_values(session=session, fields=endpoint_in.model_dump(), allow_private=allow_private)
    row = Endpoint(
        id=new_endpoint_id(),
        url=values["url"],
        description=endpoint_in.description,
        event_types=values.get("event_types") or _event_types(None),
        signal_ids=values.get("signal_ids", []),
        secret=signing.new_secret(),
    )
    session.add(row)
    session.flush()
    log.info("webhook endpoint created", extra={"webhook_id": row.id})
    return row


def get_endpoint(*, session: Session, endpoint_id: str) -> Endpoint:
    """The endpoint ``endpoint_id``; raises a 404 when there is none."""
    row = session.get(Endpoint, endpoint_id)
    if row is None:
        raise endpoint_not_found(endpoint_id)
    return row


def list_endpoints(*, session: Session, cursor: str | None, limit: int) -> tuple[list[Endpoint], str | None]:
    """A page of endpoints in creation order (ids sort by creation) and the next page's cursor.

    Raises a 422 naming ``cursor`` when it is malformed.
    """
    return keyset_page(session, select(Endpoint), keys=(Endpoint.id,), cursor=cursor, limit=limit)


def update_endpoint(
    *, session: Session, endpoint_id: str, endpoint_in: WebhookUpdate, allow_private: bool
) -> Endpoint:
    """Apply the fields set in ``endpoint_in``; re-enabling clears ``disabled_reason`` and ``failing_since``.

    Raises a 404 for an unknown id or one 422 naming every refused field (a null url, event_types or
    enabled among them).
    """
    row = get_endpoint(session=session, endpoint_id=endpoint_id)
    changes = endpoint_in.model_dump(exclude_unset=True)
    # A null for a field the endpoint cannot be without is refused, not read as "leave it".
    errors = [{"field": field, "message": "must not be null"}
              for field in ("url", "event_types", "enabled") if field in changes and changes[field] is None]
    try:
        values = endpoint_values(session=session, fields=changes, allow_private=allow_private)
    except ApiError as exc:
        errors += exc.extra.get("errors") or []
    if errors:
        raise _refuse(errors)
    for field, value in values.items():
        setattr(row, field, value)
    if "description" in changes:
        row.description = changes["description"]
    if changes.get("enabled") is not None:
        _set_enabled(row, changes["enabled"])
    session.add(row)
    session.flush()
    return row


def _set_enabled(row: Endpoint, enabled: bool) -> None:
    if enabled and not row.enabled:
        row.disabled_reason = None
        row.failing_since = None
    elif not enabled and row.enabled:
        row.disabled_reason = DISABLED_BY_ADMIN
    row.enabled = enabled


def delete_endpoint(*, session: Session, endpoint_id: str) -> None:
    """Remove the endpoint with its deliveries and their attempt log; raises a 404 for an unknown id."""
    get_endpoint(session=session, endpoint_id=endpoint_id)
    delivery_ids = select(Delivery.id).where(Delivery.webhook_id == endpoint_id)
    session.execute(delete(DeliveryAttempt).where(DeliveryAttempt.delivery_id.in_(delivery_ids)))
    session.execute(delete(Delivery).where(Delivery.webhook_id == endpoint_id))
    session.execute(delete(Endpoint).where(Endpoint.id == endpoint_id))
    session.expire_all()


# ---------------------------------------------------------------- secrets
def rotate_secret(*, session: Session, endpoint_id: str, now: datetime | None = None) -> Endpoint:
    """Replace the secret; the old one keeps signing for :data:`SECRET_OVERLAP` (24 h).

    During the overlap every delivery carries two signatures in ``webhook-signature`` (new first), so a
    receiver verifies with either secret.  Rotating again within the overlap drops the oldest secret.
    Raises a 404 for an unknown id.
    """
    now = now or utcnow()
    row = get_endpoint(session=session, endpoint_id=endpoint_id)
    row.previous_secret = row.secret
    row.previous_secret_expires_at = now + SECRET_OVERLAP
    row.secret = signing.new_secret()
    session.add(row)
    session.flush()
    log.info("webhook endpoint secret rotated", extra={"webhook_id": row.id})
    return row


def reseal_secrets(*, session: Session) -> int:
    """Seal again, under the newest key, every stored secret that the newest key alone does not open
    (sealed under an older key, or still clear); returns how many endpoints were rewritten.

    The step of a key rotation that makes the older keys unneeded. Raises ``SealError`` when a stored
    secret opens with none of the configured keys.
    """
    # type_coerce reads the stored tokens as they are, without the column type opening them.
    raw = (type_coerce(Endpoint.secret, String), type_coerce(Endpoint.previous_secret, String))
    stored = session.execute(select(Endpoint.id, *raw)).all()
    rewritten = 0
    for endpoint_id, *tokens in stored:
        if all(t is None or (is_sealed(t) and sealed_by_newest(t)) for t in tokens):
            continue
        clear = [None if t is None else (unseal(t) if is_sealed(t) else t) for t in tokens]
        values = {"secret": clear[0], "previous_secret": clear[1]}
        session.execute(update(Endpoint).where(Endpoint.id == endpoint_id).values(**values))
        rewritten += 1
    return rewritten


def signing_secrets(endpoint: Any, now: datetime | None = None) -> list[str]:
    """Secrets that sign a delivery now: the current one, then the previous one while it is unexpired.

    ``endpoint`` is an :class:`Endpoint` or any row with its secret columns.
    """
    now = now or utcnow()
    out = [endpoint.secret]
    expires = as_utc(endpoint.previous_secret_expires_at)
    if endpoint.previous_secret and expires is not None and expires > now:
        out.append(endpoint.previous_secret)
    return out


# ---------------------------------------------------------------- test sends
def webhook_test_data(*, webhook_id: str, message: str) -> dict[str, Any]:
    """``data`` of ``webhook.test`` (``schema/events/webhook.test.schema.json``)."""
    return {"webhook_id": webhook_id, "message": message}


def send_test(*, session: Session, endpoint_id: str, message: str) -> WebhookTestQueued:
    """Emit a ``webhook.test`` event for this endpoint only and queue its delivery; returns what was queued.

    The event is written already fanned out (with its one delivery row) so no other endpoint receives
    it.  Raises a 404 for an unknown id, or a 409 when the endpoint is disabled.
    """
    endpoint = get_endpoint(session=session, endpoint_id=endpoint_id)
    if not endpoint.enabled:
        raise disabled_conflict(endpoint)
    event = emit(session, TEST_EVENT, webhook_test_data(webhook_id=endpoint.id, message=message))
    event.dispatched = True
    delivery = Delivery(webhook_id=endpoint.id, event_id=event.id, next_attempt_at=utcnow())
    session.add_all([event, delivery])
    session.flush()
    return WebhookTestQueued(delivery_id=delivery.id, event_id=event.id, msg_id=event.msg_id)
