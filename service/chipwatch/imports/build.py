"""One dataset record -> the values of one knowledge-base fact (pure): shared shapes and Epoch AI.

A builder takes the record as plain data (:func:`chipwatch.datasets.records.to_plain`; rows waiting for
an alias are kept in that form) and a :class:`~chipwatch.imports.resolve.Resolver`, and returns a
:class:`Built`: the fact's kind, the columns an import writes on every version (``values``), the columns
written only when the fact is created (``create``), and the names that did not resolve. Units are
converted to the knowledge base's (bytes -> GB, byte/s -> TB/s); every figure a dataset states but that
has no column of its own is kept in ``attributes`` under the dataset's own field name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any

from chipwatch.datasets import derived as derived_figures
from chipwatch.imports.resolve import Resolver, Unresolved

GB = 1e9
TB = 1e12
_CONTAINERS = frozenset((list, dict))


# Not frozen: a frozen dataclass's __init__ sets each field through object.__setattr__, once per row of
# a dataset. Nothing changes a Built once a builder has returned it.
@dataclass(slots=True)
class Built:
    """What one record becomes.

    ``subject_id`` names an existing fact the record writes (an Epoch chip whose name is exactly an
    alias of a chip already known); ``id_hint`` is the preferred id of a new fact. ``waiting`` are
    names that hold the row back until an alias resolves them; ``unresolved`` names are reported but
    do not hold the row (an operator or manufacturer is context, not identity). ``skip`` is a reason
    the row can never become a fact.
    """

    kb_kind: str
    row_key: str
    scope: str | None = None
    values: dict[str, Any] = field(default_factory=dict)
    create: dict[str, Any] = field(default_factory=dict)
    subject_id: str | None = None
    id_hint: str | None = None
    waiting: tuple[Unresolved, ...] = ()
    unresolved: tuple[Unresolved, ...] = ()
    skip: str | None = None


def day(value: Any) -> date | None:
    """An ISO date text (or a plain PartialDate's ``value``) as a date; None stays None."""
    if isinstance(value, dict):
        value = value.get("value")
    return date.fromisoformat(value) if isinstance(value, str) else None


def precision(value: Any) -> str:
    """The precision of a plain PartialDate (``day`` when not stated)."""
    return value.get("precision", "day") if isinstance(value, dict) else "day"


def scaled(value: float | None, unit: float) -> float | None:
    """``value / unit``, None when unknown."""
    return None if value is None else value / unit


def pick(plain: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """The fields ``names`` of a record, blanks (None, empty lists and dicts) included as None so that
    a value a later version leaves blank is cleared."""
    found = list(map(plain.get, names))
    out = dict(zip(names, found))  # noqa: B905 - one value per name
    # An empty list or dict is the only falsy container a record holds; other falsy values stay. The
    # membership tests run in C and are false for most rows.
    if [] in found or {} in found:
        for name, value in zip(names, found):  # noqa: B905
            if value.__class__ in _CONTAINERS and not value:
                out[name] = None
    return out


def figure(fig: derived_figures.DerivedFigure | None) -> list[dict[str, Any]]:
    """A derived figure as stored: name, value, unit, formula, inputs, ``derived: true``."""
    if fig is None:
        return []
    return [
        {
            "name": fig.name,
            "value": fig.value,
            "unit": fig.unit,
            "formula": fig.formula,
            "inputs": dict(fig.inputs),
            "derived": True,
        }
    ]


# ---------------------------------------------------------------- Epoch AI ML hardware -> chips
EPOCH_CHIP_ATTRIBUTES = (
    "manufacturer",
    "chip_type",
    "release_price_usd",
    "flop_s",
    "op_s",
    "memory_bytes",
    "memory_bandwidth_bytes_s",
    "intranode_bandwidth_bytes_s",
    "internode_bandwidth_bit_s",
    "foundry",
    "die_size_mm2",
    "transistors_millions",
    "base_clock_mhz",
    "boost_clock_mhz",
    "memory_clock_mhz",
    "memory_bus_bit",
    "tensor_cores",
    "datasheet_links",
    "price_source",
    "ml_models",
    "notes",
    "last_modified",
)
"""Epoch fields kept in a chip's ``attributes`` (prefixed ``epoch_`` where the name would be vague)."""


def _flop_s_per_w(plain: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for key, flop_s in sorted((plain.get("flop_s") or {}).items()):
        out += figure(derived_figures.flop_s_per_w(flop_s, plain.get("tdp_w"), precision=key))
    return out


def chip_from_epoch(plain: dict[str, Any], resolver: Resolver, **_: Any) -> Built:
    """An Epoch hardware row -> a chip: specs in columns (GB, TB/s, W), the rest in ``attributes``.

    The chip is the one whose name or alias is exactly the row's ``Hardware name``; otherwise a new
    chip with that name. The manufacturer resolves to a vendor when it can (reported otherwise).
    """
    name = plain["name"]
    vendor_id, vendor_miss = resolver.one("vendor", plain.get("manufacturer"))
    attributes = pick(plain, EPOCH_CHIP_ATTRIBUTES)
    attributes["epoch_notes"] = attributes.pop("notes")
    attributes["epoch_last_modified"] = attributes.pop("last_modified")
    released = plain.get("release_date")
    values = {
        "memory_capacity_gb": scaled(plain.get("memory_bytes"), GB),
        "memory_bandwidth_tb_s": scaled(plain.get("memory_bandwidth_bytes_s"), TB),
        "nominal_power_w": plain.get("tdp_w"),
        "process_nm": plain.get("process_nm"),
        "released_on": day(released),
        "released_on_precision": precision(released),
        "attributes": attributes,
        "derived": _flop_s_per_w(plain),
    }
    if vendor_id is not None:  # a manufacturer that resolves later links the chip then; none never unlinks
        values["vendor_id"] = vendor_id
    create = {"name": name[:200], "kind": "chip", "reported_by": vendor_id, "verification": "vendor_reported"}
    return Built(
        "chips",
        plain["row_key"],
        values=values,
        create=create,
        subject_id=resolver.exact("chip", name),
        id_hint=name,
        unresolved=(vendor_miss,) if vendor_miss else (),
    )


# ---------------------------------------------------------------- Epoch AI GPU clusters -> deployments
EPOCH_CLUSTER_ATTRIBUTES = (
    "owner",
    "country",
    "location",
    "sector",
    "users",
    "status_raw",
    "single_cluster",
    "total_chips",
    "h100_equivalents",
    "supplier",
    "power_mw_reported",
    "power_mw_calculated",
    "hardware_cost_usd",
    "reported_cost_usd",
    "first_operational",
    "first_operational_note",
    "decommissioned",
    "certainty_note",
    "note",
    "op_s",
    "possible_duplicate",
    "possible_duplicate_of",
    "builds_upon",
    "superseded_by",
    "source_links",
)


def _cluster_chips(
    plain: dict[str, Any], resolver: Resolver
) -> tuple[list[dict[str, Any]], list[Unresolved]]:
    chips, missing = [], []
    for entry in plain.get("chips") or []:
        resolved = resolver.part("chip", entry["chip"], entry.get("quantity"))
        chips.append({"chip": entry["chip"], "quantity": entry.get("quantity"), "chip_id": resolved.chip_key})
        if resolved.chip_key is None:
            missing.append(Unresolved(entry["chip"], "chip", resolved.reason or "no alias matches"))
    return chips, missing


def deployment_from_epoch(plain: dict[str, Any], resolver: Resolver, **_: Any) -> Built:
    """An Epoch cluster row -> a deployment: chip (primary type) and quantity, Epoch's power in MW
    (reported where there is one, else calculated; both kept apart in ``attributes``), status, first
    operational date, and Epoch's certainty. A chip name that resolves to no chip holds the row."""
    chips, missing = _cluster_chips(plain, resolver)
    operator_id, operator_miss = resolver.one("vendor", plain.get("owner"))
    attributes = pick(plain, EPOCH_CLUSTER_ATTRIBUTES)
    attributes["chips"] = chips or None
    status = plain.get("status") or (plain.get("status_raw") or "planned").casefold()[:32]
    primary = chips[0] if chips else None
    first = plain.get("first_operational")
    values = {
        "system_label": plain["name"][:200],
        "chip_id": primary["chip_id"] if primary else None,
        "operator_id": operator_id,
        "status": status,
        "capacity_mw": plain.get("power_mw"),
        "units_min": primary["quantity"] if primary else None,
        "units_max": primary["quantity"] if primary else None,
        "target_on": day(first) if status == "planned" else None,
        "target_on_precision": precision(first),
        "certainty": plain.get("certainty"),
        "link": (plain.get("source_links") or [None])[0],
        "attributes": attributes,
    }
    return Built(
        "deployments",
        plain["row_key"],
        values=values,
        waiting=tuple(missing),
        unresolved=(operator_miss,) if operator_miss else (),
    )


# ---------------------------------------------------------------- Epoch AI funding rounds
def funding_round_from_epoch(plain: dict[str, Any], resolver: Resolver, **_: Any) -> Built:
    """An Epoch funding round -> a funding round: equity (USD) as the amount, post-money valuation,
    status, close date as ``as_of`` and report date as ``published_on`` (Epoch's M/D/YYYY), Epoch's
    confidence as certainty. A company that resolves to no vendor holds the row."""
    vendor_id, missing = resolver.one("vendor", plain.get("company"))
    closed, reported = plain.get("close_date"), plain.get("report_date")
    attributes = pick(plain, ("company", "debt_usd", "round_types", "status_raw", "exclude_from_graph"))
    attributes["epoch_id"] = plain["row_key"]
    attributes["epoch_notes"] = plain.get("notes")
    values = {
        "vendor_id": vendor_id,
        "round_type": ",".join(plain.get("round_types") or []) or "unspecified",
        "amount": plain.get("equity_usd"),
        "currency": "USD",
        "post_money_valuation": plain.get("post_money_valuation_usd"),
        "status": plain.get("status"),
        "announced_on": day(reported),
        "announced_on_precision": precision(reported),
        "as_of": day(closed),
        "as_of_precision": precision(closed),
        "published_on": day(reported),
        "published_on_precision": precision(reported),
        "certainty": plain.get("confidence"),
        "attributes": attributes,
    }
    return Built("funding-rounds", plain["row_key"], values=values, waiting=(missing,) if missing else ())
