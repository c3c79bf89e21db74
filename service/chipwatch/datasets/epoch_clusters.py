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

from dataclasses import dataclass, field

from chipwatch.datasets.records import ParseResult, PartialDate, Record
from chipwatch.datasets.rows import Cells
from chipwatch.datasets.tables import Column, collect_csv

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
    """One Epoch GPU cluster row.

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


# Column names made once, not once per row.
_CHIP_NAMES = tuple((f"chip_{rank}", f"quantity_{rank}") for rank in ("primary", "secondary"))
_OP_NAMES = tuple((key, f"op_{key}") for key in OP_COLUMNS)
_SOURCE_NAMES = tuple(f"source_{n}" for n in range(1, 6))


def _chips(cells: Cells) -> tuple[ChipQuantity, ...]:
    chips = []
    for chip_name, quantity_name in _CHIP_NAMES:
        chip = cells.text(chip_name)
        if chip is not None:
            chips.append(ChipQuantity(chip=chip, quantity=cells.integer(quantity_name)))
    return tuple(chips)


def _op_s(cells: Cells) -> dict[str, float]:
    figures = {key: cells.number(column) for key, column in _OP_NAMES}
    return {key: value for key, value in figures.items() if value is not None}


def _cluster(cells: Cells) -> ClusterDeployment:
    name = cells.required("name")
    links = tuple(url for column in _SOURCE_NAMES for url in cells.links(column))
    return ClusterDeployment(
        row=cells.row,
        line=cells.line,
        row_key=name,
        name=name,
        owner=cells.text("owner"),
        country=cells.text("country"),
        location=cells.text("location"),
        sector=cells.text("sector"),
        users=cells.text("users"),
        status=cells.choice("status", STATUSES),
        status_raw=cells.text("status"),
        certainty=cells.choice("certainty", CERTAINTIES),
        single_cluster=cells.flag("single_cluster"),
        chips=_chips(cells),
        total_chips=cells.integer("total_chips"),
        h100_equivalents=cells.number("h100_equivalents"),
        supplier=cells.text("supplier_primary"),
        power_mw=cells.number("power_mw"),
        power_mw_reported=cells.number("power_mw_reported"),
        power_mw_calculated=cells.number("power_mw_calculated"),
        hardware_cost_usd=cells.number("hardware_cost_usd"),
        reported_cost_usd=cells.number("reported_cost_usd"),
        first_operational=cells.partial_date("first_operational"),
        first_operational_note=cells.text("first_operational_note"),
        decommissioned=cells.partial_date("decommissioned"),
        certainty_note=cells.text("certainty_note"),
        note=cells.text("note"),
        op_s=_op_s(cells),
        possible_duplicate=cells.flag("possible_duplicate"),
        possible_duplicate_of=cells.text("possible_duplicate_of"),
        builds_upon=cells.text("builds_upon"),
        superseded_by=cells.text("superseded_by"),
        source_links=links,
    )


def parse_gpu_clusters(data: bytes | str) -> ParseResult[ClusterDeployment]:
    """Deployments from an Epoch AI GPU clusters CSV.

    Returns a ParseResult of :class:`ClusterDeployment` keyed by cluster name (anonymous rows sharing a
    name get a content digest appended); a row without a name is an error; a blank or unreadable figure
    or date is None (the latter also a warning). Raises DatasetFormatError naming the missing columns
    when the header is not this dataset's.
    """
    return collect_csv(data, COLUMNS, _cluster, kind=KIND, on_conflict="digest")
