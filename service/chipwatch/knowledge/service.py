"""Queries and changes of the knowledge base (services flush, never commit)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import String, cast, select
from sqlmodel import Session, SQLModel

from chipwatch.kit.pagination import keyset_page
from chipwatch.knowledge.history import field_changes, record_change
from chipwatch.knowledge.models import KB_TABLES, Vendor
from chipwatch.vocab.entities import ENTITY_COLLECTIONS

# Listeners called after a fact is created or changed, in the same transaction: (session, kind, row).
fact_listeners: list[Callable[[Session, str, SQLModel], None]] = []
# Listeners called once for many facts of one kind written together (a dataset import): (session, kind,
# rows). A consumer registers both forms; a batch writer calls only these.
facts_listeners: list[Callable[[Session, str, Sequence[SQLModel]], None]] = []


class UnknownReference(ValueError):
    """A field names an id that is not in the knowledge base."""

    def __init__(self, field: str, ref_id: str, kind: str) -> None:
        super().__init__(f"{field}: no {kind} with id {ref_id!r}")
        self.field, self.ref_id, self.kind = field, ref_id, kind


class DuplicateId(ValueError):
    """A create names an id that exists already."""


class RowNotFound(LookupError):
    """No ``kind`` row has id ``id_``."""

    def __init__(self, kind: str, id_: str) -> None:
        super().__init__(f"no {kind} row with id {id_!r}")
        self.kind, self.id_ = kind, id_


@dataclass(frozen=True)
class Filter:
    """One list filter: query parameter ``param`` tests column ``column``.

    ``mode`` is ``eq`` (equality), ``contains`` (a JSON list column holds the value), ``kinds`` (same,
    without a reference check), ``gte`` (a number at least the value), ``after`` (a date after the
    value) or ``retired`` (true: only retired facts; false, the default: only current ones).  ``ref``
    names the KB kind whose ids the value must be (422 otherwise).
    """

    param: str
    column: str
    mode: str = "eq"
    ref: str | None = None
    description: str = ""


_PROVENANCE = [
    Filter("verification", "verification", description="vendor_reported | witnessed | independent"),
    Filter("source", "source_id", description="source id the fact was read from"),
    Filter("reported_by", "reported_by", ref="vendors", description="vendor id that produced the figure"),
]
_IMPORTED = [
    Filter("dataset", "dataset", description="dataset kind the fact was imported from"),
    Filter("retired", "retired_at", mode="retired", description="true: facts a dataset's newer version "
           "no longer lists (kept, never deleted); default false: current facts"),
]
FILTERS: dict[str, list[Filter]] = {
    "vendors": [
        Filter("kind", "kinds", mode="kinds", description="e.g. chip_maker, model_lab, cloud"),
        Filter("country", "country", description="ISO 3166-1 alpha-2"),
        Filter("owner", "owner_id", ref="vendors", description="parent vendor id"),
    ],
    "chips": [
        Filter("vendor", "vendor_id", ref="vendors", description="vendor id"),
        Filter("kind", "kind", description="chip | system | soc | accelerator"),
        Filter("released_after", "released_on", mode="after", description="released after this date"),
        *_PROVENANCE,
        *_IMPORTED,
    ],
    "models": [Filter("developer", "developer_id", ref="vendors", description="vendor id"), *_PROVENANCE],
    "benchmarks": [Filter("owner", "owner_id", ref="vendors", description="vendor id")],
    "results": [
        Filter("chip", "chip_ids", mode="contains", ref="chips", description="system under test"),
        Filter("baseline", "baseline_ids", mode="contains", ref="chips", description="baseline chip"),
        Filter("model", "model_ids", mode="contains", ref="models", description="model id"),
        Filter("benchmark", "benchmark_id", ref="benchmarks", description="benchmark id"),
        Filter("metric", "metric", description="e.g. single_user_output_speed, throughput_per_kw"),
        Filter("operating_point", "operating_point", description="peak | iso_interactivity | low_latency"),
        *_PROVENANCE,
        *_IMPORTED,
    ],
    "funding-rounds": [
        Filter("vendor", "vendor_id", ref="vendors", description="company funded or bought"),
        Filter("round_type", "round_type", description="e.g. strategic, acquisition"),
        Filter("acquirer", "acquirer_id", ref="vendors", description="acquiring vendor id"),
        Filter("currency", "currency", description="ISO 4217 code"),
        Filter("status", "status", description="closed | in_discussion"),
        *_PROVENANCE,
        *_IMPORTED,
    ],
    "deployments": [
        Filter("chip", "chip_id", ref="chips", description="chip id"),
        Filter("operator", "operator_id", ref="vendors", description="operator vendor id"),
        Filter("status", "status", description="planned | pilot | volume | operational | decommissioned"),
        Filter("min_power_mw", "capacity_mw", mode="gte", description="power capacity at least this, in MW"),
        *_PROVENANCE,
        *_IMPORTED,
    ],
    "claims": [
        Filter("subject", "subject_ids", mode="contains", description="entity id the claim is about"),
        Filter("topic", "topic", description="e.g. price, margin, forecast"),
        *_PROVENANCE,
    ],
}
"""API path segment -> the list filters its ``GET`` accepts, as query parameters."""


# Columns that name other entities, checked on create/update: column -> (kind, is_list).
REFERENCES: dict[str, tuple[str, bool]] = {
    "vendor_id": ("vendors", False),
    "owner_id": ("vendors", False),
    "developer_id": ("vendors", False),
    "acquirer_id": ("vendors", False),
    "reported_by": ("vendors", False),
    "witnessed_by": ("vendors", False),
    "reproduced_by": ("vendors", False),
    "operator_id": ("vendors", False),
    "chip_id": ("chips", False),
    "chip_ids": ("chips", True),
    "baseline_ids": ("chips", True),
    "model_ids": ("models", True),
    "benchmark_id": ("benchmarks", False),
    "subject_ids": (None, True),  # any entity kind
}


def entity_exists(*, session: Session, kind: str | None, id_: str) -> bool:
    """True when ``id_`` is a row of ``kind`` (any named entity kind when ``kind`` is None)."""
    kinds = tuple(ENTITY_COLLECTIONS.values()) if kind is None else (kind,)
    return any(session.get(KB_TABLES[k], id_) is not None for k in kinds)


class InvalidValue(ValueError):
    """A field's value is not acceptable (a required field set to null, an oversize alias)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


