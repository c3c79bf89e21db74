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

from chipwatch.datasets.records import ParseResult, Record
from chipwatch.datasets.rows import Cells, Collector, RowRejected
from chipwatch.datasets.tables import json_records

KIND = "inferencex-evals"

REQUIRED_FIELDS = ("model", "hw", "framework", "precision", "conc", "task", "score", "source")


@dataclass(slots=True, kw_only=True)
class EvalResult(Record):
    """One InferenceX accuracy eval.

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


def _eval(cells: Cells) -> EvalResult:
    source = cells.required("source")
    score = cells.number("score")
    if score is None:
        raise RowRejected("score is blank or not a number")
    return EvalResult(
        row=cells.row, row_key=source, model=cells.required("model"), hardware=cells.required("hw"),
        framework=cells.text("framework"), precision=cells.text("precision"),
        spec_decoding=cells.text("spec_decoding"), tensor_parallel=cells.integer("tp"),
        expert_parallel=cells.integer("ep"), data_parallel_attention=cells.flag("dp_attention"),
        concurrency=cells.integer("conc"), task=cells.text("task"), score=score,
        score_name=cells.text("score_name"), score_se=cells.number("score_se"),
        exact_match_strict=cells.number("em_strict"), exact_match_strict_se=cells.number("em_strict_se"),
        exact_match_flexible=cells.number("em_flexible"),
        exact_match_flexible_se=cells.number("em_flexible_se"),
        samples=cells.integer("n_eff"), measured_at=cells.timestamp("timestamp"),
        model_prefix=cells.text("model_prefix"),
    )


def parse_evals(data: bytes | str) -> ParseResult[EvalResult]:
    """Accuracy evals from an InferenceX ``supplemental-evals.json``.

    Returns a ParseResult of :class:`EvalResult` keyed by the run's ``source`` path; an element that is
    not an object, or lacks its source, model, hardware or a numeric score, is an error with its 1-based
    position. Raises DatasetFormatError naming the missing fields when the document is not such an array.
    """
    elements: list[Any] = json_records(data, kind=KIND, required=REQUIRED_FIELDS)
    collector: Collector[EvalResult] = Collector(KIND)
    for position, element in enumerate(elements, start=1):
        if not isinstance(element, dict):
            collector.reject(position, f"expected an object, found a {type(element).__name__}")
            continue
        collector.add(Cells(element, position), _eval)
    return collector.result()
