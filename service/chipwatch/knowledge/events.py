"""Events the knowledge base emits: ``fact.changed``, its payload built here from the history rows of
one change, and written to the outbox in the transaction that made the change."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from sqlmodel import Session

from chipwatch.kit.time import rfc3339
from chipwatch.knowledge.models import FactChange
from chipwatch.outbox.emit import emit

FACT_CHANGED = "fact.changed"


def fact_changed_data(rows: Sequence[FactChange]) -> dict[str, Any]:
    """The ``data`` of a ``fact.changed`` event, as published in
    ``schema/events/fact.changed.schema.json``, for the history rows of one change of one fact.

    ``changes`` lists ``{field, old, new}`` for an ``updated`` change (empty for the other actions);
    ``history_ids`` are the rows' ids. Raises ValueError when ``rows`` is empty or mixes facts.
    """
    if not rows:
        raise ValueError("a fact.changed event needs at least one history row")
    first = rows[0]
    if any((row.kind, row.fact_id, row.action) != (first.kind, first.fact_id, first.action) for row in rows):
        raise ValueError("one fact.changed event covers one action on one fact")
    return {
        "kind": first.kind,
        "fact_id": first.fact_id,
        "action": first.action,
        "changes": [
            {"field": row.field, "old": row.old_value, "new": row.new_value}
            for row in rows
            if row.field is not None
        ],
        "cause": first.cause,
        "cause_ref": first.cause_ref,
        "actor": first.actor,
        "changed_at": rfc3339(first.changed_at),
        "history_ids": [row.id for row in rows],
    }


# Listeners called with the announced changes (each the history rows of one change), in the same
# transaction (signal evaluation registers here through the wiring; the knowledge base never imports the
# signals domain).
change_listeners: list[Callable[[Session, Sequence[Sequence[FactChange]]], None]] = []
_HELD = "chipwatch_fact_changes_held"


def emit_fact_changed(session: Session, rows: Sequence[FactChange]) -> None:
    """Write one ``fact.changed`` event for the flushed history ``rows`` of one change to the outbox,
    then call the change listeners with it (at the end of a :func:`changes_held` block, if in one)."""
    emit(session, FACT_CHANGED, fact_changed_data(rows))
    held = session.info.get(_HELD)
    if held is not None:
        held.append(list(rows))
        return
    for listener in change_listeners:
        listener(session, [rows])


@contextmanager
def changes_held(session: Session) -> Iterator[None]:
    """Within the block, the change listeners are called once, at its end, with every change announced
    in it (a dataset import announces many changes; signals are evaluated over them in one pass)."""
    if session.info.get(_HELD) is not None:
        yield
        return
    session.info[_HELD] = held = []
    try:
        yield
    finally:
        session.info.pop(_HELD, None)
    if held:
        for listener in change_listeners:
            listener(session, held)


__all__ = ["FACT_CHANGED", "change_listeners", "changes_held", "emit_fact_changed", "fact_changed_data"]
