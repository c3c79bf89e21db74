"""Epoch AI GPU clusters (AI supercomputers) CSV -> deployment records.

The row key is the cluster ``Name``. Epoch publishes many anonymous rows under one shared name
(``Anonymized Chinese System``) with nothing else to tell them apart, so rows that share a name but
differ in content are kept apart by a digest of their content (see :class:`~chipwatch.datasets.rows.
Collector`), and rows repeating one exactly are one deployment, reported as duplicates.

Power: Epoch states a reported figure (from the owner or press) and a figure it calculated from the
chips; ``Power Capacity (MW)`` is the reported one where there is one, else the calculated one. All
three are kept apart here so that a reported figure is never mistaken for an estimate.
Source: Epoch AI, 'Data on GPU Clusters' / AI supercomputers, https://epoch.ai/data (CC BY).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from chipwatch.datasets.records import ParseResult, PartialDate, Record, RowIssue
from chipwatch.datasets.rows import (
    cell_warning,
    csv_plan,
    named_rows,
    plain_choice,
    plain_flag,
    plain_integer,
    plain_links,
    plain_number,
    plain_partial_date,
    plain_text,
)
from chipwatch.datasets.tables import Column, collect_csv_plain
from chipwatch.datasets.values import CellError

KIND = "epoch-gpu-clusters"

STATUSES: dict[str, str] = {
    "existing": "operational",
    "operational": "operational",
    "planned": "planned",
    "decommissioned": "decommissioned",
}
"""Epoch status (casefolded) -> deployment status; a status not listed here is unknown."""

CERTAINTIES: dict[str, str] = {"confirmed": "confirmed", "likely": "likely", "unlikely": "unlikely"}
"""Epoch's certainty words, kept as Epoch's own verification of the row."""

OP_COLUMNS: dict[str, str] = {
    "max": "Max OP/s",
    "bit8": "8-bit OP/s",
    "bit16": "16-bit OP/s",
    "bit32": "32-bit OP/s",
}
"""Key -> Epoch header of the cluster's peak OP/s (at its best precision, and at 8, 16 and 32 bits)."""

