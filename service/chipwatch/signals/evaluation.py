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
from itertools import groupby
from typing import Any

from sqlalchemy import and_, delete, func, or_, select, union
from sqlmodel import Session

from chipwatch.kit.time import utcnow
from chipwatch.knowledge.events import change_listeners
from chipwatch.knowledge.models import ENTITY_TABLES, KB_TABLES, FactChange
from chipwatch.knowledge.service import fact_listeners, facts_listeners
from chipwatch.signals.change_matches import change_findings, changes_for_signal
from chipwatch.signals.deadlines import evaluate_deadlines
from chipwatch.signals.definition import ChangeCondition, SignalDefinition
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
from chipwatch.signals.rules import CompiledRules, compile_signals
from chipwatch.signals.rules_cache import compiled_rules, definition_of, entities_for
from chipwatch.sources.models import Item
from chipwatch.text.entities import Entity

# History kinds of the named entities (vendors, chips, models, benchmarks).
_ENTITY_KINDS = tuple(kind for kind, table in KB_TABLES.items() if table in ENTITY_TABLES.values())

__all__ = [
    "SignalSnapshot",
    "evaluate_changes",
    "evaluate_fact",
    "evaluate_facts",
    "evaluate_items",
    "evaluate_seeded",
    "evaluate_signal",
    "read_findings",
    "register_fact_listener",
    "snapshot_still_valid",
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
    keys = rules.fact_keys(ref_kind)
    if keys is not None:
        # A fact naming no chip or vendor that a rule of its kind names matches nothing: counted, not
        # matched (an import writes thousands of facts, few of which any signal watches).
        watched = [row for row in rows if _names_any(ref_kind, row, keys)]
        report.facts += len(rows) - len(watched)
        rows = watched
    found = [finding for row in rows for finding in fact_findings(session, rules, ref_kind, row, report)]
    record_and_settle(session, found, now, report)
    return report


def _names_any(ref_kind: str, row: Any, keys: frozenset[str]) -> bool:
    """True when ``row`` names one of ``keys``: its vendor (funding), else its chip ids or chip id, read
    as the rules' index reads them."""
    if not keys:
        return False
    if ref_kind == "funding":
        return getattr(row, "vendor_id", None) in keys
    ids = getattr(row, "chip_ids", None)
    if ids is None:
        ids = getattr(row, "chip_id", None)
    if ids is None:
        return False
    return ids in keys if isinstance(ids, str) else any(i in keys for i in ids)


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
"""Longer than any write transaction (the store of a large feed takes seconds): rows such a transaction
stamped before a read snapshot began but committed after it are read again in the write transaction."""


@dataclass(frozen=True, slots=True)
class SignalSnapshot:
    """What a definition's conditions found in a read snapshot, and where that snapshot ends.

    ``found`` holds the findings of stored items, facts in force and recorded changes; ``rules`` the
    definition compiled against ``entities``; ``max_item_id`` and ``max_change_id`` the newest item and
    fact-history row the snapshot saw, ``taken_at`` (UTC) when it began.
    """

    definition: SignalDefinition
    entities: tuple[Entity, ...]
    rules: CompiledRules
    found: tuple[Finding, ...]
    items_read: int
    facts_read: int
    max_item_id: int
    max_change_id: int
    taken_at: datetime


def read_findings(*, session: Session, definition: SignalDefinition) -> SignalSnapshot:
    """Match every stored item that could satisfy ``definition`` (:func:`items_for_signal`), every fact
    in force and every recorded change its conditions read, in a read session: the expensive part of
    evaluating a new or changed signal, done without the write lock.

    Returns a :class:`SignalSnapshot` for :func:`evaluate_signal`, which then reads only the items and
    facts written since, in its write transaction. Writes nothing. Raises ``DefinitionError`` when the
    definition names an entity that does not exist.
    """
    taken_at = utcnow()
    max_item_id = newest_item_id(session)
    max_change_id = _newest_change_id(session)
    entities = tuple(entities_for(session=session, entity_ids=definition.entity_ids()))
    rules = compile_signals([definition], list(entities))
    report = EvaluationReport()
    found = item_findings(rules, items_for_signal(session, definition), report)
    for ref_kind, row in facts_for_signal(session, definition):
        found.extend(fact_findings(session, rules, ref_kind, row, report))
    found.extend(change_findings(rules, changes_for_signal(session, definition), report))
    return SignalSnapshot(
        definition, entities, rules, tuple(found), report.items, report.facts, max_item_id, max_change_id,
        taken_at,
    )


def _newest_change_id(session: Session) -> int:
    return session.execute(select(func.max(FactChange.id))).scalar_one_or_none() or 0


def _serialised_writes(session: Session) -> bool:
    """True on SQLite: one writer at a time, so ids are handed out in commit order and every row a
    snapshot did not see has an id beyond the newest it saw. PostgreSQL's sequences hand out ids that can
    commit out of order, so rows stamped within :data:`SNAPSHOT_OVERLAP` of the snapshot are read too."""
    return session.get_bind().dialect.name == "sqlite"


def _items_written_since(session: Session, snapshot: SignalSnapshot) -> list[int]:
    """Ids of the items stored or updated since ``snapshot`` (a superset: the rules decide each one), in
    id order. Each part is a range on an index (the primary key, ``ix_items_updated``,
    ``ix_items_first_seen``), not a scan of the items."""
    since = snapshot.taken_at - SNAPSHOT_OVERLAP
    parts = [
        select(Item.id).where(Item.id > snapshot.max_item_id),
        select(Item.id).where(Item.updated_at >= since),
    ]
    if not _serialised_writes(session):
        parts.append(select(Item.id).where(Item.first_seen_at >= since))
    return sorted(set(session.scalars(union(*parts))))


def _changes_since(session: Session, snapshot: SignalSnapshot, kinds: Iterable[str]) -> Any:
    """The condition on ``fact_history`` rows of ``kinds`` written since ``snapshot``."""
    since = snapshot.taken_at - SNAPSHOT_OVERLAP
    newer = FactChange.id > snapshot.max_change_id
    if not _serialised_writes(session):
        newer = or_(newer, FactChange.changed_at >= since)
    return and_(FactChange.kind.in_(sorted(set(kinds))), newer)


def _names_changed_since(session: Session, snapshot: SignalSnapshot) -> bool:
    """Did any entity the definition names change (renamed, retracted...) since ``snapshot``? Entity
    writes all record history (``knowledge.history``); sources are never deleted (removal keeps the row),
    so the source ids the snapshot validated stay valid."""
    named = snapshot.definition.entity_ids()
    if not named:
        return False
    stmt = select(FactChange.id).where(
        _changes_since(session, snapshot, _ENTITY_KINDS), FactChange.fact_id.in_(sorted(named))
    )
    return session.execute(stmt.limit(1)).first() is not None


def snapshot_still_valid(*, session: Session, snapshot: SignalSnapshot) -> bool:
    """True when no entity ``snapshot``'s definition names has changed since it was taken, so the
    definition it validated (against the entities and sources then) stands in ``session``'s write
    transaction. One read of the fact history rows written since (a range of its primary key on
    SQLite)."""
    return not _names_changed_since(session, snapshot)


def _facts_since(
    session: Session, snapshot: SignalSnapshot, report: EvaluationReport
) -> tuple[set[tuple[str, str]], list[Finding]]:
    """The facts of the kinds the definition reads that were written since ``snapshot`` (every fact
    write records history): their ``(ref_kind, id)`` keys and what they satisfy now."""
    kinds = {c.kind for _s, _i, c in snapshot.definition.conditions()}
    tables = {kb: spec for kb, spec in FACT_TABLES.items() if spec[0] in kinds}
    if not tables:
        return set(), []
    stmt = select(FactChange.kind, FactChange.fact_id).where(_changes_since(session, snapshot, tables))
    written: dict[str, set[str]] = {}
    for kb_kind, fact_id in session.execute(stmt.distinct()):
        written.setdefault(kb_kind, set()).add(fact_id)
    keys: set[tuple[str, str]] = set()
    found: list[Finding] = []
    for kb_kind, ids in sorted(written.items()):
        ref_kind, table = tables[kb_kind]
        keys.update((ref_kind, i) for i in ids)
        ordered = sorted(ids)
        for start in range(0, len(ordered), ITEM_BATCH):
            rows = session.scalars(
                select(table).where(table.id.in_(ordered[start : start + ITEM_BATCH])).order_by(table.id)
            )
            for row in rows:
                found.extend(fact_findings(session, snapshot.rules, ref_kind, row, report))
    return keys, found


def _changes_written_since(session: Session, snapshot: SignalSnapshot) -> list[list[FactChange]]:
    """The recorded changes (rows grouped per change) of the kinds the definition's change conditions
    watch, written since ``snapshot``; the rows of one change are written in one transaction, so a
    change is either wholly in the snapshot or wholly here."""
    conditions = snapshot.definition.conditions()
    kinds = {c.change.kind for _s, _i, c in conditions if isinstance(c.change, ChangeCondition)}
    if not kinds:
        return []
    stmt = select(FactChange).where(_changes_since(session, snapshot, kinds), FactChange.action != "created")
    rows = session.scalars(stmt.order_by(FactChange.kind, FactChange.fact_id, FactChange.id))
    return [list(group) for _key, group in groupby(rows, key=_one_change)]


def _one_change(row: FactChange) -> tuple[Any, ...]:
    """The rows of one change share these (as ``change_matches`` groups them)."""
    return (row.kind, row.fact_id, row.action, row.changed_at, row.cause_ref)


def _findings_from_snapshot(
    session: Session, snapshot: SignalSnapshot, report: EvaluationReport
) -> list[Finding]:
    """The snapshot's findings brought up to date: the items, facts and changes written since it was
    taken are read (and decided) again here, and their snapshot findings dropped."""
    has_items = any(c.item is not None for _s, _i, c in snapshot.definition.conditions())
    recent = _items_written_since(session, snapshot) if has_items else []
    reread = {str(i) for i in recent}
    facts_written, fact_found = _facts_since(session, snapshot, report)
    found = [
        f
        for f in snapshot.found
        if not (f.ref_kind == "item" and f.ref_id in reread) and (f.ref_kind, f.ref_id) not in facts_written
    ]
    report.items += snapshot.items_read
    report.facts += snapshot.facts_read
    report.matches += len(found)
    found.extend(fact_found)
    found.extend(item_findings(snapshot.rules, items_by_id(session, recent), report))
    found.extend(change_findings(snapshot.rules, _changes_written_since(session, snapshot), report))
    return found


def evaluate_signal(
    *,
    session: Session,
    signal_id: str,
    today: date | None = None,
    now: datetime | None = None,
    drop_unmatched: bool = False,
    snapshot: SignalSnapshot | None = None,
) -> EvaluationReport:
    """Check one signal against every stored item and fact, then its deadline.

    Run when a signal is created or its definition changes. The signal is compiled on its own, items are
    narrowed in SQL by what every item condition demands of the source, the date and the entities named
    (through the mention index; never by text), and each remaining item is read once. With a
    ``snapshot`` (:func:`read_findings`) of the same definition and entity names, its findings stand and
    only the items, facts and changes written since it was taken are read here (through indexes), so the
    write transaction stays short; a snapshot of another definition or other names (changed meanwhile)
    is ignored and everything is read here. ``today`` (UTC date, default: the clock's) decides the
    deadline. With ``drop_unmatched`` (after the conditions changed), evidence that no move used and
    that the current conditions no longer match is deleted first; evidence that still matches stays as
    it is and is not announced again.

    Returns an ``EvaluationReport``. Raises ``SignalNotFound``, or ``DefinitionError`` when the stored
    definition names an entity that no longer exists.
    """
    now = now if now is not None else utcnow()
    today = today or now.astimezone(UTC).date()
    defn = definition_of(load_signal(session, signal_id))
    entities = tuple(entities_for(session=session, entity_ids=defn.entity_ids()))
    report = EvaluationReport()
    if snapshot is not None and (snapshot.definition, snapshot.entities) == (defn, entities):
        found = _findings_from_snapshot(session, snapshot, report)
    else:
        rules = compile_signals([defn], list(entities))
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
