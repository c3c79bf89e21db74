"""Retracting a wrong fact, and undoing a retraction. Rows are never deleted.

A retraction (``DELETE /v1/{kind}/{id}``) keeps the row with ``retracted_at`` and the analyst's reason:
lists leave it out unless asked (``?retracted=true``), new rows may not reference it, the matchers no
longer read it, its history records the retraction (cause ``api``) and a ``fact.changed`` event
announces it. The listeners registered here (the wiring points them at signal evaluation) then undo
what the fact decided: a signal whose status rests on it alone is re-evaluated.

An entity (vendor, chip, model, benchmark) that facts in force or signal definitions still name cannot
be retracted: they would point at something withdrawn. Retract or change them first; the refusal lists
them.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from sqlalchemy import String, cast, select
from sqlmodel import Session, SQLModel

from chipwatch.kit.query import like_literal
from chipwatch.kit.time import utcnow
from chipwatch.knowledge.checks import REFERENCES, Invalid, reference_problems
from chipwatch.knowledge.history import record_change
from chipwatch.knowledge.models import KB_TABLES, RESULT_LINK_ROLES, Result, ResultEntity
from chipwatch.knowledge.service import fact_listeners, get_row
from chipwatch.vocab.entities import ENTITY_COLLECTIONS

retraction_listeners: list[Callable[[Session, str, SQLModel], None]] = []
"""Called after a fact is retracted, in the same transaction: ``(session, kind, row)``."""
retraction_guards: list[Callable[[Session, str, str], list[str]]] = []
"""Asked before an entity is retracted: ``(session, kind, id) -> [what still names it]`` (the signals
domain lists the signals whose definitions name it); anything listed refuses the retraction."""

MAX_REASON_CHARS = 2000
MAX_LISTED = 20
"""Referencing rows named in a refusal at most."""


class AlreadyRetracted(ValueError):
    """The fact was retracted before (the API answers 409 with when)."""


class NotRetracted(ValueError):
    """A restore of a fact that is in force."""


class StillReferenced(ValueError):
    """An entity that facts in force still name; ``rows`` lists them as ``kind/id``."""

    def __init__(self, kind: str, id_: str, rows: list[str]) -> None:
        shown = ", ".join(rows[:MAX_LISTED]) + (" ..." if len(rows) > MAX_LISTED else "")
        super().__init__(f"{kind} {id_!r} is still named by {shown}; retract or change those first")
        self.rows = rows


def referencing_rows(*, session: Session, kind: str, id_: str) -> list[str]:
    """``kind/id`` of every fact in force (not retracted) whose reference columns name the ``kind`` row
    ``id_``, in table then id order; empty for kinds nothing references (results, claims...)."""
    if kind not in ENTITY_COLLECTIONS.values():
        return []
    found: list[str] = []
    for other_kind, table in KB_TABLES.items():
        for column, (target, is_list) in REFERENCES.items():
            if target not in (kind, None) or column not in table.model_fields:
                continue
            col = getattr(table, column)
            stmt = select(table.id, col).where(table.retracted_at.is_(None)).order_by(table.id)
            if table is Result and column in RESULT_LINK_ROLES:
                # A result's lists have their index: read it rather than the text of every result.
                named = select(ResultEntity.result_id).where(
                    ResultEntity.role == RESULT_LINK_ROLES[column], ResultEntity.entity_id == id_
                )
                rows = list(session.execute(stmt.where(table.id.in_(named))))
            elif is_list:
                # JSON lists are text on SQLite and json on PostgreSQL; both render '"id"' inside. The
                # LIKE narrows, the list test decides.
                pattern = f'%"{like_literal(id_)}"%'
                stmt = stmt.where(cast(col, String).like(pattern, escape="\\"))
                rows = [(i, v) for i, v in session.execute(stmt) if id_ in (v or [])]
            else:
                rows = list(session.execute(stmt.where(col == id_)))
            found.extend(f"{other_kind}/{i}" for i, _v in rows if (other_kind, i) != (kind, id_))
    return list(dict.fromkeys(found))


def retract_row(
    *, session: Session, kind: str, id_: str, reason: str | None, now: datetime | None = None
) -> SQLModel:
    """Withdraw the ``kind`` fact ``id_``: mark it retracted with ``reason``, record the retraction in its
    history (cause ``api``, actor ``admin``, the reason as the entry's value), write ``fact.changed`` and
    call the retraction listeners. Returns the row.

    Raises :class:`~chipwatch.knowledge.service.RowNotFound`, :class:`AlreadyRetracted` or
    :class:`StillReferenced`. Flushes; never commits.
    """
    row = get_row(session=session, kind=kind, id_=id_)
    if row.retracted_at is not None:
        raise AlreadyRetracted(f"{kind} {id_!r} was retracted at {row.retracted_at.isoformat()}")
    naming = referencing_rows(session=session, kind=kind, id_=id_)
    if kind in ENTITY_COLLECTIONS.values():
        for guard in retraction_guards:
            naming += guard(session, kind, id_)
    if naming:
        raise StillReferenced(kind, id_, naming)
    now = now or utcnow()
    row.retracted_at, row.retraction_reason = now, reason
    session.add(row)
    session.flush()
    record_change(session=session, kind=kind, fact_id=id_, action="retracted", cause="api", actor="admin",
                  at=now, detail={"reason": reason})
    for listener in retraction_listeners:
        listener(session, kind, row)
    return row


def restore_row(*, session: Session, kind: str, id_: str, now: datetime | None = None) -> SQLModel:
    """Put a retracted fact back in force: clear the retraction, record ``restored`` (cause ``api``),
    write ``fact.changed`` and evaluate it again as a written fact. Returns the row.

    Raises :class:`~chipwatch.knowledge.service.RowNotFound`, :class:`NotRetracted`, or
    :class:`~chipwatch.knowledge.checks.Invalid` when it names rows retracted meanwhile.
    """
    row = get_row(session=session, kind=kind, id_=id_)
    if row.retracted_at is None:
        raise NotRetracted(f"{kind} {id_!r} is not retracted")
    fields = type(row).model_fields
    refs: dict[str, Any] = {c: getattr(row, c) for c in (*REFERENCES, "source_id") if c in fields}
    problems = reference_problems(session=session, data=refs)
    if problems:
        raise Invalid(problems)
    row.retracted_at, row.retraction_reason = None, None
    session.add(row)
    session.flush()
    record_change(session=session, kind=kind, fact_id=id_, action="restored", cause="api", actor="admin",
                  at=now or utcnow())
    for listener in fact_listeners:
        listener(session, kind, row)
    return row


__all__ = [
    "MAX_REASON_CHARS",
    "AlreadyRetracted",
    "NotRetracted",
    "StillReferenced",
    "referencing_rows",
    "restore_row",
    "retract_row",
    "retraction_guards",
    "retraction_listeners",
]