COLUMNS: tuple[Column, ...] = (
    Column("name", ("Name",), required=True),
    Column("status", ("Status",), required=True),
    Column("certainty", ("Certainty",), required=True),
    Column("owner", ("Owner",), required=True),
    Column("country", ("Country",)),
    Column("location", ("Location",)),
    Column("sector", ("Sector",)),
    Column("users", ("Users",)),
    Column("single_cluster", ("Single cluster?",)),
    Column("chip_primary", ("Chip type (primary)",), required=True),
    Column("quantity_primary", ("Chip quantity (primary)",), required=True),
    Column("chip_secondary", ("Chip type (secondary)",)),
    Column("quantity_secondary", ("Chip quantity (secondary)",)),
    Column("total_chips", ("Total number of AI chips",)),
    Column("h100_equivalents", ("H100 equivalents",)),
    Column("supplier_primary", ("GPU Supplier (primary)",)),
    Column("power_mw", ("Power Capacity (MW)",), required=True),
    Column("power_mw_calculated", ("Calculated Power Capacity (MW)",)),
    Column("power_mw_reported", ("Reported Power Capacity (MW)",)),
    Column("hardware_cost_usd", ("Hardware Cost",)),
    Column("reported_cost_usd", ("Reported Cost",)),
    Column("first_operational", ("First Operational Date",)),
    Column("first_operational_note", ("First Operational Date Note",)),
    Column("decommissioned", ("Decommissioned Date (if applicable)",)),
    Column("certainty_note", ("Certainty Note",)),
    Column("note", ("Note",)),
    Column("possible_duplicate", ("Possible Duplicate",)),
    Column("possible_duplicate_of", ("Possible Duplicate Of",)),
    *(Column(f"op_{key}", (header,)) for key, header in OP_COLUMNS.items()),
    Column("builds_upon", ("Builds Upon",)),
    Column("superseded_by", ("Superseded by",)),
    *(Column(f"source_{n}", (f"Source {n}",)) for n in range(1, 6)),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ChipQuantity:
    """A chip type as Epoch names it and how many of it the cluster holds (None when not stated)."""

    chip: str
    quantity: int | None = None


@dataclass(slots=True, kw_only=True)
class ClusterDeployment(Record):
    """One Epoch GPU cluster row (the parser gives it in plain form, these its fields).

    ``status`` is ``planned`` | ``operational`` | ``decommissioned`` (None when Epoch's word is not
    known, ``status_raw`` keeps it); ``certainty`` is Epoch's ``confirmed`` | ``likely`` | ``unlikely``.
    ``chips`` lists the primary then the secondary chip type. Powers are in MW, costs in US dollars.
    ``op_s`` maps a key of :data:`OP_COLUMNS` to Epoch's estimate of the cluster's peak OP/s.
    ``source_links`` are Epoch's Source 1..5 URLs.
    """

    name: str
    owner: str | None = None
    country: str | None = None
    location: str | None = None
    sector: str | None = None
    users: str | None = None
    status: str | None = None
    status_raw: str | None = None
    certainty: str | None = None
    single_cluster: bool | None = None
    chips: tuple[ChipQuantity, ...] = ()
    total_chips: int | None = None
    h100_equivalents: float | None = None
    supplier: str | None = None
    power_mw: float | None = None
    power_mw_reported: float | None = None
    power_mw_calculated: float | None = None
    hardware_cost_usd: float | None = None
    reported_cost_usd: float | None = None
    first_operational: PartialDate | None = None
    first_operational_note: str | None = None
    decommissioned: PartialDate | None = None
    certainty_note: str | None = None
    note: str | None = None
    op_s: dict[str, float] = field(default_factory=dict)
    possible_duplicate: bool | None = None
    possible_duplicate_of: str | None = None
    builds_upon: str | None = None
    superseded_by: str | None = None
    source_links: tuple[str, ...] = ()


_SOURCE_NAMES = tuple(f"source_{n}" for n in range(1, 6))


def _chips_step(
    labels: Mapping[str, str], indexes: Mapping[str, int]
) -> Callable[[list[str], int, int | None, list[RowIssue]], list[dict[str, Any]]]:
    """The reader of the primary then the secondary chip type with its quantity (read only for a
    chip that is named), as plain :class:`ChipQuantity` dicts."""
    ranks = tuple(
        (indexes.get(f"chip_{rank}"), indexes.get(f"quantity_{rank}"), labels.get(f"quantity_{rank}", ""))
        for rank in ("primary", "secondary")
    )

    def read(cells: list[str], row: int, line: int | None, issues: list[RowIssue]) -> list[dict[str, Any]]:
        chips = []
        for chip_at, quantity_at, label in ranks:
            chip = None if chip_at is None else cells[chip_at].strip() or None
            if chip is not None:
                try:
                    quantity = None if quantity_at is None else plain_integer(cells[quantity_at])
                except CellError as exc:
                    issues.append(RowIssue(row, cell_warning(label, exc), line))
                    quantity = None
                chips.append({"chip": chip, "quantity": quantity})
        return chips

    return read


def _source_links(
    _labels: Mapping[str, str], indexes: Mapping[str, int]
) -> Callable[[list[str], int, int | None, list[RowIssue]], list[str]]:
    at = tuple(indexes[name] for name in _SOURCE_NAMES if name in indexes)

    def read(cells: list[str], _row: int, _line: int | None, _issues: list[RowIssue]) -> list[str]:
        return [url for index in at if cells[index] for url in plain_links(cells[index])]

    return read


_TEXT, _NUMBER = plain_text, plain_number
_STATUS, _CERTAINTY = plain_choice(STATUSES), plain_choice(CERTAINTIES)
# The record's fields after its name, in order, each from its column (None: a step of its own).
_FIELDS: tuple[tuple[str, str | None, str | None, Any], ...] = (
    ("owner", None, "owner", _TEXT),
    ("country", None, "country", _TEXT),
    ("location", None, "location", _TEXT),
    ("sector", None, "sector", _TEXT),
    ("users", None, "users", _TEXT),
    ("status", None, "status", _STATUS),
    ("status_raw", None, "status", _TEXT),
    ("certainty", None, "certainty", _CERTAINTY),
    ("single_cluster", None, "single_cluster", plain_flag),
    ("chips", None, None, _chips_step),
    ("total_chips", None, "total_chips", plain_integer),
    ("h100_equivalents", None, "h100_equivalents", _NUMBER),
    ("supplier", None, "supplier_primary", _TEXT),
    ("power_mw", None, "power_mw", _NUMBER),
    ("power_mw_reported", None, "power_mw_reported", _NUMBER),
    ("power_mw_calculated", None, "power_mw_calculated", _NUMBER),
    ("hardware_cost_usd", None, "hardware_cost_usd", _NUMBER),
    ("reported_cost_usd", None, "reported_cost_usd", _NUMBER),
    ("first_operational", None, "first_operational", plain_partial_date),
    ("first_operational_note", None, "first_operational_note", _TEXT),
    ("decommissioned", None, "decommissioned", plain_partial_date),
    ("certainty_note", None, "certainty_note", _TEXT),
    ("note", None, "note", _TEXT),
    *(("op_s", key, f"op_{key}", _NUMBER) for key in OP_COLUMNS),
    ("possible_duplicate", None, "possible_duplicate", plain_flag),
    ("possible_duplicate_of", None, "possible_duplicate_of", _TEXT),
    ("builds_upon", None, "builds_upon", _TEXT),
    ("superseded_by", None, "superseded_by", _TEXT),
    ("source_links", None, None, _source_links),
)


_HEAD = ("row", "row_key", "line", "link", "name")


def _plan(indexes: Mapping[str, int], labels: Mapping[str, str]) -> Callable[..., dict[str, Any]]:
    """The row builder of a file with these columns: a :class:`ClusterDeployment` in plain form."""
    fill = csv_plan(_HEAD, _FIELDS, indexes, labels)
    return named_rows(fill, indexes, labels)


def parse_gpu_clusters(data: bytes | str) -> ParseResult[dict[str, Any]]:
    """Deployments from an Epoch AI GPU clusters CSV.

    Returns a ParseResult of :class:`ClusterDeployment` records in plain form (dicts, as
    :func:`~chipwatch.datasets.records.to_plain` gives) keyed by cluster name (anonymous rows sharing a
    name get a content digest appended); a row without a name is an error; a blank or unreadable figure
    or date is None (the latter also a warning). Raises DatasetFormatError naming the missing columns
    when the header is not this dataset's.
    """
    return collect_csv_plain(data, COLUMNS, _plan, kind=KIND, on_conflict="digest")
