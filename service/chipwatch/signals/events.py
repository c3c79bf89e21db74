"""The ``data`` of the ``signal.*`` events, as ``schema/events/<type>.schema.json`` describes them.

Evaluation and analyst moves build payloads with these functions and write them to the outbox in the
transaction that caused them. The builders read attributes only, so they work on table rows and on
plain objects alike (an evidence event carries the signal's state when the evidence arrived).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import date, datetime
from typing import Any

from chipwatch.kit.time import rfc3339

__all__ = [
    "DEADLINE_APPROACHING",
    "EVIDENCE_ADDED",
    "STATUS_CHANGED",
    "deadline_approaching_data",
    "evidence_added_data",
    "evidence_data",
    "status_changed_data",
]

STATUS_CHANGED = "signal.status_changed"
EVIDENCE_ADDED = "signal.evidence_added"
DEADLINE_APPROACHING = "signal.deadline_approaching"


def evidence_data(
    evidence: Any, *, moment: Callable[[datetime | None], str | None] = rfc3339
) -> dict[str, Any]:
    """One evidence row as JSON: ``$defs/evidence`` of ``schema/events/*`` and the API's ``EvidencePublic``.

    ``moment`` writes ``published_at`` and ``recorded_at``: RFC 3339 in UTC ending in ``Z`` in event
    payloads; the API passes ``datetime.isoformat``, which it has always answered with.
    """
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
        "published_at": moment(evidence.published_at),
        "recorded_at": moment(evidence.recorded_at),
        "sources": [dict(carrier) for carrier in evidence.sources or []],
    }


def status_changed_data(signal: Any, history: Any, evidence_rows: Iterable[Any]) -> dict[str, Any]:
    """``data`` of ``signal.status_changed`` for the transition recorded in ``history``.

    ``signal`` is the Signal after the transition, ``history`` its new SignalHistory row and
    ``evidence_rows`` the deciding Evidence rows (those named in ``history.evidence_ids``). Receivers
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
        "changed_at": rfc3339(history.at),
        "known_at": rfc3339(history.known_at),
        "resolved_at": rfc3339(signal.resolved_at) if to_status == "resolved" else None,
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
