"""Writing an import's plan in the caller's transaction (flushes, never commits).

New facts go in with one executemany per table, and their ``created`` history with another; changed
facts are read once and updated field by field, each change recorded in the fact's history with one
``fact.changed`` event (the history rows and the events of all changes: one executemany each); facts the
new version lacks are retired (kept, marked, announced). Rows waiting
for an alias replace those an earlier version left waiting.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from operator import itemgetter
from typing import Any

import orjson
from sqlalchemy import JSON, Table, bindparam, delete, insert, select, update
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator
from sqlmodel import Session, SQLModel

from chipwatch.imports.build import Built
from chipwatch.imports.models import Import, WaitingRow
from chipwatch.imports.plan import Candidate, Existing, Plan, decide, id_choices
from chipwatch.knowledge.events import FACT_CHANGED, change_listeners, fact_changed_data
from chipwatch.knowledge.history import plain
from chipwatch.knowledge.models import (
    KB_TABLES,
    RESULT_LINK_ROLES,
    FactChange,
    Result,
    ResultEntity,
    link_result_rows,
    result_link_rows,
)
from chipwatch.knowledge.service import notify_facts
from chipwatch.outbox.emit import emit_many

BATCH = 500
# Follows from the stated figures; its inputs' changes are the history.
NOT_HISTORY = frozenset({"derived"})


@dataclass(slots=True)
class Applied:
    """What the write did: the changed fields of each updated fact, the retired ids, and the rows
    written (new and changed), for the fact listeners."""

    changed: dict[str, list[str]] = field(default_factory=dict)
    retired: list[str] = field(default_factory=list)
    written: list[Any] = field(default_factory=list)


def _chunks(items: list[Any], size: int = BATCH) -> Iterable[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


@dataclass(frozen=True, slots=True)
class _Reads:
    """The reads of a plan from one fact table, built once: SQLAlchemy then finds each compiled form
    by the statement object's memoised cache key instead of building the statement and its key again."""

    of_dataset: Any
    of_keys: Any
    subjects: Any
    ids: Any


@cache
def _reads(kb_kind: str) -> _Reads:
    table = KB_TABLES[kb_kind]
    columns = (table.id, table.row_key, table.import_sha256, table.retired_at, table.dataset_scope)
    of_dataset = select(*columns).where(table.dataset == bindparam("dataset"))
    return _Reads(
        of_dataset=of_dataset,
        of_keys=of_dataset.where(table.row_key.in_(bindparam("keys", expanding=True))),
        subjects=select(table.id, table.dataset, table.retired_at).where(
            table.id.in_(bindparam("ids", expanding=True))
        ),
        ids=select(table.id).where(table.id.in_(bindparam("ids", expanding=True))),
    )


def load_existing(
    *, session: Session, kb_kind: str, dataset: str, row_keys: set[str] | None = None
) -> dict[str, Existing]:
    """Row key -> the fact ``dataset`` wrote in ``kb_kind``, retired or not: all of them, or only those
    of ``row_keys`` (a file that is no whole version needs no others, however many the dataset has)."""
    reads = _reads(kb_kind)
    # Plain reads on the session's connection: nothing of the import is pending in the session yet.
    connection = session.connection()
    if row_keys is None:
        results = [connection.execute(reads.of_dataset, {"dataset": dataset})]
    else:
        results = [
            connection.execute(reads.of_keys, {"dataset": dataset, "keys": chunk})
            for chunk in _chunks(sorted(row_keys))
        ]
    return {
        row_key: Existing(fact_id, row_key, digest, retired_at is not None, scope)
        for result in results
        for fact_id, row_key, digest, retired_at, scope in result
        if row_key is not None
    }


def load_subjects(*, session: Session, kb_kind: str, ids: set[str], dataset: str) -> dict[str, Existing]:
    """Facts named by exact aliases that no import of ``dataset`` has written yet."""
    statement = _reads(kb_kind).subjects
    connection = session.connection()
    found: dict[str, Existing] = {}
    for chunk in _chunks(sorted(ids)):
        for fact_id, fact_dataset, retired_at in connection.execute(statement, {"ids": chunk}):
            if fact_dataset != dataset:
                found[fact_id] = Existing(fact_id, None, None, retired_at is not None)
    return found


