"""Events of candidate facts: ``candidate.created``, written to the outbox in the transaction that
proposed the candidate (schema/events/candidate.created.schema.json)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from sqlmodel import Session

from chipwatch.candidates.models import Candidate, CandidateItem
from chipwatch.kit.time import rfc3339
from chipwatch.outbox.emit import emit_many

CANDIDATE_CREATED = "candidate.created"


class Carrier(NamedTuple):
    """What an event says of one item carrying a candidate (the fields of a ``CandidateItem`` it reads):
    the proposing check builds these from the rows it inserts, which costs far less than table objects."""

    item_id: int
    source_id: str
    trust: str
    quote: str


def candidate_created_data(candidate: Candidate, items: Sequence[CandidateItem | Carrier]) -> dict[str, Any]:
    """The ``data`` of a ``candidate.created`` event: the candidate, its proposed fact and the items
    (source, trust, the words it was read from) that carried it when it was proposed."""
    corroborates = (
        {"kind": candidate.corroborates_kind, "id": candidate.corroborates_id}
        if candidate.corroborates_id else None
    )
    return {
        "candidate_id": candidate.id,
        "kind": candidate.kind,
        "status": candidate.status,
        "fact": candidate.fact,
        "confidence": candidate.confidence,
        "verification": candidate.verification,
        "independent_sources": candidate.independent_sources,
        "corroborates": corroborates,
        "items": [
            {"item_id": i.item_id, "source_id": i.source_id, "trust": i.trust, "quote": i.quote}
            for i in items
        ],
        "created_at": rfc3339(candidate.created_at),
    }


def emit_candidates_created(
    session: Session, created: Sequence[tuple[Candidate, Sequence[CandidateItem | Carrier]]]
) -> None:
    """Write one ``candidate.created`` event per ``(candidate, its items)`` to the outbox, in order, in
    ``session``'s transaction."""
    emit_many(session, CANDIDATE_CREATED, [candidate_created_data(c, items) for c, items in created])


__all__ = ["CANDIDATE_CREATED", "Carrier", "candidate_created_data", "emit_candidates_created"]
