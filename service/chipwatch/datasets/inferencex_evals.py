"""InferenceX accuracy evals JSON (``supplemental-evals.json``) -> eval result records.

Each element is one accuracy run (lm-eval, e.g. gsm8k) of a serving configuration: model, hardware
(``hw``, InferenceX's own short name such as ``B200-TRT``), framework, precision, tensor and expert
parallelism, concurrency. The same configuration is run more than once, so the configuration is not a
key: the row key is ``source``, the path of the run's own result file.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chipwatch.datasets.records import ParseResult, Record, RowIssue
from chipwatch.datasets.rows import (
    Collector,
    RowRejected,
    Step,
    cell_warning,
    plain_flag,
    plain_integer,
    plain_number,
    plain_text,
    plain_timestamp,
    read_steps,
)
from chipwatch.datasets.tables import json_records
from chipwatch.datasets.values import CellError, text

KIND = "inferencex-evals"

REQUIRED_FIELDS = ("model", "hw", "framework", "precision", "conc", "task", "score", "source")


@dataclass(slots=True, kw_only=True)
class EvalResult(Record):
    """One InferenceX accuracy eval (the parser gives it in plain form, these its fields).

    ``score`` is the fraction correct under ``score_name`` (``em_strict``), ``score_se`` its standard
    error; ``samples`` is the effective sample count (``n_eff``). ``spec_decoding`` is InferenceX's word
    (``none``, ``mtp``), None when blank. ``tensor_parallel``/``expert_parallel`` are tp/ep sizes.
    """

    model: str
    hardware: str
    framework: str | None = None
    precision: str | None = None
    spec_decoding: str | None = None
    tensor_parallel: int | None = None
    expert_parallel: int | None = None
    data_parallel_attention: bool | None = None
    concurrency: int | None = None
    task: str | None = None
    score: float
    score_name: str | None = None
    score_se: float | None = None
    exact_match_strict: float | None = None
    exact_match_strict_se: float | None = None
    exact_match_flexible: float | None = None
    exact_match_flexible_se: float | None = None
    samples: int | None = None
    measured_at: datetime | None = None
    model_prefix: str | None = None


_TEXT = plain_text
# The record's fields after the score, in order, each from its JSON field.
_STEPS: tuple[Step, ...] = tuple(
    (name, None, column, convert, column)
    for name, column, convert in (
        ("score_name", "score_name", _TEXT),
        ("score_se", "score_se", plain_number),
        ("exact_match_strict", "em_strict", plain_number),
        ("exact_match_strict_se", "em_strict_se", plain_number),
        ("exact_match_flexible", "em_flexible", plain_number),
        ("exact_match_flexible_se", "em_flexible_se", plain_number),
        ("samples", "n_eff", plain_integer),
        ("measured_at", "timestamp", plain_timestamp),
        ("model_prefix", "model_prefix", _TEXT),
    )
)
_HEAD: tuple[Step, ...] = tuple(
    (name, None, column, convert, column)
    for name, column, convert in (
        ("framework", "framework", _TEXT),
        ("precision", "precision", _TEXT),
        ("spec_decoding", "spec_decoding", _TEXT),
        ("tensor_parallel", "tp", plain_integer),
        ("expert_parallel", "ep", plain_integer),
        ("data_parallel_attention", "dp_attention", plain_flag),
        ("concurrency", "conc", plain_integer),
        ("task", "task", _TEXT),
    )
)


def _required(get: Any, name: str) -> str:
    result = text(get(name))
    if result is None:
        raise RowRejected(f"no {name}")
    return result


def _eval(element: dict[str, Any], row: int, _line: None, issues: list[RowIssue]) -> dict[str, Any]:
    """One element as a plain :class:`EvalResult`, its fields in order; raises RowRejected."""
    get = element.get
    source = _required(get, "source")
    try:
        score = plain_number(get("score"))
    except CellError as exc:
        issues.append(RowIssue(row, cell_warning("score", exc)))
        score = None
    if score is None:
        raise RowRejected("score is blank or not a number")
    out = {
        "row": row, "row_key": source, "line": None, "link": None,
        "model": _required(get, "model"), "hardware": _required(get, "hw"),
    }
    read_steps(get, _HEAD, row, None, issues, out)
    out["score"] = score
    return read_steps(get, _STEPS, row, None, issues, out)


def parse_evals(data: bytes | str) -> ParseResult[dict[str, Any]]:
    """Accuracy evals from an InferenceX ``supplemental-evals.json``.

    Returns a ParseResult of :class:`EvalResult` records in plain form (dicts, as
    :func:`~chipwatch.datasets.records.to_plain` gives) keyed by the run's ``source`` path; an element
    that is not an object, or lacks its source, model, hardware or a numeric score, is an error with its
    1-based position. Raises DatasetFormatError naming the missing fields when the document is not such
    an array.
    """
    elements: list[Any] = json_records(data, kind=KIND, required=REQUIRED_FIELDS)
    collector: Collector[dict[str, Any]] = Collector(KIND)
    for position, element in enumerate(elements, start=1):
        if not isinstance(element, dict):
            collector.reject(position, f"expected an object, found a {type(element).__name__}")
            continue
        collector.add_plain(_eval, element, position)
    return collector.result()
