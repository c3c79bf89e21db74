"""Epoch AI "Data on Machine Learning Hardware" CSV -> chip specification records.

Both public export layouts are read: columns are found by header name, and the memory column appears as
``Memory (bytes)`` in one export and ``Memory size per board (Byte)`` in the other. The row key is the
``Hardware name``. Blank or unreadable figures are unknown (None); ``inf`` is never a figure.

Epoch's own derived columns (``Max performance``, ``Energy efficiency``, ``Price-performance``, ``ML
OP/s``, ``Total processing performance``) are not read: derived figures are computed from the stated
ones by :mod:`chipwatch.datasets.derived` and labelled as such.
Source: Epoch AI, 'Data on Machine Learning Hardware', https://epoch.ai/data/machine-learning-hardware
(CC BY).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from chipwatch.datasets.records import ParseResult, PartialDate, Record, RowIssue
from chipwatch.datasets.rows import (
    csv_plan,
    named_rows,
    plain_integer,
    plain_links,
    plain_number,
    plain_partial_date,
    plain_text,
    plain_timestamp,
)
from chipwatch.datasets.tables import Column, collect_csv_plain

KIND = "epoch-ml-hardware"

FLOP_COLUMNS: dict[str, str] = {
    "fp64": "FP64 (double precision) performance (FLOP/s)",
    "fp32": "FP32 (single precision) performance (FLOP/s)",
    "tf32": "TF32 (TensorFloat-32) performance (FLOP/s)",
    "fp16": "FP16 (half precision) performance (FLOP/s)",
    "tensor_fp16_bf16": "Tensor-FP16/BF16 performance (FLOP/s)",
    "fp8": "FP8 performance (FLOP/s)",
    "fp4": "FP4 performance (FLOP/s)",
}
"""Precision key -> Epoch header of the dense peak FLOP/s at that precision."""

OP_COLUMNS: dict[str, str] = {
    "int16": "INT16 performance (OP/s)",
    "int8": "INT8 performance (OP/s)",
    "int4": "INT4 performance (OP/s)",
}
"""Integer precision key -> Epoch header of the peak OP/s at that precision."""

COLUMNS: tuple[Column, ...] = (
    Column("name", ("Hardware name",), required=True),
    Column("manufacturer", ("Manufacturer",), required=True),
    Column("type", ("Type",)),
    Column("notes", ("Notes",)),
    Column("release_date", ("Release date",), required=True),
    Column("release_price_usd", ("Release price (USD)",)),
    # The newer export says "Memory (bytes)", the older one "Memory size per board (Byte)".
    Column("memory_bytes", ("Memory (bytes)", "Memory size per board (Byte)")),
    Column("memory_bandwidth_bytes_s", ("Memory bandwidth (byte/s)",)),
    Column("intranode_bandwidth_bytes_s", ("Intranode bandwidth (byte/s)",)),
    Column("internode_bandwidth_bit_s", ("Internode bandwidth (bit/s)",)),
    Column("tdp_w", ("TDP (W)",), required=True),
    Column("foundry", ("Foundry",)),
    Column("die_size_mm2", ("Die Size (mm^2)",)),
    Column("base_clock_mhz", ("Base clock (MHz)",)),
    Column("boost_clock_mhz", ("Boost clock (MHz)",)),
    Column("memory_clock_mhz", ("Memory clock (MHz)",)),
    Column("memory_bus_bit", ("Memory bus (bit)",)),
    Column("tensor_cores", ("Tensor cores",)),
    Column("process_nm", ("Process size (nm)",)),
    Column("transistors_millions", ("Transistors (millions)",)),
    Column("datasheet", ("Link to datasheet",)),
    Column("price_source", ("Source for the price",)),
    Column("ml_models", ("ML models",)),
    Column("last_modified", ("Last modified",)),
    *(Column(f"flop_{key}", (header,)) for key, header in FLOP_COLUMNS.items()),
    *(Column(f"op_{key}", (header,)) for key, header in OP_COLUMNS.items()),
)


@dataclass(slots=True, kw_only=True)
class ChipSpec(Record):
    """One Epoch hardware row. Figures are as Epoch states them (dense peak, per chip or board). The
    parser gives it in plain form (:func:`~chipwatch.datasets.records.to_plain`), these its fields.

    ``flop_s`` maps a precision key of :data:`FLOP_COLUMNS` to FLOP/s and ``op_s`` a key of
    :data:`OP_COLUMNS` to OP/s; a precision Epoch leaves blank is absent. ``release_price_usd`` is the
    launch price in US dollars. ``datasheet_links`` are the URLs of ``Link to datasheet``.
    """

    name: str
    manufacturer: str | None = None
    chip_type: str | None = None
    release_date: PartialDate | None = None
    release_price_usd: float | None = None
    tdp_w: float | None = None
    flop_s: dict[str, float] = field(default_factory=dict)
    op_s: dict[str, float] = field(default_factory=dict)
    memory_bytes: float | None = None
    memory_bandwidth_bytes_s: float | None = None
    intranode_bandwidth_bytes_s: float | None = None
    internode_bandwidth_bit_s: float | None = None
    foundry: str | None = None
    process_nm: float | None = None
    die_size_mm2: float | None = None
    transistors_millions: float | None = None
    base_clock_mhz: float | None = None
    boost_clock_mhz: float | None = None
    memory_clock_mhz: float | None = None
    memory_bus_bit: float | None = None
    tensor_cores: int | None = None
    datasheet_links: tuple[str, ...] = ()
    price_source: str | None = None
    ml_models: str | None = None
    notes: str | None = None
    last_modified: datetime | None = None


# The record's fields after its name, in order, each from its column: the plan a file's labels complete.
_FIELDS: tuple[tuple[str, str | None, str, Any], ...] = (
    ("manufacturer", None, "manufacturer", plain_text),
    ("chip_type", None, "type", plain_text),
    ("release_date", None, "release_date", plain_partial_date),
    ("release_price_usd", None, "release_price_usd", plain_number),
    ("tdp_w", None, "tdp_w", plain_number),
    *(("flop_s", key, f"flop_{key}", plain_number) for key in FLOP_COLUMNS),
    *(("op_s", key, f"op_{key}", plain_number) for key in OP_COLUMNS),
    *((name, None, name, plain_number) for name in (
        "memory_bytes", "memory_bandwidth_bytes_s", "intranode_bandwidth_bytes_s",
        "internode_bandwidth_bit_s",
    )),
    ("foundry", None, "foundry", plain_text),
    *((name, None, name, plain_number) for name in (
        "process_nm", "die_size_mm2", "transistors_millions", "base_clock_mhz", "boost_clock_mhz",
        "memory_clock_mhz", "memory_bus_bit",
    )),
    ("tensor_cores", None, "tensor_cores", plain_integer),
    ("datasheet_links", None, None, None),  # every URL of the cell: a reader of its own
    ("price_source", None, "price_source", plain_text),
    ("ml_models", None, "ml_models", plain_text),
    ("notes", None, "notes", plain_text),
    ("last_modified", None, "last_modified", plain_timestamp),
)


def _datasheet_links(
    _labels: Mapping[str, str], indexes: Mapping[str, int]
) -> Callable[[list[str], int, int | None, list[RowIssue]], list[str]]:
    index = indexes.get("datasheet")

    def read(cells: list[str], _row: int, _line: int | None, _issues: list[RowIssue]) -> list[str]:
        return [] if index is None else plain_links(cells[index])

    return read


_HEAD = ("row", "row_key", "line", "link", "name")


def _plan(indexes: Mapping[str, int], labels: Mapping[str, str]) -> Callable[..., dict[str, Any]]:
    """The row builder of a file with these columns: a :class:`ChipSpec` in plain form."""
    fill = csv_plan(
        _HEAD,
        tuple((n, k, c, _datasheet_links if c is None else f) for n, k, c, f in _FIELDS),
        indexes,
        labels,
    )
    return named_rows(fill, indexes, labels)


def parse_ml_hardware(data: bytes | str) -> ParseResult[dict[str, Any]]:
    """Chip specifications from an Epoch AI ML hardware CSV export (either layout).

    Returns a ParseResult of :class:`ChipSpec` records in plain form (dicts: dates ISO text, a release
    date ``{"value", "precision"}``, links a list) keyed by hardware name; a row without a name is an
    error, a figure that is blank or unreadable is None (the latter also a warning). Raises
    DatasetFormatError naming the missing columns when the header is not this dataset's.
    """
    return collect_csv_plain(data, COLUMNS, _plan, kind=KIND)
