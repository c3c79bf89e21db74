"""MLPerf Inference ``summary_results.json`` (v4.1 and v5.1 layouts) -> benchmark result records.

The file is a JSON array with one object per (submission, model, scenario). MLPerf's ``ID`` names the
submission (one system), so the row key is ``<ID>/<Model>/<Scenario>``; ``Details`` is the row's link.
``a#`` is accelerators per node (an int, a float or a string, blank for CPU-only systems); the system's
accelerator count is ``a#`` times ``Nodes``, and a mixed ``Accelerator`` field (``A (x32), B (x16)``)
gives each part its own count. ``Power_Result`` is system power in watts, or energy per query in
millijoules for the latency scenarios; both are kept apart.

Verification by rule (MLCommons' review process): a closed-division result of an available system was
peer reviewed by the other submitters, so it is ``witnessed``; open-division and preview results are
``vendor_reported``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from typing import Any

from chipwatch.datasets.hardware_names import HardwarePart, split_hardware
from chipwatch.datasets.records import ParseResult, Record, RowIssue
from chipwatch.datasets.rows import (
    Collector,
    RowRejected,
    cell_warning,
    plain_flag,
    plain_integer,
    plain_number,
    plain_text,
)
from chipwatch.datasets.tables import json_records
from chipwatch.datasets.values import CellError, text
from chipwatch.vocab.verification import Verification

KIND = "mlperf-inference-summary"

REQUIRED_FIELDS = (
    "ID", "Submitter", "Category", "System", "Model", "Scenario", "Accelerator", "Nodes",
    "Performance_Result", "Performance_Units",
)

METRICS: dict[str, str] = {
    "tokens/s": "tokens_per_s",
    "samples/s": "samples_per_s",
    "queries/s": "queries_per_s",
    "latency (ms)": "latency_ms",
}
"""``Performance_Units`` (casefolded) -> metric name; a unit not listed leaves the metric unknown."""

_EXACT_INTEGER = 2**53  # as Cells.integer: within a float's exact integers
_COUNT_MAX = 2**31 - 1  # the knowledge base's bound on a count (knowledge.models.COUNT_MAX)
_ACCURACY_TARGET = re.compile(r"-(99(?:\.9+)?)$")
_ACCURACY_PAIR = re.compile(r"([A-Za-z][\w%]*)\s*:\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)")


@dataclass(slots=True, kw_only=True)
class MlperfResult(Record):
    """One MLPerf Inference result row (the parser gives it in plain form, these its fields).

    ``division`` is ``closed`` | ``open``; ``category`` is MLPerf's suite (``datacenter`` | ``edge``);
    ``availability`` is ``available`` | ``preview`` | ``rdi``. ``value`` is in ``unit`` (``Tokens/s``,
    ``Samples/s``, ``Queries/s`` or ``Latency (ms)``) and ``metric`` names it. ``accelerators`` lists
    the accelerator parts with their total counts (empty for a system without accelerators).
    ``accuracy_target_pct`` is the share of reference accuracy the model variant must reach (99.0 for
    ``llama2-70b-99``, 99.9 for ``-99.9``), None when the model name sets none; ``accuracy`` holds the
    achieved metrics. ``power_w`` is average system power; ``energy_per_query_mj`` the latency
    scenarios' energy figure.
    """

    mlperf_id: str
    round: str | None = None
    submitter: str
    division: str | None = None
    category: str | None = None
    availability: str | None = None
    system: str | None = None
    platform: str | None = None
    model: str
    model_used: str | None = None
    scenario: str
    metric: str | None = None
    value: float
    unit: str | None = None
    accelerator: str | None = None
    accelerators_per_node: int | None = None
    nodes: int | None = None
    accelerator_count: int | None = None
    accelerators: tuple[HardwarePart, ...] = ()
    host_processor: str | None = None
    host_processors_per_node: int | None = None
    host_processor_core_count: int | None = None
    software: str | None = None
    operating_system: str | None = None
    weight_data_types: str | None = None
    accuracy_target_pct: float | None = None
    accuracy: dict[str, float] = field(default_factory=dict)
    accuracy_text: str | None = None
    power_w: float | None = None
    energy_per_query_mj: float | None = None
    inferred: bool | None = None
    notes: str | None = None
    code_link: str | None = None
    location: str | None = None
    audit_id: str | None = None
    verification: Verification


def accuracy_target_pct(model: str) -> float | None:
    """The accuracy target an MLPerf model name sets (``llama2-70b-99.9`` -> 99.9), else None."""
    match = _ACCURACY_TARGET.search(model.strip())
    return float(match[1]) if match else None


def accuracy_metrics(text: str | None) -> dict[str, float]:
    """``ROUGE1: 44.45  ROUGE2: 22.04`` -> ``{"ROUGE1": 44.45, "ROUGE2": 22.04}``."""
    return {name: float(value) for name, value in _ACCURACY_PAIR.findall(text or "")}


def verification_for(division: str | None, availability: str | None) -> Verification:
    """``witnessed`` for a closed-division result of an available system, else ``vendor_reported``."""
    if (division or "").casefold() == "closed" and (availability or "").casefold() == "available":
        return "witnessed"
    return "vendor_reported"


def _number(value: Any, label: str, row: int, issues: list[RowIssue]) -> float | None:
    try:
        return plain_number(value)
    except CellError as exc:
        issues.append(RowIssue(row, cell_warning(label, exc)))
        return None


def _integer(value: Any, label: str, row: int, issues: list[RowIssue]) -> int | None:
    if value.__class__ is int and 0 <= value <= _COUNT_MAX:  # the common JSON count
        return value
    try:
        count = plain_integer(value)
    except CellError as exc:
        issues.append(RowIssue(row, cell_warning(label, exc)))
        return None
    if count is not None and count > _COUNT_MAX:
        issues.append(RowIssue(row, f"{label}: {count} is more than any count ({_COUNT_MAX}); unknown"))
        return None
    return count


def _power(get: Any, row: int, issues: list[RowIssue]) -> tuple[float | None, float | None]:
    figure = _number(get("Power_Result"), "Power_Result", row, issues)
    units = (plain_text(get("Power_Units")) or "").casefold()
    if figure is None:
        return None, None
    if units in ("watts", "w"):
        return figure, None
    if units in ("millijoules", "mj"):
        return None, figure
    issues.append(RowIssue(row, f"Power_Units: {units!r} is not a known unit; power unknown"))
    return None, None


def _accelerators(
    get: Any, row: int, issues: list[RowIssue]
) -> tuple[str | None, int | None, int | None, int | None, list[dict[str, Any]]]:
    accelerator = plain_text(get("Accelerator"))
    per_node = _integer(get("a#"), "a#", row, issues)
    nodes = _integer(get("Nodes"), "Nodes", row, issues)
    if accelerator is None:
        return None, per_node, nodes, None, []
    total = per_node * nodes if per_node is not None and nodes is not None else None
    if total is not None and total > _COUNT_MAX:
        issues.append(RowIssue(row, f"a# x Nodes: {total} is more than any count ({_COUNT_MAX}); unknown"))
        total = None
    parts = split_hardware(accelerator, count=total)
    if len(parts) > 1 and all(part.count is not None for part in parts):
        total = sum(part.count or 0 for part in parts)
    return accelerator, per_node, nodes, total, [{"name": part.name, "count": part.count} for part in parts]


def _required(get: Any, name: str) -> str:
    value = get(name)
    result = (value.strip() or None) if value.__class__ is str else text(value)
    if result is None:
        raise RowRejected(f"no {name}")
    return result


def _flag(value: Any, label: str, row: int, issues: list[RowIssue]) -> bool | None:
    try:
        return plain_flag(value)
    except CellError as exc:
        issues.append(RowIssue(row, cell_warning(label, exc)))
        return None


# The record's text fields and the JSON field each is read from; the other fields are computed.
_TEXTS: tuple[tuple[str, str], ...] = (
    ("Details", "link"), ("version", "round"), ("Category", "division"), ("Suite", "category"),
    ("Availability", "availability"), ("System", "system"), ("Platform", "platform"),
    ("UsedModel", "model_used"), ("Performance_Units", "unit"), ("Processor", "host_processor"),
    ("Software", "software"), ("operating_system", "operating_system"),
    ("weight_data_types", "weight_data_types"), ("Accuracy", "accuracy_text"), ("Notes", "notes"),
    ("Code", "code_link"), ("Location", "location"), ("Unique ID (e.g. for Audit)", "audit_id"),
)
# Every field of a plain MlperfResult in order, unknown: each row's record starts as a copy of it.
_TEMPLATE: dict[str, Any] = dict.fromkeys(f.name for f in fields(MlperfResult))


def _result(element: dict[str, Any], row: int, _line: None, issues: list[RowIssue]) -> dict[str, Any]:
    """One element as a plain :class:`MlperfResult`, its fields in order; raises RowRejected."""
    get = element.get
    mlperf_id, model, scenario = _required(get, "ID"), _required(get, "Model"), _required(get, "Scenario")
    value = _number(get("Performance_Result"), "Performance_Result", row, issues)
    if value is None:
        raise RowRejected("Performance_Result is blank or not a number")
    out = _TEMPLATE.copy()
    for key, name in _TEXTS:
        cell = get(key)
        if cell.__class__ is str:  # the common cell, without a call
            out[name] = cell.strip() or None
        elif cell is not None:
            out[name] = text(cell)
    accelerator, per_node, nodes, total, parts = _accelerators(get, row, issues)
    power_w, energy_mj = _power(get, row, issues)
    out["submitter"] = _required(get, "Submitter")
    out["host_processors_per_node"] = _integer(
        get("host_processors_per_node"), "host_processors_per_node", row, issues
    )
    out["host_processor_core_count"] = _integer(
        get("host_processor_core_count"), "host_processor_core_count", row, issues
    )
    out["inferred"] = _flag(get("inferred"), "inferred", row, issues)
    unit = out["unit"]
    out.update(
        row=row, row_key=f"{mlperf_id}/{model}/{scenario}", mlperf_id=mlperf_id, model=model,
        scenario=scenario, metric=METRICS.get((unit or "").casefold()), value=value,
        accelerator=accelerator, accelerators_per_node=per_node, nodes=nodes, accelerator_count=total,
        accelerators=parts, accuracy_target_pct=accuracy_target_pct(model),
        accuracy=accuracy_metrics(out["accuracy_text"]), power_w=power_w, energy_per_query_mj=energy_mj,
        verification=verification_for(out["division"], out["availability"]),
    )
    return out


def parse_summary_results(data: bytes | str) -> ParseResult[dict[str, Any]]:
    """Benchmark results from an MLPerf Inference ``summary_results.json``.

    Returns a ParseResult of :class:`MlperfResult` records in plain form (dicts, as
    :func:`~chipwatch.datasets.records.to_plain` gives; ``accelerators`` a list of ``{"name",
    "count"}``) keyed by ``<ID>/<Model>/<Scenario>``; an element that is not an object, or lacks its ID,
    model, scenario, submitter or a numeric result, is an error with its 1-based position. Raises
    DatasetFormatError naming the missing fields when the document is not such an array.
    """
    elements: list[Any] = json_records(data, kind=KIND, required=REQUIRED_FIELDS)
    collector: Collector[dict[str, Any]] = Collector(KIND)
    for position, element in enumerate(elements, start=1):
        if not isinstance(element, dict):
            collector.reject(position, f"expected an object, found a {type(element).__name__}")
            continue
        collector.add_plain(_result, element, position)
    return collector.result()