def taken_ids(*, session: Session, kb_kind: str, candidates: list[Candidate]) -> set[str]:
    """The ids of the ``kb_kind`` table that new facts for ``candidates`` could be given
    (:func:`~chipwatch.imports.plan.id_choices`): the hinted and row-key ids that exist, and where a
    row-key id exists, every id extending it (its ``2``, ``3``... successors). Reads those, not the
    whole table."""
    table = KB_TABLES[kb_kind]
    choices = [id_choices(c.built) for c in candidates if not c.built.skip and not c.built.waiting]
    wanted = sorted({choice for pair in choices for choice in pair if choice})
    statement = _reads(kb_kind).ids
    connection = session.connection()
    taken: set[str] = set()
    for chunk in _chunks(wanted):
        taken.update(connection.execute(statement, {"ids": chunk}).scalars())
    for _hinted, base in choices:
        if base in taken:
            taken.update(session.scalars(select(table.id).where(table.id.startswith(base, autoescape=True))))
    return taken


def plan_import(
    *,
    session: Session,
    kb_kind: str,
    dataset: str,
    candidates: list[Candidate],
    scopes: set[str | None] | None,
) -> Plan:
    """The plan for ``candidates`` against what is stored: the facts ``dataset`` wrote (all of them for
    a whole version, else those of the candidates' row keys), the facts exact aliases name, and the ids
    new facts could take (see :func:`chipwatch.imports.plan.decide`)."""
    row_keys = None if scopes is not None else {c.built.row_key for c in candidates}
    existing = load_existing(session=session, kb_kind=kb_kind, dataset=dataset, row_keys=row_keys)
    wanted = {c.built.subject_id for c in candidates if c.built.subject_id}
    subjects = load_subjects(session=session, kb_kind=kb_kind, ids=wanted, dataset=dataset)
    # Only a record with no stored fact can need a new id: a new version of a dataset, whose rows are
    # nearly all stored, must not look up (one query each) the successors of ids its own facts hold.
    fresh = [c for c in candidates if c.built.row_key not in existing]
    taken = taken_ids(session=session, kb_kind=kb_kind, candidates=fresh)
    return decide(candidates, existing=existing, subjects=subjects, taken=taken, scopes=scopes)


class JSONText(TypeDecorator):
    """A JSON column's value the import has already serialised (orjson, several times faster than the
    standard library's encoder SQLAlchemy calls per value): bound as it is, still typed (and on
    PostgreSQL cast) as JSON."""

    impl = JSON
    cache_ok = True

    def bind_processor(self, dialect):  # noqa: ARG002 - the value is JSON text already
        """No processing: the value is JSON text."""
        return None


@dataclass(frozen=True, slots=True)
class RowInsert:
    """An insert of rows that share their keys, compiled once for a dialect: the driver's SQL text, the
    keys in the order the driver takes them (positional) or None (named), and for each key what turns
    a value into the driver's (None: it is taken as it is). JSON columns are serialised by orjson."""

    sql: str
    order: tuple[str, ...] | None
    convert: tuple[tuple[str, Callable[[Any], Any]], ...]


_ROW_INSERTS: dict[tuple[Any, ...], RowInsert] = {}
_NOTHING = object()


def row_insert(table: Table, keys: tuple[str, ...], dialect: Dialect) -> RowInsert:
    """The :class:`RowInsert` of ``keys`` into ``table`` for ``dialect``, compiled once per process.
    Each value is converted as SQLAlchemy's executemany would bind it (the column type's bind
    processor for the dialect), except JSON values, bound as orjson's text."""
    cache_key = (table, keys, dialect.name, dialect.driver, dialect.paramstyle)
    found = _ROW_INSERTS.get(cache_key)
    if found is not None:
        return found
    params, convert = {}, []
    for key in keys:
        column = table.c[key]
        if isinstance(column.type, JSON):
            params[key] = bindparam(key, type_=JSONText())
            convert.append((key, _json_text))
            continue
        params[key] = bindparam(key, type_=column.type)
        processor = column.type.dialect_impl(dialect).bind_processor(dialect)
        if processor is not None:
            convert.append((key, processor))
    compiled = insert(table).values(params).compile(dialect=dialect)
    order = tuple(compiled.positiontup) if compiled.positional else None  # type: ignore[arg-type]
    found = RowInsert(compiled.string, order, tuple(convert))
    _ROW_INSERTS[cache_key] = found
    return found


