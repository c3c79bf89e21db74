"""MLPerf Inference system description JSON (``<division>/<submitter>/systems/<system>.json``) -> a
system record.

The file does not name itself: the results tree names a system by its file name (``8xMI325X_2xEPYC_
9575F_1``), which the caller passes as ``system_id``; :func:`system_id_from_path` reads it from the
upstream path or from the ``division__submitter__system.json`` names used to store copies. The row key
is ``<division>/<submitter>/<system_id>`` (or the ``system_name`` when no id is given).
Counts arrive as numbers or strings; memory as ``288 GB`` (decimal), ``96Gi`` (binary) or ``N/A``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from chipwatch.datasets.records import ParseResult, Record
from chipwatch.datasets.rows import Cells, Collector
from chipwatch.datasets.tables import json_object

KIND = "mlperf-system"

REQUIRED_FIELDS = (
    "submitter", "division", "status", "system_name", "number_of_nodes", "accelerators_per_node",
    "accelerator_model_name", "host_processor_model_name",
)

_STORED_NAME = re.compile(r"^(closed|open|network)__(?P<submitter>[^_].*?)__(?P<system>.+)\.json$")


@dataclass(slots=True, kw_only=True)
class MlperfSystem(Record):
    """One MLPerf system description.

    ``status`` is ``available`` | ``preview`` | ``rdi``; ``system_type`` is ``datacenter`` | ``edge``
    (or both, comma separated, as MLPerf writes it). ``accelerator_count`` is accelerators per node
    times nodes. Memory sizes are bytes; ``accelerator_memory_bytes`` is per accelerator.
    """

    system_id: str | None = None
    system_name: str
    submitter: str
    division: str
    status: str | None = None
    system_type: str | None = None
    nodes: int | None = None
    accelerators_per_node: int | None = None
    accelerator_count: int | None = None
    accelerator: str | None = None
    accelerator_memory_bytes: int | None = None
    accelerator_memory_type: str | None = None
    accelerator_interconnect: str | None = None
    accelerator_host_interconnect: str | None = None
    host_processor: str | None = None
    host_processors_per_node: int | None = None
    host_processor_core_count: int | None = None
    host_memory_bytes: int | None = None
    framework: str | None = None
    software_stack: str | None = None
    operating_system: str | None = None
    cooling: str | None = None
    hardware_notes: str | None = None


def system_id_from_path(path: str) -> tuple[str, str, str] | None:
    """``(division, submitter, system_id)`` from ``closed/AMD/systems/8xMI325X.json`` or from a stored
    copy named ``closed__AMD__8xMI325X.json``; None when the path follows neither pattern."""
    pure = PurePosixPath(path.replace("\\", "/"))
    if len(pure.parts) >= 4 and pure.parts[-2] == "systems" and pure.suffix == ".json":
        return pure.parts[-4], pure.parts[-3], pure.stem
    match = _STORED_NAME.match(pure.name)
    if match:
        return match[1], match["submitter"], match["system"]
    return None


def _system(cells: Cells, system_id: str | None) -> MlperfSystem:
    name, submitter = cells.required("system_name"), cells.required("submitter")
    division = cells.required("division")
    per_node, nodes = cells.integer("accelerators_per_node"), cells.integer("number_of_nodes")
    accelerator = cells.text("accelerator_model_name")
    if accelerator is not None and accelerator.casefold() in ("n/a", "none"):
        accelerator = None
    return MlperfSystem(
        row=1, row_key=f"{division}/{submitter}/{system_id or name}", system_id=system_id,
        system_name=name, submitter=submitter, division=division, status=cells.text("status"),
        system_type=cells.text("system_type"), nodes=nodes, accelerators_per_node=per_node,
        accelerator_count=per_node * nodes if per_node is not None and nodes is not None else None,
        accelerator=accelerator, accelerator_memory_bytes=cells.byte_size("accelerator_memory_capacity"),
        accelerator_memory_type=cells.text("accelerator_memory_configuration"),
        accelerator_interconnect=cells.text("accelerator_interconnect"),
        accelerator_host_interconnect=cells.text("accelerator_host_interconnect"),
        host_processor=cells.text("host_processor_model_name"),
        host_processors_per_node=cells.integer("host_processors_per_node"),
        host_processor_core_count=cells.integer("host_processor_core_count"),
        host_memory_bytes=cells.byte_size("host_memory_capacity"),
        framework=cells.text("framework"), software_stack=cells.text("other_software_stack"),
        operating_system=cells.text("operating_system"), cooling=cells.text("cooling"),
        hardware_notes=cells.text("hw_notes"),
    )


def parse_system_description(data: bytes | str, *, system_id: str | None = None) -> ParseResult[MlperfSystem]:
    """The system described by one MLPerf system-description JSON file.

    Returns a ParseResult holding one :class:`MlperfSystem` (or, when the name, submitter or division is
    blank, one error for row 1). ``system_id`` is the file's name without ``.json``. Raises
    DatasetFormatError naming the missing fields when the document is not a system description.
    """
    document = json_object(data, kind=KIND, required=REQUIRED_FIELDS)
    collector: Collector[MlperfSystem] = Collector(KIND)
    collector.add(Cells(document, 1), lambda cells: _system(cells, system_id))
    return collector.result()

