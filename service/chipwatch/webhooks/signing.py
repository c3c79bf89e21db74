"""Standard Webhooks signing: secrets, the JSON body and the three ``webhook-*`` headers (pure, no I/O).

The rules come from the Standard Webhooks specification (https://www.standardwebhooks.com/): the
signed content is ``{webhook-id}.{webhook-timestamp}.{raw body}``, the MAC is HMAC-SHA256 keyed with the
base64-decoded secret (``whsec_`` prefix removed), and ``webhook-signature`` is a space-separated list
of ``v1,<base64 MAC>`` entries so that a receiver holding either secret verifies during a rotation.
The MAC itself is computed by the ``standardwebhooks`` package so sender and receivers share one
implementation.
"""

from __future__ import annotations

import base64
import secrets as _secrets
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

import orjson
from standardwebhooks import Webhook as _StandardWebhook

from chipwatch.kit.time import rfc3339

SECRET_PREFIX = "whsec_"
SECRET_BYTES = 24
CONTENT_TYPE = "application/json"


def new_secret() -> str:
    """A fresh signing secret: ``whsec_`` + standard base64 of 24 random bytes (32 characters)."""
    return SECRET_PREFIX + base64.b64encode(_secrets.token_bytes(SECRET_BYTES)).decode("ascii")


def timestamp_seconds(value: int | str) -> int:
    """Whole Unix seconds for a ``webhook-timestamp``, from an int or a string of decimal digits.

    Raises ``ValueError`` for anything else (``"161426533.0"``, ``"-161426533"``, ``"invalid"``, bools,
    negative numbers): the header carries an integer, and a sender must never sign a value a receiver
    would parse differently.
    """
    if isinstance(value, bool):
        raise ValueError(f"invalid webhook timestamp {value!r}")
    if isinstance(value, int):
        seconds = value
    elif isinstance(value, str) and value.isascii() and value.isdigit():
        seconds = int(value)
    else:
        raise ValueError(f"invalid webhook timestamp {value!r}: expected whole Unix seconds")
    if seconds < 0:
        raise ValueError(f"invalid webhook timestamp {value!r}: negative")
    return seconds


def sign(secret: str, msg_id: str, timestamp: int | str, body: str) -> str:
    """One ``v1,<base64 HMAC-SHA256>`` signature of ``msg_id.timestamp.body`` with ``secret``.

    ``secret`` is ``whsec_<base64>`` (unpadded base64 and a missing prefix are accepted, as in the
    reference library). Raises ``standardwebhooks.webhooks.EmptyWebhookSecretError`` for an empty secret
    and ``ValueError`` for a bad timestamp (see :func:`timestamp_seconds`).
    """
    seconds = timestamp_seconds(timestamp)
    return _StandardWebhook(secret).sign(msg_id, datetime.fromtimestamp(seconds, UTC), body)


def signature_header(secrets: Iterable[str], msg_id: str, timestamp: int | str, body: str) -> str:
    """The ``webhook-signature`` value: one signature per secret, space-separated, current secret first.

    Raises ``ValueError`` when ``secrets`` is empty.
    """
    parts = [sign(s, msg_id, timestamp, body) for s in secrets]
    if not parts:
        raise ValueError("at least one signing secret is needed")
    return " ".join(parts)


def event_body(event_type: str, occurred_at: datetime, data: Mapping[str, Any]) -> str:
    """The delivery body ``{"type", "timestamp", "data"}`` as compact JSON text.

    ``timestamp`` is when the event happened (RFC 3339, UTC, ``Z``), the same on every attempt; the
    ``webhook-timestamp`` header is the time of the attempt. Serialise once and send exactly the signed
    text: re-serialising JSON (spacing, key order) breaks the signature.
    """
    return orjson.dumps({"type": event_type, "timestamp": rfc3339(occurred_at), "data": data}).decode()


def delivery_headers(
    secrets: Iterable[str], msg_id: str, body: str, *, timestamp: int | None = None
) -> dict[str, str]:
    """Headers of one attempt: ``webhook-id``, ``webhook-timestamp`` (now unless given, Unix seconds),
    ``webhook-signature`` (every secret in ``secrets``) and ``content-type``."""
    ts = int(datetime.now(UTC).timestamp()) if timestamp is None else timestamp_seconds(timestamp)
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(ts),
        "webhook-signature": signature_header(secrets, msg_id, ts, body),
        "content-type": CONTENT_TYPE,
    }

