"""Knowledge-base tables (their API models are in :mod:`chipwatch.knowledge.schemas`).

Every fact row carries provenance (see DESIGN.md, "Knowledge base"): the ``source_id`` it was read from,
who reported it (``reported_by``), who watched it (``witnessed_by``), who reproduced it independently
(``reproduced_by``), a verification level, and dates with their precision.  Ids are readable slugs.
Ranges ("1.5x to 1.9x") keep ``value_min`` and ``value_max``; ``value`` then holds the midpoint.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator
from pydantic_core import PydanticCustomError
from sqlalchemy import JSON, Float, Index, String, Text, delete, event, insert, inspect
from sqlalchemy.engine import Connection
from sqlmodel import Field, Session, SQLModel

from chipwatch.kit.time import utcnow
from chipwatch.types import UTCDateTime
from chipwatch.vocab.entities import EntityKind
from chipwatch.vocab.facts import ChangeCause, FactAction
from chipwatch.vocab.verification import Verification

DatePrecision = Literal["day", "month", "quarter", "year"]
Comparator = Literal["eq", "approx", "gt", "gte", "lt", "lte", "range"]


COUNT_MAX = 2**31 - 1
"""Largest count (tokens, units) a row stores: the columns are INTEGER, 32-bit on PostgreSQL."""


class Provenance(SQLModel):
    """Where a fact comes from and how far it has been checked."""

    source_id: str | None = Field(default=None, foreign_key="sources.id", index=True)
    reported_by: str | None = Field(default=None, max_length=64, description="vendor id that produced it")
    witnessed_by: str | None = Field(default=None, max_length=64, description="third party that watched")
    reproduced_by: str | None = Field(
        default=None, max_length=64, description="third party that reproduced it independently"
    )
    verification: Verification = Field(default="vendor_reported", sa_type=String(20), index=True)
    as_of: date | None = Field(default=None, description="when the fact held")
    as_of_precision: DatePrecision = Field(default="day", sa_type=String(10))
    published_on: date | None = Field(default=None, description="when the source published it")
    published_on_precision: DatePrecision = Field(default="day", sa_type=String(10))
    notes: str | None = Field(default=None, sa_type=Text)


class Entity(SQLModel):
    """Fields shared by named entities whose names and aliases drive mention matching."""

    name: str = Field(max_length=200)
    aliases: list[str] = Field(default_factory=list, sa_type=JSON)


class DatasetProvenance(SQLModel):
    """Where an imported fact's current values come from, and whether its dataset still lists it.

    Set by dataset imports only (never by the API's create and patch bodies): the dataset kind, the
    part of the dataset a version covers (an MLPerf round; null for a whole dataset), the version
    (SHA-256 of the file), the import that last wrote the fact, the dataset's own key and link for the
    row, its own certainty or confidence word, the figures computed from the stated ones (each labelled
    derived with formula and inputs), and retirement: a row missing from a later version is retired in
    that import, never deleted.
    """

    dataset: str | None = Field(default=None, max_length=32, index=True, description="dataset kind")
    dataset_scope: str | None = Field(
        default=None, max_length=64, description="part of the dataset a version covers (MLPerf round)"
    )
    dataset_version: str | None = Field(default=None, max_length=64, description="SHA-256 of the file")
    import_id: int | None = Field(default=None, description="import that last wrote the fact")
    row_key: str | None = Field(default=None, max_length=400, description="the dataset's own key of the row")
    link: str | None = Field(default=None, max_length=2000, description="the row's own URL in the dataset")
    certainty: str | None = Field(
        default=None, max_length=32, description="the dataset's own certainty or confidence word"
    )
    import_sha256: str | None = Field(
        default=None, max_length=64, description="digest of the values the last import wrote"
    )
    derived: list[dict[str, Any]] = Field(
        default_factory=list, sa_type=JSON, description="computed figures: name, value, unit, formula, inputs"
    )
    retired_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    retired_in_import_id: int | None = Field(default=None, description="import whose version lacked it")


DATASET_PROVENANCE_FIELDS: tuple[str, ...] = tuple(DatasetProvenance.model_fields)
"""Columns only imports write; seed loads and API bodies leave them alone."""


class Retraction(SQLModel):
    """An analyst's withdrawal of a wrong fact (``DELETE /v1/{kind}/{id}``): the row is kept, with when
    and why, hidden from lists and from matching; its history records the retraction."""

    retracted_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    retraction_reason: str | None = Field(default=None, sa_type=Text, description="why it was withdrawn")


RETRACTION_FIELDS: tuple[str, ...] = tuple(Retraction.model_fields)
"""Columns only a retraction (and its undoing) writes; never accepted in a create or patch body."""


# ---------------------------------------------------------------- vendors
class VendorBase(Entity, Provenance):
    kinds: list[str] = Field(default_factory=list, sa_type=JSON, description="e.g. chip_maker, model_lab")
    country: str | None = Field(default=None, max_length=2, description="ISO 3166-1 alpha-2")
    owner_id: str | None = Field(default=None, max_length=64, description="vendor id of the parent")
    listing: str | None = Field(default=None, max_length=200, description="exchange listing or IPO status")
    people: list[dict[str, Any]] = Field(default_factory=list, sa_type=JSON)


class Vendor(VendorBase, Retraction, table=True):
    __tablename__ = "vendors"
    id: str = Field(primary_key=True, max_length=64)


# ---------------------------------------------------------------- chips and systems
class ChipBase(Entity, Provenance):
    vendor_id: str | None = Field(default=None, foreign_key="vendors.id", index=True)
    kind: str = Field(default="chip", max_length=20, description="chip | system | soc | accelerator")
    platform: str | None = Field(default=None, max_length=64, description="chip id of the platform")
    memory_type: str | None = Field(default=None, max_length=32)
    memory_capacity_gb: float | None = Field(default=None, sa_type=Float, ge=0)
    memory_bandwidth_tb_s: float | None = Field(default=None, sa_type=Float, ge=0)
    nominal_power_w: float | None = Field(default=None, sa_type=Float, ge=0)
    sustained_power_w_max: float | None = Field(default=None, sa_type=Float, ge=0)
    process_nm: float | None = Field(default=None, sa_type=Float, gt=0)
    released_on: date | None = None
    released_on_precision: DatePrecision = Field(default="day", sa_type=String(10))
    status: str | None = Field(default=None, max_length=64)
    attributes: dict[str, Any] = Field(default_factory=dict, sa_type=JSON)


class Chip(ChipBase, DatasetProvenance, Retraction, table=True):
    __tablename__ = "chips"
    id: str = Field(primary_key=True, max_length=64)


# ---------------------------------------------------------------- models
class ModelBase(Entity, Provenance):
    developer_id: str | None = Field(default=None, foreign_key="vendors.id", index=True)
    parameters_b: float | None = Field(
        default=None, sa_type=Float, ge=0, description="billions of parameters"
    )
    open_weights: bool | None = None
    released_on: date | None = None
    released_on_precision: DatePrecision = Field(default="day", sa_type=String(10))
    attributes: dict[str, Any] = Field(default_factory=dict, sa_type=JSON)


class Model(ModelBase, Retraction, table=True):
    __tablename__ = "models"
    id: str = Field(primary_key=True, max_length=64)


# ---------------------------------------------------------------- benchmarks
class BenchmarkBase(Entity, Provenance):
    owner_id: str | None = Field(default=None, foreign_key="vendors.id", index=True)
    description: str | None = Field(default=None, sa_type=Text)
    workload: str | None = Field(default=None, max_length=64, description="single_turn | agentic ...")
    url: str | None = None


class Benchmark(BenchmarkBase, Retraction, table=True):
    __tablename__ = "benchmarks"
    id: str = Field(primary_key=True, max_length=64)


# ---------------------------------------------------------------- results
class ResultBase(Provenance):
    benchmark_id: str | None = Field(default=None, foreign_key="benchmarks.id", index=True)
    chip_ids: list[str] = Field(default_factory=list, sa_type=JSON, description="system under test")
    baseline_ids: list[str] = Field(default_factory=list, sa_type=JSON, description="compared against")
    baseline_label: str | None = Field(default=None, max_length=200)
    model_ids: list[str] = Field(default_factory=list, sa_type=JSON)
    model_label: str | None = Field(default=None, max_length=200)
    metric: str = Field(max_length=64, index=True)
    comparator: Comparator = Field(default="eq", sa_type=String(10))
    value: float | None = Field(default=None, sa_type=Float)
    value_min: float | None = Field(default=None, sa_type=Float)
    value_max: float | None = Field(default=None, sa_type=Float)
    unit: str | None = Field(default=None, max_length=32)
    baseline_value: float | None = Field(default=None, sa_type=Float)
    operating_point: str | None = Field(default=None, max_length=64)
    interactivity_tok_s_user: float | None = Field(default=None, sa_type=Float, ge=0)
    input_tokens: int | None = Field(default=None, ge=0, le=COUNT_MAX)
    output_tokens: int | None = Field(default=None, ge=0, le=COUNT_MAX)
    precision: str | None = Field(default=None, max_length=16)
    software: str | None = Field(default=None, max_length=200)
    speculative_decoding: bool | None = None
    multi_token_prediction: bool | None = None
    disaggregation: bool | None = None
    headline: bool = Field(default=False, description="shown on the race board")
    attributes: dict[str, Any] = Field(default_factory=dict, sa_type=JSON)


class Result(ResultBase, DatasetProvenance, Retraction, table=True):
    __tablename__ = "results"
    id: str = Field(primary_key=True, max_length=64)


RESULT_LINK_ROLES: dict[str, str] = {"chip_ids": "chip", "baseline_ids": "baseline", "model_ids": "model"}
"""A result's list column -> the role its ids take in :class:`ResultEntity`."""


class ResultEntity(SQLModel, table=True):
    """One entity a result names in a list column (its chips, baselines, models), one row each.

    The lists stay on the result as written; this table is their index, so that ``results?chip=X``
    reads the rows for X in id order instead of matching text inside every result's JSON. Kept by
    :func:`link_result_rows` and the model events below on every write of a result.
    """

    __tablename__ = "result_entities"
    role: str = Field(primary_key=True, max_length=16, description="chip | baseline | model")
    entity_id: str = Field(primary_key=True, max_length=64)
    result_id: str = Field(primary_key=True, foreign_key="results.id", max_length=64, index=True)


_LINK_CHUNK = 500  # bound on IN (...) list and insert batch sizes


def result_link_rows(result: Mapping[str, Any]) -> list[dict[str, str]]:
    """The ``result_entities`` rows of one result (a mapping with ``id`` and its list columns)."""
    pairs = {
        (role, entity_id)
        for column, role in RESULT_LINK_ROLES.items()
        for entity_id in result.get(column) or []
        if isinstance(entity_id, str) and entity_id
    }
    return [{"role": r, "entity_id": e, "result_id": result["id"]} for r, e in sorted(pairs)]


def link_result_rows(conn: Connection | Session, results: Iterable[Mapping[str, Any]]) -> None:
    """Replace the ``result_entities`` rows of ``results`` (mappings with ``id``, ``chip_ids``,
    ``baseline_ids``, ``model_ids``). ORM writes of a result do this themselves (the events below); a
    writer that inserts or updates results through Core calls it with the rows it wrote. Never commits."""
    results = list(results)
    ids = [r["id"] for r in results]
    for start in range(0, len(ids), _LINK_CHUNK):
        chunk = ids[start : start + _LINK_CHUNK]
        conn.execute(delete(ResultEntity).where(ResultEntity.result_id.in_(chunk)))  # type: ignore[attr-defined]
    rows = [row for result in results for row in result_link_rows(result)]
    for start in range(0, len(rows), _LINK_CHUNK):
        conn.execute(insert(ResultEntity), rows[start : start + _LINK_CHUNK])


def _link_values(result: Result) -> dict[str, Any]:
    return {"id": result.id, **{column: getattr(result, column) for column in RESULT_LINK_ROLES}}


# Model events, like the items' sort time: every ORM write of a result (API, seed load, accepted
# candidate, an import's updates) keeps its index rows, whichever code path made it.
@event.listens_for(Result, "after_insert")
def _linked_on_insert(_mapper, connection: Connection, result: Result) -> None:
    rows = result_link_rows(_link_values(result))
    if rows:
        connection.execute(insert(ResultEntity), rows)


@event.listens_for(Result, "after_update")
def _linked_on_update(_mapper, connection: Connection, result: Result) -> None:
    state = inspect(result)
    if any(state.attrs[column].history.has_changes() for column in RESULT_LINK_ROLES):
        link_result_rows(connection, [_link_values(result)])


@event.listens_for(Result, "before_delete")
def _unlinked_on_delete(_mapper, connection: Connection, result: Result) -> None:
    connection.execute(delete(ResultEntity).where(ResultEntity.result_id == result.id))  # type: ignore[arg-type]


# ---------------------------------------------------------------- funding rounds
EXACT_MONEY_MAX = 2**53
"""Largest amount or valuation accepted (about 9e15 currency units): past it a float no longer keeps
every whole unit, so a longer figure would be stored rounded rather than as written."""


def _exact_money(value: Any) -> Any:
    """``value`` unchanged, or a ``less_than_equal`` error for a whole number (or numeric string) above
    :data:`EXACT_MONEY_MAX`: the bound must be checked before the conversion to float, which turns
    2^53 + 1 into 2^53 and would let it through rounded."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            exact = Decimal(value.strip())
        except InvalidOperation:
            return value  # not a number: the float validator names it
    elif isinstance(value, int):
        exact = Decimal(value)
    else:
        return value
    if exact.is_finite() and exact > EXACT_MONEY_MAX:
        raise PydanticCustomError(
            "less_than_equal", "Input should be less than or equal to {le}", {"le": EXACT_MONEY_MAX}
        )
    return value


ExactMoney = Annotated[float | None, BeforeValidator(_exact_money)]


class FundingRoundBase(Provenance):
    vendor_id: str = Field(foreign_key="vendors.id", index=True, description="the company funded or bought")
    round_type: str = Field(max_length=32, description="seed | series | strategic | acquisition | ...")
    acquirer_id: str | None = Field(default=None, max_length=64)
    amount: ExactMoney = Field(
        default=None, sa_type=Float, ge=0, le=EXACT_MONEY_MAX,
        description="in currency units, not millions; at most 2^53 (kept exactly as a float)",
    )
    currency: str | None = Field(default=None, max_length=3)
    post_money_valuation: ExactMoney = Field(default=None, sa_type=Float, ge=0, le=EXACT_MONEY_MAX)
    valuation_comparator: Comparator = Field(default="eq", sa_type=String(10))
    announced_on: date | None = None
    announced_on_precision: DatePrecision = Field(default="day", sa_type=String(10))
    status: str | None = Field(default=None, max_length=32, description="closed | in_discussion")
    attributes: dict[str, Any] = Field(default_factory=dict, sa_type=JSON)


class FundingRound(FundingRoundBase, DatasetProvenance, Retraction, table=True):
    __tablename__ = "funding_rounds"
    id: str = Field(primary_key=True, max_length=64)


# ---------------------------------------------------------------- deployments
class DeploymentBase(Provenance):
    chip_id: str | None = Field(default=None, foreign_key="chips.id", index=True)
    system_label: str | None = Field(default=None, max_length=200)
    operator_id: str | None = Field(default=None, max_length=64)
    status: str = Field(default="planned", max_length=32, description="vocab.facts.DeploymentStatus")
    capacity_mw: float | None = Field(default=None, sa_type=Float, ge=0, description="reached, in MW")
    capacity_mw_target: float | None = Field(default=None, sa_type=Float, ge=0)
    target_on: date | None = None
    target_on_precision: DatePrecision = Field(default="day", sa_type=String(10))
    units_min: int | None = Field(default=None, ge=0, le=COUNT_MAX)
    units_max: int | None = Field(default=None, ge=0, le=COUNT_MAX)
    scale: str | None = Field(default=None, max_length=200, description="qualitative scale when no figure")
    attributes: dict[str, Any] = Field(default_factory=dict, sa_type=JSON)


class Deployment(DeploymentBase, DatasetProvenance, Retraction, table=True):
    __tablename__ = "deployments"
    id: str = Field(primary_key=True, max_length=64)


# ---------------------------------------------------------------- claims (figures of no other kind)
class ClaimBase(Provenance):
    subject_ids: list[str] = Field(default_factory=list, sa_type=JSON)
    topic: str = Field(max_length=64, index=True, description="e.g. price, margin, forecast, porting")
    statement: str = Field(sa_type=Text)
    attributed_to: str | None = Field(default=None, max_length=200, description="person or body quoted")
    comparator: Comparator = Field(default="eq", sa_type=String(10))
    value: float | None = Field(default=None, sa_type=Float)
    value_min: float | None = Field(default=None, sa_type=Float)
    value_max: float | None = Field(default=None, sa_type=Float)
    unit: str | None = Field(default=None, max_length=32)
    baseline_value: float | None = Field(default=None, sa_type=Float)


class Claim(ClaimBase, Retraction, table=True):
    __tablename__ = "claims"
    id: str = Field(primary_key=True, max_length=64)


# ---------------------------------------------------------------- fact history
class FactChange(SQLModel, table=True):
    """One entry of a fact's history: a field's old and new value, or a whole-fact action.

    ``kind`` is the API path segment of the fact's table (``chips``, ``funding-rounds``...). An
    ``updated`` change has one row per field (``field``, ``old_value``, ``new_value`` as JSON values);
    ``created``, ``retired``, ``restored`` and ``retracted`` have one row with no field. ``cause`` says
    what made the change and ``cause_ref`` which one of it (an import id); ``actor`` who (``admin``,
    ``seed``, ``import``). Rows written together share ``changed_at`` and one ``fact.changed`` event.
    """

    __tablename__ = "fact_history"
    __table_args__ = (Index("ix_fact_history_fact", "kind", "fact_id", "id"),)

    id: int | None = Field(default=None, primary_key=True)
    kind: str = Field(max_length=32)
    fact_id: str = Field(max_length=64)
    action: FactAction = Field(sa_type=String(16))
    field: str | None = Field(default=None, max_length=64)
    old_value: Any = Field(default=None, sa_type=JSON, nullable=True)
    new_value: Any = Field(default=None, sa_type=JSON, nullable=True)
    cause: ChangeCause = Field(sa_type=String(16))
    cause_ref: str | None = Field(default=None, max_length=64)
    actor: str | None = Field(default=None, max_length=64)
    changed_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)


KB_TABLES: dict[str, type[SQLModel]] = {
    "vendors": Vendor,
    "chips": Chip,
    "models": Model,
    "benchmarks": Benchmark,
    "results": Result,
    "funding-rounds": FundingRound,
    "deployments": Deployment,
    "claims": Claim,
}
"""API path segment -> table model, in dependency order (a seed load upserts in this order)."""

ENTITY_TABLES: dict[EntityKind, type[SQLModel]] = {
    "vendor": Vendor,
    "chip": Chip,
    "model": Model,
    "benchmark": Benchmark,
}
"""Entity kind -> table of the named entities whose aliases drive mention matching, in matching order."""