MAX_ALIAS_CHARS = 200  # the same bound the matcher applies (signals.rules.MAX_PHRASE_CHARS)


def check_values(*, kind: str, data: dict[str, Any]) -> None:
    """Raise :class:`InvalidValue` for a null in a required column or an empty or oversize alias."""
    table = KB_TABLES[kind]
    for field, value in data.items():
        column = table.__table__.columns.get(field)
        if value is None and column is not None and not column.nullable:
            raise InvalidValue(field, "must not be null")
    for i, alias in enumerate(data.get("aliases") or []):
        if not isinstance(alias, str) or not alias.strip() or len(alias) > MAX_ALIAS_CHARS:
            message = f"must be non-empty text of at most {MAX_ALIAS_CHARS} characters"
            raise InvalidValue(f"aliases[{i}]", message)


def _source_exists(session: Session, source_id: str) -> bool:
    # Followed through the provenance column's foreign key, so the knowledge base names no table of
    # the sources domain (which reads the entity tables for mention matching).
    (fk,) = Vendor.__table__.c.source_id.foreign_keys  # type: ignore[attr-defined]
    return session.execute(select(fk.column).where(fk.column == source_id)).first() is not None


def check_references(*, session: Session, data: dict[str, Any]) -> None:
    """Raise :class:`UnknownReference` for the first field naming an unknown entity or source."""
    for field, value in data.items():
        if value is None:
            continue
        if field == "source_id":
            if not _source_exists(session, value):
                raise UnknownReference(field, value, "source")
            continue
        ref = REFERENCES.get(field)
        if ref is None:
            continue
        kind, is_list = ref
        for ref_id in value if is_list else [value]:
            if not entity_exists(session=session, kind=kind, id_=ref_id):
                raise UnknownReference(field, ref_id, kind or "entity")


