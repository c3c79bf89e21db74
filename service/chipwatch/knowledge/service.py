"""Queries and changes of the knowledge base (services flush, never commit)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, get_args

from sqlalchemy import String, and_, bindparam, cast, exists, select
from sqlalchemy.orm import aliased
from sqlalchemy.sql import Select
from sqlmodel import Session, SQLModel

from chipwatch.datasets.kinds import DATASET_KINDS
from chipwatch.kit.pagination import KeysetQuery
from chipwatch.kit.query import like_literal, unknown_value
from chipwatch.kit.rows import model_columns
from chipwatch.knowledge.checks import Invalid, check_row, entity_exists
from chipwatch.knowledge.history import field_changes, record_change
from chipwatch.knowledge.models import KB_TABLES, RESULT_LINK_ROLES, Result, ResultEntity
from chipwatch.knowledge.schemas import API_MODELS
from chipwatch.vocab.facts import DeploymentStatus, FundingStatus

# Listeners called after a fact is created or changed, in the same transaction: (session, kind, row).
fact_listeners: list[Callable[[Session, str, SQLModel], None]] = []
# Listeners called once for many facts of one kind written together (a dataset import): (session, kind,
# rows). A consumer registers both forms; a batch writer calls only these.
facts_listeners: list[Callable[[Session, str, Sequence[SQLModel]], None]] = []


class DuplicateId(ValueError):
    """A create names an id that exists already."""


class FactRetracted(ValueError):
    """A change to a retracted fact (restore it first)."""


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
    choices: tuple[str, ...] = ()
    """A fixed vocabulary the value must belong to (422 naming the parameter otherwise)."""
    vocabulary: bool = False
    """The column holds an open vocabulary (a metric, a round type): a value no row has, retracted rows
    included, is refused with a 422 listing the values rows have, not answered with an empty page."""


_PROVENANCE = [
    Filter("verification", "verification", description="vendor_reported | witnessed | independent"),
    Filter("source", "source_id", description="source id the fact was read from"),
    Filter("reported_by", "reported_by", ref="vendors", description="vendor id that produced the figure"),
]
_IMPORTED = [
    Filter("dataset", "dataset", description="dataset kind the fact was imported from",
           choices=tuple(DATASET_KINDS)),
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
        Filter("kind", "kind", description="chip | system | soc | accelerator", vocabulary=True),
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
        Filter("metric", "metric", description="e.g. single_user_output_speed, throughput_per_kw",
               vocabulary=True),
        Filter("operating_point", "operating_point", description="peak | iso_interactivity | low_latency",
               vocabulary=True),
        *_PROVENANCE,
        *_IMPORTED,
    ],
    "funding-rounds": [
        Filter("vendor", "vendor_id", ref="vendors", description="company funded or bought"),
        Filter("round_type", "round_type", description="e.g. strategic, acquisition", vocabulary=True),
        Filter("acquirer", "acquirer_id", ref="vendors", description="acquiring vendor id"),
        Filter("currency", "currency", description="ISO 4217 code"),
        Filter("status", "status", description="closed | in_discussion", choices=get_args(FundingStatus)),
        *_PROVENANCE,
        *_IMPORTED,
    ],
    "deployments": [
        Filter("chip", "chip_id", ref="chips", description="chip id"),
        Filter("operator", "operator_id", ref="vendors", description="operator vendor id"),
        Filter("status", "status", description="planned | pilot | volume | operational | decommissioned",
               choices=get_args(DeploymentStatus)),
        Filter("min_power_mw", "capacity_mw", mode="gte", description="power capacity at least this, in MW"),
        *_PROVENANCE,
        *_IMPORTED,
    ],
    "claims": [
        Filter("subject", "subject_ids", mode="contains", description="entity id the claim is about"),
        Filter("topic", "topic", description="e.g. price, margin, forecast", vocabulary=True),
        *_PROVENANCE,
    ],
}
"""API path segment -> the list filters its ``GET`` accepts, as query parameters."""


def list_rows(
    *,
    session: Session,
    kind: str,
    values: dict[str, Any],
    cursor: str | None,
    limit: int,
    retracted: bool = False,
) -> dict[str, Any]:
    """One page of ``kind`` rows ordered by id: ``{"items": [row dicts], "next_cursor": str | None}``.

    Each row is a dict of the kind's ``<Name>Public`` fields in the model's order (Python values: dates,
    datetimes, lists), read as columns and JSON-ready for :func:`chipwatch.kit.rows.dump_json`.

    ``values`` maps the query parameters of :data:`FILTERS` to the value asked for (None: no filter).
    Facts in force are listed, or with ``retracted`` only the retracted ones. Raises
    :class:`~chipwatch.knowledge.checks.Invalid` naming every reference filter that names an unknown
    id and every vocabulary filter whose value no row has, and a 422
    :class:`~chipwatch.kit.errors.ApiError` for a malformed cursor.
    """
    active = tuple(
        (flt.param, bool(values[flt.param]) if flt.mode == "retired" else None)
        for flt in FILTERS[kind]
        if values.get(flt.param) is not None
    )
    query = _list_query(kind, retracted, active)
    params = {}
    for flt in FILTERS[kind]:
        value = values.get(flt.param)
        if value is not None and flt.mode in ("contains", "kinds") and not _linked(kind, flt):
            value = f'%"{like_literal(value)}"%'
        params[f"filter_{flt.param}"] = value
    rows, next_cursor = query.page(session, params, cursor=cursor, limit=limit)
    if not rows:
        # Checked only for an empty page: a row found through an id or a value proves it (entities are
        # retracted, never deleted, and a fact names only ids that existed when it was written).
        unknown = [
            (flt.param, f"no {flt.ref.removesuffix('s')} with id {values[flt.param]!r}")
            for flt in FILTERS[kind]
            if flt.ref is not None and values.get(flt.param) is not None
            and not entity_exists(session=session, kind=flt.ref, id_=values[flt.param], retracted=True)
        ]
        unknown += _vocabulary_problems(session, KB_TABLES[kind], FILTERS[kind], values)
        if unknown:
            raise Invalid(unknown)
    return {"items": _views(kind, rows), "next_cursor": next_cursor}


def _linked(kind: str, flt: Filter) -> bool:
    """True when ``flt`` reads through the result_entities index rather than its JSON column."""
    return KB_TABLES[kind] is Result and flt.column in RESULT_LINK_ROLES


@functools.cache
def _list_query(kind: str, retracted: bool, active: tuple[tuple[str, bool | None], ...]) -> KeysetQuery:
    """The page query of ``kind`` with the filters ``active`` names (``(param, value)``, the value for
    the ``retired`` filter, whose statement depends on it), built once; every other value is the bound
    parameter ``filter_<param>``."""
    table = KB_TABLES[kind]
    # The public model's columns, not ORM objects: a list read builds no identity map or model per row.
    stmt = _LIST_SHAPES[kind][4 if retracted else 3]
    keys: tuple[Any, ...] = (table.id,)
    by_param = {flt.param: flt for flt in FILTERS[kind]}
    for param, retired in active:
        flt = by_param[param]
        col = getattr(table, flt.column)
        value = bindparam(f"filter_{param}", type_=None if flt.mode in ("contains", "kinds") else col.type)
        if _linked(kind, flt):
            # Through the result_entities index: the first such filter drives the page (its
            # (role, entity_id, result_id) key is read in id order), any other is a lookup per row.
            link = _RESULT_LINKS[flt.column]
            named = and_(
                link.result_id == Result.id,
                link.role == RESULT_LINK_ROLES[flt.column],
                link.entity_id == bindparam(f"filter_{param}"),
            )
            if len(keys) == 1 and keys[0] is table.id:
                stmt = stmt.join(link, named)
                keys = (link.result_id,)
            else:
                stmt = stmt.where(exists().where(named))
        elif flt.mode == "retired":
            stmt = stmt.where(col.is_not(None) if retired else col.is_(None))
        elif flt.mode == "gte":
            stmt = stmt.where(col >= value)
        elif flt.mode == "after":
            stmt = stmt.where(col > value)
        elif flt.mode in ("contains", "kinds"):
            # JSON lists are stored as text on SQLite and json on PostgreSQL; both render '"id"' inside.
            stmt = stmt.where(cast(col, String).like(bindparam(f"filter_{param}", type_=String), escape="\\"))
        else:
            stmt = stmt.where(col == value)
    return KeysetQuery(stmt, keys=keys, row_key=lambda row: (row.id,))


def _list_shape(kind: str) -> tuple[tuple[Any, ...], tuple[str, ...], type[SQLModel], Select, Select]:
    public = API_MODELS[kind][2]
    table = KB_TABLES[kind]
    columns = model_columns(table, public)
    every = select(*columns)
    in_force = every.where(table.retracted_at.is_(None))
    retracted = every.where(table.retracted_at.is_not(None))
    return columns, tuple(c.key for c in columns), public, in_force, retracted


_LIST_SHAPES = {kind: _list_shape(kind) for kind in KB_TABLES}
"""Per kind: the columns its ``<Name>Public`` shows (in field order), their names, the model, and the
selects of those columns for the facts in force and the retracted ones (built once: coercing some forty
columns costs more than running the page)."""
_RESULT_LINKS = {
    column: aliased(ResultEntity, name=f"link_{role}") for column, role in RESULT_LINK_ROLES.items()
}
"""One alias of ``result_entities`` per linked column, made once (an alias costs a mapper inspection)."""


def _views(kind: str, rows: Iterable[Any]) -> list[dict[str, Any]]:
    """Rows of :data:`_LIST_SHAPES` columns as ``<Name>Public`` dicts; a derived field of the model (the
    funding rounds' ``sources``) is computed by the model's own property, on an unvalidated copy."""
    _columns, names, public, _in_force, _retracted = _LIST_SHAPES[kind]
    views = [dict(zip(names, row, strict=True)) for row in rows]
    derived = tuple(public.model_computed_fields)
    for view in views:
        if derived:
            model = public.model_construct(**view)
            view.update({name: getattr(model, name) for name in derived})
    return views


def _vocabulary_problems(
    session: Session, table: Any, filters: Iterable[Filter], values: dict[str, Any]
) -> list[tuple[str, str]]:
    """``(param, message)`` for each vocabulary filter whose value no row of ``table`` has."""
    problems = []
    for flt in filters:
        value = values.get(flt.param)
        if not flt.vocabulary or value is None:
            continue
        col = getattr(table, flt.column)
        if session.execute(select(col).where(col == value).limit(1)).first() is None:
            known = session.scalars(select(col).where(col.is_not(None)).distinct().limit(500))
            problems.append((flt.param, unknown_value(value, known)))
    return problems


def names_of(*, session: Session, kind: str, ids: Iterable[str]) -> dict[str, str]:
    """Display names of the ``kind`` entities (vendors, chips, models, benchmarks) among ``ids``, in one
    query; ids that name no such entity are absent. Retracted entities keep their names."""
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    table = KB_TABLES[kind]
    rows = session.execute(select(table.id, table.name).where(table.id.in_(wanted)))
    return {id_: name for id_, name in rows}


def get_row(*, session: Session, kind: str, id_: str) -> SQLModel:
    """The ``kind`` row with ``id_``; raises :class:`RowNotFound`."""
    row = session.get(KB_TABLES[kind], id_)
    if row is None:
        raise RowNotFound(kind, id_)
    return row


def create_row(*, session: Session, kind: str, row_in: SQLModel) -> SQLModel:
    """Insert a fact or entity; raises :class:`DuplicateId`, or
    :class:`~chipwatch.knowledge.checks.Invalid` listing every refused field."""
    table = KB_TABLES[kind]
    data = row_in.model_dump()
    existing = session.get(table, data["id"])
    if existing is not None:
        retracted = " (retracted; restore it instead)" if existing.retracted_at is not None else ""
        raise DuplicateId(f"a {kind} row with id {data['id']!r} exists already{retracted}")
    check_row(session=session, kind=kind, data=data)
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

    Raises :class:`RowNotFound`, :class:`FactRetracted`, or
    :class:`~chipwatch.knowledge.checks.Invalid` listing every refused field (ranges are checked on the
    row as it would be after the change).
    """
    row = get_row(session=session, kind=kind, id_=id_)
    if row.retracted_at is not None:
        at = row.retracted_at.isoformat()
        raise FactRetracted(f"{kind} {id_!r} was retracted at {at}; restore it first")
    changes = changes_in.model_dump(exclude_unset=True)
    check_row(session=session, kind=kind, data=changes, merged={**row.model_dump(), **changes})
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
