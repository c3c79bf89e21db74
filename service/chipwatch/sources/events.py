"""Events the sources domain emits: ``source.health_changed``, its payload built here, next to the
health it reports, and written to the outbox in the transaction that changed the health."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session

from chipwatch.kit.time import rfc3339
from chipwatch.outbox.emit import emit
from chipwatch.sources.models import Source

HEALTH_CHANGED = "source.health_changed"


def health_event_data(source: Source) -> dict[str, Any]:
    """The ``data`` of a ``source.health_changed`` event, as published in
    ``schema/events/source.health_changed.schema.json``: id, name, ``healthy`` (no consecutive
    failures), last error, failure count and ``last_checked_at`` (RFC 3339, UTC)."""
    return {
        "source_id": source.id,
        "name": source.name,
        "healthy": source.consecutive_failures == 0,
        "last_error": source.last_error,
        "consecutive_failures": source.consecutive_failures,
        "last_checked_at": rfc3339(source.last_checked_at),
    }


def emit_health_changed(session: Session, source: Source) -> None:
    """Write a ``source.health_changed`` event for ``source`` to the outbox in ``session``'s transaction."""
    emit(session, HEALTH_CHANGED, health_event_data(source), source_id=source.id)


__all__ = ["HEALTH_CHANGED", "emit_health_changed", "health_event_data"]