def list_rows(
    *, session: Session, kind: str, values: dict[str, Any], cursor: str | None, limit: int
) -> dict[str, Any]:
    """One page of ``kind`` rows ordered by id: ``{"items": [rows], "next_cursor": str | None}``.

    ``values`` maps the query parameters of :data:`FILTERS` to the value asked for (None: no filter).
    Raises :class:`UnknownReference` when a reference filter names an unknown id, and a 422
    :class:`~chipwatch.kit.errors.ApiError` for a malformed cursor.
    """
    table = KB_TABLES[kind]
    stmt = select(table)
    for flt in FILTERS[kind]:
        value = values.get(flt.param)
        if value is None:
            continue
        if flt.ref is not None and not entity_exists(session=session, kind=flt.ref, id_=value):
            raise UnknownReference(flt.param, value, flt.ref)
        col = getattr(table, flt.column)
        if flt.mode == "retired":
            stmt = stmt.where(col.is_not(None) if value else col.is_(None))
        elif flt.mode == "gte":
            stmt = stmt.where(col >= value)
        elif flt.mode == "after":
            stmt = stmt.where(col > value)
        elif flt.mode in ("contains", "kinds"):
            # JSON lists are stored as text on SQLite and json on PostgreSQL; both render '"id"' inside.
            stmt = stmt.where(cast(col, String).like(f'%"{value}"%'))
        else:
            stmt = stmt.where(col == value)
    rows, next_cursor = keyset_page(session, stmt, keys=(table.id,), cursor=cursor, limit=limit)
    return {"items": rows, "next_cursor": next_cursor}


def get_row(*, session: Session, kind: str, id_: str) -> SQLModel:
    """The ``kind`` row with ``id_``; raises :class:`RowNotFound`."""
    row = session.get(KB_TABLES[kind], id_)
    if row is None:
        raise RowNotFound(kind, id_)
    return row


def create_row(*, session: Session, kind: str, row_in: SQLModel) -> SQLModel:
    """Insert a fact or entity; raises :class:`DuplicateId` or :class:`UnknownReference`."""
    table = KB_TABLES[kind]
    data = row_in.model_dump()
    if session.get(table, data["id"]) is not None:
        raise DuplicateId(f"a {kind} row with id {data['id']!r} exists already")
    check_values(kind=kind, data=data)
    check_references(session=session, data=data)
    row = table(**data)
    session.add(row)
    session.flush()
    record_change(session=session, kind=kind, fact_id=row.id, action="created", cause="api", actor="admin")
    _notify(session, kind, row)
    return row


def update_row(*, session: Session, kind: str, id_: str, changes_in: SQLModel) -> SQLModel:
    """Apply the fields set in ``changes_in`` to the ``kind`` row ``id_``; returns the row.

    Every field whose value changes is recorded in the fact's history (cause ``api``) and announced
    by one ``fact.changed`` event; a patch that changes nothing records nothing.

    Raises :class:`RowNotFound`, :class:`UnknownReference` or :class:`InvalidValue`.
    """
    row = get_row(session=session, kind=kind, id_=id_)
    changes = changes_in.model_dump(exclude_unset=True)
    check_values(kind=kind, data=changes)
    check_references(session=session, data=changes)
    changed = field_changes({key: getattr(row, key) for key in changes}, changes)
    for key, value in changes.items():
        setattr(row, key, value)
    session.add(row)
    session.flush()
    record_change(session=session, kind=kind, fact_id=id_, action="updated", changes=changed, cause="api",
                  actor="admin")
    _notify(session, kind, row)
    return row


def _notify(session: Session, kind: str, row: SQLModel) -> None:
    for listener in fact_listeners:
        listener(session, kind, row)


def notify_facts(session: Session, kind: str, rows: Sequence[SQLModel]) -> None:
    """Call the batch fact listeners once with the ``kind`` rows written outside this module (a dataset
    import), in ``session``'s transaction; nothing when ``rows`` is empty."""
    if rows:
        for listener in facts_listeners:
            listener(session, kind, rows)
