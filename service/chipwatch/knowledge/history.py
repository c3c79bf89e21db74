"""Fact history: every change to a knowledge-base fact, field by field, with its cause.

One call of :func:`record_change` is one change of one fact: it writes the history rows (one per
changed field for ``updated``, one without a field for the other actions) and, except for ``created``,
one ``fact.changed`` event in the same transaction. A new fact is announced by the signals that match
it, not by ``fact.changed``: the event says that something already known is now different (a field
changed, the fact was retired, restored or retracted). Services flush, never commit.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pydantic_core import to_jsonable_python
from sqlalchemy import insert, select
from sqlmodel import Session

from chipwatch.kit.pagination import keyset_page
from chipwatch.kit.time import utcnow
from chipwatch.knowledge.events import emit_fact_changed
from chipwatch.knowledge.models import KB_TABLES, FactChange
from chipwatch.vocab.facts import ChangeCause, FactAction

FieldChanges = Mapping[str, tuple[Any, Any]]
"""Field name -> (old value, new value)."""


class FactNotFound(LookupError):
    """No ``kind`` fact has id ``id_``, and none ever had history."""

    def __init__(self, kind: str, id_: str) -> None:
        super().__init__(f"no {kind} row with id {id_!r}")
        self.kind, self.id_ = kind, id_


def plain(value: Any) -> Any:
    """``value`` as JSON data, the way history stores it: dates and times as ISO 8601 text."""
    return to_jsonable_python(value)


def field_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, tuple[Any, Any]]:
    """The fields of ``after`` whose JSON value differs from ``before``'s (a field absent from
    ``before`` counts as null), as ``{field: (old, new)}`` of JSON values, in field order."""
    out: dict[str, tuple[Any, Any]] = {}
    for name, new in after.items():
        old_plain, new_plain = plain(before.get(name)), plain(new)
        if old_plain != new_plain:
            out[name] = (old_plain, new_plain)
    return out


def record_change(
    *,
    session: Session,
    kind: str,
    fact_id: str,
    action: FactAction,
    cause: ChangeCause,
    changes: FieldChanges | None = None,
    cause_ref: str | None = None,
    actor: str | None = None,
    at: datetime | None = None,
    announce: bool = True,
    detail: Any = None,
) -> list[FactChange]:
    """Record one change of the ``kind`` fact ``fact_id``; returns the flushed history rows.

    ``kind`` is a knowledge-base path segment (``chips``, ``deployments``...). ``updated`` needs
    ``changes`` (``{field: (old, new)}``; values are stored as JSON; a field may name one key of a JSON
    column as ``attributes.<key>``) and records nothing when it is empty; the other actions ignore
    ``changes`` (``seed_conflict`` takes them as ``{field: (kept, seed value)}``). With ``announce``
    (default) every action but ``created`` and ``seed_conflict`` also writes one
    ``fact.changed`` event. ``detail`` is kept as the ``new_value`` of a whole-fact action (a
    retraction's reason). Raises KeyError for an unknown ``kind`` and
    ValueError for an ``updated`` change of a field the table does not have.
    """
    table = KB_TABLES[kind]
    at = at or utcnow()
    common = {"kind": kind, "fact_id": fact_id, "action": action, "cause": cause, "cause_ref": cause_ref,
              "actor": actor, "changed_at": at}
    if action in ("updated", "seed_conflict"):
        # ``attributes.<key>`` names one key of a JSON column: history keeps the key that changed.
        unknown = sorted({name for name in changes or {} if name.split(".", 1)[0] not in table.model_fields})
        if unknown:
            raise ValueError(f"{kind} has no field {', '.join(unknown)}")
        rows = [
            FactChange(**common, field=name, old_value=plain(old), new_value=plain(new))
            for name, (old, new) in (changes or {}).items()
        ]
    else:
        rows = [FactChange(**common, new_value=plain(detail))]
    if not rows:
        return []
    session.add_all(rows)
    session.flush()
    if announce and action not in ("created", "seed_conflict"):  # neither changes a known fact
        emit_fact_changed(session, rows)
    return rows


def record_created(
    *,
    session: Session,
    kind: str,
    fact_ids: list[str],
    cause: ChangeCause,
    cause_ref: str | None = None,
    actor: str | None = None,
    at: datetime | None = None,
) -> int:
    """Record the creation of many ``kind`` facts at once (one executemany); returns how many.

    The bulk form of ``record_change(action="created")`` for imports: no event, as for one creation.
    """
    if not fact_ids:
        return 0
    at = at or utcnow()
    rows = [
        {"kind": kind, "fact_id": fact_id, "action": "created", "field": None, "old_value": None,
         "new_value": None, "cause": cause, "cause_ref": cause_ref, "actor": actor, "changed_at": at}
        for fact_id in fact_ids
    ]
    # The table itself, not the mapped class: a plain executemany, without the ORM's bulk machinery.
    session.execute(insert(FactChange.__table__), rows)  # type: ignore[attr-defined]
    return len(rows)


def list_history(
    *, session: Session, kind: str, fact_id: str, cursor: str | None, limit: int
) -> dict[str, Any]:
    """One page of the history of the ``kind`` fact ``fact_id``, oldest first:
    ``{"items": [FactChange], "next_cursor": str | None}``.

    Raises :class:`FactNotFound` when there is neither such a fact nor any history of it, and a 422
    ApiError for a malformed cursor.
    """
    stmt = select(FactChange).where(FactChange.kind == kind, FactChange.fact_id == fact_id)
    rows, next_cursor = keyset_page(session, stmt, keys=(FactChange.id,), cursor=cursor, limit=limit)
    if not rows and cursor is None and session.get(KB_TABLES[kind], fact_id) is None:
        raise FactNotFound(kind, fact_id)
    return {"items": rows, "next_cursor": next_cursor}