def _json_text(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def insert_rows(session: Session, table: type[SQLModel] | Table, rows: list[dict[str, Any]]) -> None:
    """Insert ``rows`` (every one with the same keys) into ``table``: one driver executemany per
    :data:`BATCH` rows of a statement compiled once (:func:`row_insert`), each row's values converted
    as SQLAlchemy would bind them, JSON values serialised by orjson. SQLAlchemy's own executemany
    rebuilt a parameter dict of every bind for every row and took twice the time of the rest of
    the insert."""
    if not rows:
        return
    table = getattr(table, "__table__", table)
    connection = session.connection()
    plan = row_insert(table, tuple(rows[0]), connection.dialect)  # type: ignore[arg-type]
    convert = plan.convert
    bound: list[Any] = []
    # Rows of one import share many values (its time, its id, a default list): a value that is the
    # same object as the previous row's takes that row's converted value instead of converting again.
    last_in: list[Any] = [_NOTHING] * len(convert)
    last_out: list[Any] = [None] * len(convert)
    if plan.order is not None:
        positions = {name: index for index, name in enumerate(plan.order)}
        pick = itemgetter(*plan.order) if len(plan.order) > 1 else (lambda row: (row[plan.order[0]],))
        picked = list(map(pick, rows))
        if not convert:
            bound = picked
        else:
            # Column by column: the rows' tuples are taken apart and put together again by zip, in C.
            columns: list[Any] = list(zip(*picked, strict=True))
            for key, to in convert:
                index, out = positions[key], []
                previous, converted = _NOTHING, None
                for value in columns[index]:
                    if value is not previous:
                        previous, converted = value, to(value)
                    out.append(converted)
                columns[index] = out
            bound = list(zip(*columns, strict=True))
    else:
        for row in rows:
            copy = row.copy()
            for n, (key, to) in enumerate(convert):
                value = copy[key]
                if value is last_in[n]:
                    copy[key] = last_out[n]
                else:
                    last_in[n], last_out[n] = value, (converted := to(value))
                    copy[key] = converted
            bound.append(copy)
    for chunk in _chunks(bound):
        connection.exec_driver_sql(plan.sql, chunk)


@cache
def _defaults(table: type[SQLModel]) -> dict[str, Any]:
    columns = {c.name for c in table.__table__.columns}  # type: ignore[attr-defined]
    return {
        name: info.get_default(call_default_factory=True)
        for name, info in table.model_fields.items()
        if name in columns
    }


def _attributes(old: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
    """A dataset's attributes over the fact's own: a key the dataset leaves blank is removed."""
    merged = {**(old or {}), **new}
    return {key: value for key, value in merged.items() if value is not None}


def _provenance(built: Built, digest: str, imp: Import, version: str) -> dict[str, Any]:
    return {
        "dataset": imp.kind,
        "dataset_scope": built.scope,
        "dataset_version": version,
        "import_id": imp.id,
        "row_key": built.row_key,
        "import_sha256": digest,
        "retired_at": None,
        "retired_in_import_id": None,
    }


class WrittenFact(dict):
    """A new fact's column values, read like its table row (attribute access and ``model_dump()``) by
    the fact listeners, without building an ORM object for each of thousands of rows."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def model_dump(self) -> dict[str, Any]:
        """The values as a plain dict, as ``SQLModel.model_dump`` gives them."""
        return dict(self)


def insert_facts(
    *, session: Session, plan: Plan, imp: Import, version: str, kb_kind: str, at: datetime
) -> list[WrittenFact]:
    """Insert the plan's new facts and their ``created`` history; returns their values (``WrittenFact``)."""
    table = KB_TABLES[kb_kind]
    defaults = _defaults(table)
    # The provenance every new fact of this import shares, made once (see _provenance).
    shared = {"dataset": imp.kind, "dataset_version": version, "import_id": imp.id, "retired_at": None,
              "retired_in_import_id": None}
    rows = []
    for fact_id, built, digest in plan.inserts:
        values = {
            **defaults,
            **built.create,
            **built.values,
            **shared,
            "dataset_scope": built.scope,
            "row_key": built.row_key,
            "import_sha256": digest,
            "id": fact_id,
        }
        attributes = built.values.get("attributes")
        # _attributes over no earlier attributes: the blanks dropped (most rows have none to drop).
        if attributes is not None and None in attributes.values():
            values["attributes"] = {key: value for key, value in attributes.items() if value is not None}
        rows.append(values)
    insert_rows(session, table, rows)
    if table is Result:  # a Core insert: the results' entity index is written here, not by the ORM
        # New ids have no index rows yet: only the insert of link_result_rows, without its delete.
        insert_rows(session, ResultEntity, [link for row in rows for link in result_link_rows(row)])
    # Their ``created`` history, as knowledge.history.record_created writes it (no event for a creation).
    created = {
        "kind": kb_kind, "action": "created", "field": None, "old_value": None, "new_value": None,
        "cause": "import", "cause_ref": str(imp.id), "actor": "import", "changed_at": at,
    }
    insert_rows(session, FactChange, [{**created, "fact_id": row["id"]} for row in rows])
    return [WrittenFact(row) for row in rows]


def _field_changes(row: Mapping[str, Any], values: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    changes: dict[str, tuple[Any, Any]] = {}
    for name, new in values.items():
        old = row[name]
        if name in NOT_HISTORY:
            continue
        if name == "attributes":
            keys = sorted(set(old or {}) | set(new))
            for key in keys:
                before, after = plain((old or {}).get(key)), plain(new.get(key))
                if before != after:
                    changes[f"attributes.{key}"] = (before, after)
        elif plain(old) != plain(new):
            changes[name] = (plain(old), plain(new))
    return changes


@dataclass(slots=True)
class HistoryEntry:
    """One written history row, read like a :class:`~chipwatch.knowledge.models.FactChange` (the
    ``fact.changed`` payload and the change listeners read its attributes) without an ORM object."""

    id: int
    kind: str
    fact_id: str
    action: str
    field: str | None
    old_value: Any
    new_value: Any
    cause: str
    cause_ref: str | None
    actor: str | None
    changed_at: datetime


def record_changes(
    *,
    session: Session,
    kb_kind: str,
    changes: list[tuple[str, str, dict[str, tuple[Any, Any]] | None]],
    imp: Import,
    at: datetime,
) -> list[list[HistoryEntry]]:
    """Record many changes of ``kb_kind`` facts made by import ``imp``: ``(fact id, action, {field: (old,
    new)} or None)`` each. The history rows of them all go in with one executemany (their ids read
    back), and one ``fact.changed`` event per change with another, as
    :func:`chipwatch.knowledge.history.record_change` writes them one change at a time. Returns the
    history rows of each change, for the change listeners."""
    common = {"kind": kb_kind, "cause": "import", "cause_ref": str(imp.id), "actor": "import"}
    rows: list[dict[str, Any]] = []
    spans: list[tuple[int, int]] = []
    for fact_id, action, fields in changes:
        start = len(rows)
        head = {**common, "fact_id": fact_id, "action": action}
        if fields:
            rows += [
                {**head, "field": name, "old_value": old, "new_value": new, "changed_at": at}
                for name, (old, new) in fields.items()
            ]
        else:
            rows.append({**head, "field": None, "old_value": None, "new_value": None, "changed_at": at})
        spans.append((start, len(rows)))
    if not rows:
        return []
    table = FactChange.__table__  # type: ignore[attr-defined]
    insert_rows(session, table, rows)  # every row has the same keys: one compiled executemany
    # The ids read back in one query per BATCH facts (through the (kind, fact_id) index), not returned
    # by the insert: RETURNING in parameter order runs one statement per row. Within one import a fact
    # has one row per action and field; in id order, the rows just written are the ones kept.
    ids: dict[tuple[str, str, str | None], int] = {}
    statement, connection = _written_ids(kb_kind), session.connection()
    for chunk in _chunks(sorted({fact_id for fact_id, _a, _f in changes})):
        found = connection.execute(statement, {"ids": chunk, "import_ref": str(imp.id)})
        ids.update({(fact_id, action, name): id_ for id_, fact_id, action, name in found})
    entries = [HistoryEntry(id=ids[(row["fact_id"], row["action"], row["field"])], **row) for row in rows]
    groups = [entries[start:end] for start, end in spans]
    emit_many(session, FACT_CHANGED, [fact_changed_data(group) for group in groups])
    return groups


@dataclass(frozen=True, slots=True)
class _UpdateStatements:
    rows: Any
    update: Any


@cache
def _update_statements(table: Table) -> _UpdateStatements:
    """The read of facts by their ids (bound as ``ids``) and the update of one fact by its id (bound as
    ``_fact_id``; the columns it sets are the keys of the parameters it runs with), built once per
    table: building a select of every column and its cache key again cost more than running it."""
    return _UpdateStatements(
        rows=select(table).where(table.c.id.in_(bindparam("ids", expanding=True))),
        update=update(table).where(table.c.id == bindparam("_fact_id")),
    )


@cache
def _written_ids(kb_kind: str) -> Any:
    """The read back of the ids of the history rows an import just wrote for some facts, built once."""
    table = FactChange.__table__  # type: ignore[attr-defined]
    return select(table.c.id, table.c.fact_id, table.c.action, table.c.field).where(
        table.c.kind == kb_kind,
        table.c.fact_id.in_(bindparam("ids", expanding=True)),
        table.c.cause == "import",
        table.c.cause_ref == bindparam("import_ref"),
        table.c.action != "created",
    ).order_by(table.c.id)


def update_facts(
    *, session: Session, plan: Plan, imp: Import, version: str, kb_kind: str, at: datetime, applied: Applied
) -> list[tuple[str, str, dict[str, tuple[Any, Any]] | None]]:
    """Apply the plan's changed and restored facts field by field; returns their changes for
    :func:`record_changes` (restorations, then field updates, per fact).

    Through Core, without ORM objects: the rows are read once, written with one executemany per set of
    columns, and handed to the fact listeners as their new values (``WrittenFact``). A result whose
    chips, baselines or models change gets its entity index rows replaced, as the ORM's update event
    does; an instance of a fact the session already holds is expired so that it reads the new values."""
    model = KB_TABLES[kb_kind]
    table: Table = model.__table__  # type: ignore[attr-defined]
    wanted = {fact_id: (built, digest) for fact_id, built, digest in plan.updates}
    out: list[tuple[str, str, dict[str, tuple[Any, Any]] | None]] = []
    by_keys: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    relink: list[WrittenFact] = []
    statements = _update_statements(table)
    connection = session.connection()  # nothing of the import is pending in the session
    for chunk in _chunks(sorted(wanted)):
        for row in connection.execute(statements.rows, {"ids": chunk}).mappings():
            fact_id = row["id"]
            built, digest = wanted[fact_id]
            values = dict(built.values)
            if "attributes" in values:
                values["attributes"] = _attributes(row["attributes"], values["attributes"])
            changes = _field_changes(row, values)
            new = {**values, **_provenance(built, digest, imp, version)}
            by_keys.setdefault(tuple(new), []).append({**new, "_fact_id": fact_id})
            written = WrittenFact({**row, **new})
            applied.written.append(written)
            if model is Result and any(row[role] != written[role] for role in RESULT_LINK_ROLES):
                relink.append(written)
            if fact_id in plan.restores:
                out.append((fact_id, "restored", None))
            if changes:
                out.append((fact_id, "updated", changes))
                applied.changed[fact_id] = list(changes)
    for params in by_keys.values():
        for chunk in _chunks(params):  # one executemany per set of columns
            connection.execute(statements.update, chunk)
    if relink:
        link_result_rows(session.connection(), relink)
    held_by_session = session.identity_map
    for fact_id in wanted if len(held_by_session) else ():
        held = held_by_session.get(session.identity_key(model, fact_id))
        if held is not None:
            session.expire(held)
    return out


def retire_facts(*, session: Session, plan: Plan, imp: Import, kb_kind: str, at: datetime) -> list[str]:
    """Mark the plan's missing facts retired in this import (kept, never deleted); their history and
    announcements are the caller's (:func:`record_changes`)."""
    table = KB_TABLES[kb_kind]
    for chunk in _chunks(plan.retire):
        session.execute(
            update(table).where(table.id.in_(chunk)).values(retired_at=at, retired_in_import_id=imp.id)
        )
    return list(plan.retire)


@dataclass(frozen=True, slots=True)
class _WaitingDeletes:
    unscoped: Any
    of_scope: Any
    of_keys: Any


@cache
def _waiting_deletes() -> _WaitingDeletes:
    """The deletes of waiting rows an import replaces, built once (see :class:`_Reads`)."""
    table = WaitingRow.__table__  # type: ignore[attr-defined]
    of_dataset = delete(table).where(table.c.dataset == bindparam("dataset"))
    return _WaitingDeletes(
        unscoped=of_dataset.where(table.c.dataset_scope.is_(None)),
        of_scope=of_dataset.where(table.c.dataset_scope == bindparam("scope")),
        of_keys=of_dataset.where(table.c.row_key.in_(bindparam("keys", expanding=True))),
    )


def replace_waiting(
    *, session: Session, plan: Plan, imp: Import, version: str, scopes: set[str | None] | None, at: datetime
) -> None:
    """Rows of this file that wait for an alias replace the ones waiting before: all of the file's scope
    for a whole version, else those with the same keys."""
    deletes = _waiting_deletes()
    connection = session.connection()
    if scopes is not None:
        for scope in scopes:
            if scope is None:
                connection.execute(deletes.unscoped, {"dataset": imp.kind})
            else:
                connection.execute(deletes.of_scope, {"dataset": imp.kind, "scope": scope})
    else:
        for chunk in _chunks(sorted(plan.keys)):
            connection.execute(deletes.of_keys, {"dataset": imp.kind, "keys": chunk})
    # One executemany, as for new facts (a file can hold thousands of such rows).
    insert_rows(session, WaitingRow, [waiting_row(candidate, imp, version, at) for candidate in plan.waiting])


def waiting_row(candidate: Candidate, imp: Import, version: str, at: datetime) -> dict[str, Any]:
    """The column values of ``candidate``'s waiting row, with its unresolved names."""
    built = candidate.built
    return {
        "dataset": imp.kind,
        "dataset_scope": built.scope,
        "row_key": built.row_key,
        "import_id": imp.id,
        "dataset_version": version,
        # The row as its file numbers it (a batch numbers its candidates across files).
        "record": {"row": candidate.row, **candidate.plain},
        "names": [{"name": u.name, "kind": u.kind, "reason": u.reason} for u in built.waiting],
        "since": at,
    }


def write_plan(
    *, session: Session, plan: Plan, imp: Import, version: str, kb_kind: str, at: datetime
) -> Applied:
    """Write the plan: inserts, then updates and retirements with their history and ``fact.changed``
    events (all of them in one executemany each), then hand the changes to the change listeners in one
    call and every written fact to the fact listeners. Rows waiting for an alias are the caller's
    (:func:`replace_waiting`)."""
    applied = Applied(
        written=insert_facts(session=session, plan=plan, imp=imp, version=version, kb_kind=kb_kind, at=at)
    )
    changes = update_facts(
        session=session, plan=plan, imp=imp, version=version, kb_kind=kb_kind, at=at, applied=applied
    )
    applied.retired = retire_facts(session=session, plan=plan, imp=imp, kb_kind=kb_kind, at=at)
    changes += [(fact_id, "retired", None) for fact_id in applied.retired]
    groups = record_changes(session=session, kb_kind=kb_kind, changes=changes, imp=imp, at=at)
    if groups:
        for listener in change_listeners:
            listener(session, groups)
    notify_facts(session, kb_kind, applied.written)
    return applied
