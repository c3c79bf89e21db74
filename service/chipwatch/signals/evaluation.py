"""Signal evaluation entry points: new items, written facts, a new or changed signal, a seed load.

Every entry point takes a keyword-only ``session`` and only flushes: evidence rows, the signal's state,
its history row and the outbox events commit or roll back together with the change that caused them
(DESIGN.md "Data flow"). The steps live in their own modules: ``rules_cache`` (compiled definitions),
``item_matches`` and ``fact_matches`` (what matches), ``record`` (evidence, versioned moves, events),
``deadlines`` and ``manual`` (the clock's and the analyst's moves).

When evaluation runs (DESIGN.md "Signals"):

- ``evaluate_items``: right after the sources store flushed new or updated items;
- ``evaluate_fact``: when a result, deployment or funding round is written (once
  ``register_fact_listener`` has subscribed it to ``chipwatch.knowledge.service.fact_listeners``:
  ``create_app`` and the CLI call it);
- ``evaluate_signal``: when a signal is created or its definition changes (all stored items and facts);
- ``deadlines.evaluate_deadlines``: at creation, at start-up and from the ``signals.deadlines`` job.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import delete, select
from sqlmodel import Session

from chipwatch.kit.time import utcnow
from chipwatch.knowledge.events import change_listeners
from chipwatch.knowledge.models import FactChange
from chipwatch.knowledge.service import fact_listeners, facts_listeners
from chipwatch.signals.change_matches import change_findings, changes_for_signal
from chipwatch.signals.deadlines import evaluate_deadlines
from chipwatch.signals.definition import SignalDefinition
from chipwatch.signals.fact_matches import FACT_TABLES, fact_findings, facts_for_signal
from chipwatch.signals.item_matches import (
    ITEM_BATCH,
    item_findings,
    items_by_id,
    items_for_signal,
    newest_item_id,
)
from chipwatch.signals.models import Evidence, SignalHistory
from chipwatch.signals.record import EVIDENCE_KEY, EvaluationReport, Finding, load_signal, record_and_settle
from chipwatch.signals.rules import compile_signals
from chipwatch.signals.rules_cache import compiled_rules, definition_of, entities_for
from chipwatch.text.entities import Entity

__all__ = [
    "ItemSnapshot",
    "evaluate_changes",
    "evaluate_fact",
    "evaluate_facts",
    "evaluate_items",
    "evaluate_seeded",
    "evaluate_signal",
    "read_item_findings",
    "register_fact_listener",
]


def evaluate_items(
    *, session: Session, item_ids: Iterable[int], now: datetime | None = None
) -> EvaluationReport:
    """Match stored items against every signal; record new evidence and move the signals it decides.

    ``item_ids`` are ids of ``items`` rows already flushed in ``session`` (new or updated by a feed
    check). Each item's title and text are read once through the compiled rules, whatever the number of
    signals. Matches already recorded are skipped, so calling it again for the same items changes
    nothing. ``now`` (UTC) stamps evidence and history rows (default: the clock).

    Returns an ``EvaluationReport``. Raises nothing of its own; database errors propagate and the
    caller's transaction rolls back with the items.
    """
    ids = sorted({int(i) for i in item_ids})
    report = EvaluationReport()
    if not ids:
        return report
    now = now if now is not None else utcnow()
    found = item_findings(compiled_rules(session=session), items_by_id(session, ids), report)
    record_and_settle(session, found, now, report)
    return report


def evaluate_fact(*, session: Session, kind: str, row: Any, now: datetime | None = None) -> EvaluationReport:
    """Match one written knowledge-base row against every signal's result, deployment and funding
    conditions.

    ``kind`` is the knowledge-base kind (``results``, ``deployments``, ``funding-rounds``; other kinds
    return an empty report: entity names reach the matcher through the rules cache's fingerprint).
    ``row`` is the flushed table row. Returns an ``EvaluationReport``.
    """
    report = EvaluationReport()
    spec = FACT_TABLES.get(kind)
    if spec is None:
        return report
    ref_kind, _table = spec
    now = now if now is not None else utcnow()
    found = fact_findings(session, compiled_rules(session=session), ref_kind, row, report)
    record_and_settle(session, found, now, report)
    return report


def evaluate_facts(
    *, session: Session, kind: str, rows: Sequence[Any], now: datetime | None = None
) -> EvaluationReport:
    """:func:`evaluate_fact` for many rows of one kind written together (a dataset import), with the
    rules compiled once. Returns one ``EvaluationReport``."""
    report = EvaluationReport()
    spec = FACT_TABLES.get(kind)
    if spec is None or not rows:
        return report
    ref_kind, _table = spec
    now = now if now is not None else utcnow()
    rules = compiled_rules(session=session)
    found = [finding for row in rows for finding in fact_findings(session, rules, ref_kind, row, report)]
    record_and_settle(session, found, now, report)
    return report


def evaluate_changes(
    *, session: Session, changes: Sequence[Sequence[FactChange]], now: datetime | None = None
) -> EvaluationReport:
    """Match recorded changes of facts (each the flushed history rows of one change) against every
    signal's change conditions (e.g. "a chip's TDP changed"), with the rules compiled once; record
    evidence and move the signals they decide."""
    report = EvaluationReport()
    if not changes:
        return report
    rules = compiled_rules(session=session)
    if not rules.watches_changes:
        return report
    now = now if now is not None else utcnow()
    record_and_settle(session, change_findings(rules, changes, report), now, report)
    return report


SNAPSHOT_OVERLAP = timedelta(minutes=10)
"""Longer than any write transaction (the store of a large feed takes seconds): items such a transaction
stamped before a read snapshot began but committed after it are read again in the write transaction."""


@dataclass(frozen=True, slots=True)
class ItemSnapshot:
    """What a definition's item conditions found in a read snapshot, and where that snapshot ends."""

    definition: SignalDefinition
    entities: tuple[Entity, ...]
    found: tuple[Finding, ...]
    items_read: int
    max_item_id: int
    taken_at: datetime


def read_item_findings(*, session: Session, definition: SignalDefinition) -> ItemSnapshot:
    """Match every stored item that could satisfy ``definition`` (:func:`items_for_signal`), in a read
    session: the expensive part of evaluating a new or changed signal, done without the write lock.

    Returns an :class:`ItemSnapshot` for :func:`evaluate_signal`, which then reads only the items written
    since in its write transaction. Writes nothing.
    """
    taken_at = utcnow()
    max_item_id = newest_item_id(session)
    entities = tuple(entities_for(session=session, entity_ids=definition.entity_ids()))
    rules = compile_signals([definition], list(entities))
    report = EvaluationReport()
    found = item_findings(rules, items_for_signal(session, definition), report)
    return ItemSnapshot(definition, entities, tuple(found), report.items, max_item_id, taken_at)


def evaluate_signal(
    *,
    session: Session,
    signal_id: str,
    today: date | None = None,
    now: datetime | None = None,
    drop_unmatched: bool = False,
    snapshot: ItemSnapshot | None = None,
) -> EvaluationReport:
    """Check one signal against every stored item and fact, then its deadline.

    Run when a signal is created or its definition changes. The signal is compiled on its own, items are
    narrowed in SQL by what every item condition demands of the source, the date and the entities named
    (through the mention index; never by text), and each remaining item is read once. With a
    ``snapshot`` (:func:`read_item_findings`) of the same definition and entity names, its findings
    stand and only items written since it was taken are read here, so the write transaction stays short;
    a snapshot of another definition (changed meanwhile) is ignored. ``today`` (UTC date, default: the
    clock's) decides the deadline. With ``drop_unmatched`` (after the conditions changed), evidence that
    no move used and that the current conditions no longer match is deleted first; evidence that still
    matches stays as it is and is not announced again.

    Returns an ``EvaluationReport``. Raises ``SignalNotFound``, or ``DefinitionError`` when the stored
    definition names an entity that no longer exists.
    """
    now = now if now is not None else utcnow()
    today = today or now.astimezone(UTC).date()
    defn = definition_of(load_signal(session, signal_id))
    entities = tuple(entities_for(session=session, entity_ids=defn.entity_ids()))
    rules = compile_signals([defn], list(entities))
    report = EvaluationReport()
    if snapshot is not None and (snapshot.definition, snapshot.entities) == (defn, entities):
        since = snapshot.taken_at - SNAPSHOT_OVERLAP
        recent = list(items_for_signal(session, defn, written_after=(snapshot.max_item_id, since)))
        reread = {str(row.id) for row in recent}
        found = [f for f in snapshot.found if not (f.ref_kind == "item" and f.ref_id in reread)]
        report.items += snapshot.items_read
        report.matches += len(found)
        found.extend(item_findings(rules, recent, report))
    else:
        found = item_findings(rules, items_for_signal(session, defn), report)
    for ref_kind, row in facts_for_signal(session, defn):
        found.extend(fact_findings(session, rules, ref_kind, row, report))
    found.extend(change_findings(rules, changes_for_signal(session, defn), report))
    if drop_unmatched:
        _drop_unmatched_evidence(session, signal_id, {f.key for f in found})
    record_and_settle(session, found, now, report)
    report.merge(evaluate_deadlines(session=session, today=today, now=now, signal_ids=[signal_id]))
    return report


def _drop_unmatched_evidence(session: Session, signal_id: str, matching: set[tuple[Any, ...]]) -> None:
    """Delete the signal's evidence that no history row cites and that is not in ``matching`` (keys)."""
    cited = {
        i
        for ids in session.scalars(
            select(SignalHistory.evidence_ids).where(SignalHistory.signal_id == signal_id)
        )
        for i in ids or []
    }
    rows = session.execute(
        select(Evidence.id, *(getattr(Evidence, k) for k in EVIDENCE_KEY)).where(
            Evidence.signal_id == signal_id
        )
    ).all()
    stale = [row.id for row in rows if row.id not in cited and tuple(row[1:]) not in matching]
    for start in range(0, len(stale), ITEM_BATCH):
        session.execute(delete(Evidence).where(Evidence.id.in_(stale[start : start + ITEM_BATCH])))


def evaluate_seeded(*, session: Session, report: Any, today: date | None = None) -> EvaluationReport:
    """Evaluate what a seed load touched: new or changed signals in full, new or changed facts.

    ``report`` is the ``chipwatch.seeds.SeedReport`` of a load in this session. Returns the combined
    ``EvaluationReport``.
    """
    out = EvaluationReport()
    for kb_kind in FACT_TABLES:
        _ref_kind, table = FACT_TABLES[kb_kind]
        # seed files name the kind with an underscore (funding_rounds)
        for fact_id in report.touched(kb_kind.replace("-", "_")):
            row = session.get(table, fact_id)
            if row is not None:
                out.merge(evaluate_fact(session=session, kind=kb_kind, row=row))
    for signal_id in report.touched("signals"):
        out.merge(evaluate_signal(session=session, signal_id=signal_id, today=today))
    return out


def _on_fact_written(session: Session, kind: str, row: Any) -> None:
    evaluate_fact(session=session, kind=kind, row=row)


def _on_facts_written(session: Session, kind: str, rows: Sequence[Any]) -> None:
    evaluate_facts(session=session, kind=kind, rows=rows)


def _on_facts_changed(session: Session, changes: Sequence[Sequence[FactChange]]) -> None:
    evaluate_changes(session=session, changes=changes)


def register_fact_listener() -> None:
    """Evaluate signals whenever the knowledge base writes a result, deployment or funding round, or a
    fact changes.

    Subscribes ``evaluate_fact`` to ``chipwatch.knowledge.service.fact_listeners``, ``evaluate_facts``
    to its batch ``facts_listeners`` (dataset imports) and ``evaluate_changes`` to
    ``chipwatch.knowledge.events.change_listeners`` (every announced change); calling it again changes
    nothing. ``create_app`` and the CLI call it at start-up (importing this module does not).
    """
    if _on_fact_written not in fact_listeners:
        fact_listeners.append(_on_fact_written)
    if _on_facts_written not in facts_listeners:
        facts_listeners.append(_on_facts_written)
    if _on_facts_changed not in change_listeners:
        change_listeners.append(_on_facts_changed)
