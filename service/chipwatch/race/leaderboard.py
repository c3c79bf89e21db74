"""The leaderboard read model: the best result per chip for one benchmark, model, scenario and metric,
each with the provenance that lets a reader check it.

Which results count: current facts only (not retired by a newer dataset version, not retracted), of the
benchmark asked for, for exactly one chip (a mixed system's figure belongs to no single chip, and a
result without a chip to none), valid where the record says (a LoadGen run marked invalid is not a
result). The metric is either stated (``tokens_per_s``: the result's own value) or derived
(``tokens_per_s_per_accelerator``, ``tokens_per_s_per_kw``: computed at import from the stated value,
accelerator count and measured power, and shown with their formula and inputs). Higher is better,
except for latencies (a metric ending in ``_ms``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlmodel import Session

from chipwatch.knowledge.models import Benchmark, Chip, Model, Result

DEFAULT_BENCHMARK = "mlperf-inference"
DEFAULT_METRIC = "tokens_per_s"
DERIVED_METRICS = ("tokens_per_s_per_accelerator", "tokens_per_s_per_kw", "flop_s_per_w")


class UnknownBenchmark(LookupError):
    """The ``benchmark`` parameter names no benchmark."""


@dataclass(frozen=True, slots=True)
class _Figure:
    value: float
    unit: str | None
    derived: dict[str, Any] | None


def lower_is_better(metric: str) -> bool:
    """True for latencies (``latency_ms``, ``ttft_p99_ms``...), where the smallest figure leads."""
    return metric.endswith("_ms") or metric.startswith("latency")


def _figure(result: Result, metric: str) -> _Figure | None:
    """The figure ``result`` gives for ``metric``: its own value, or one of its derived figures."""
    if result.metric == metric and result.value is not None:
        return _Figure(result.value, result.unit, None)
    for figure in result.derived or []:
        if figure.get("name") == metric:
            return _Figure(figure["value"], figure.get("unit"), figure)
    return None


def _counts(result: Result, model: str | None, scenario: str | None) -> bool:
    if len(result.chip_ids) != 1 or result.retired_at is not None:
        return False
    if getattr(result, "retracted_at", None) is not None or (result.attributes or {}).get("valid") is False:
        return False
    if scenario is not None and (result.operating_point or "").casefold() != scenario.casefold():
        return False
    if model is not None:
        label = (result.model_label or "").casefold()
        return model in result.model_ids or label == model.casefold()
    return True


def _entry(rank: int, result: Result, figure: _Figure, chip: Chip | None, considered: int) -> dict[str, Any]:
    attributes = result.attributes or {}
    return {
        "rank": rank,
        "chip": result.chip_ids[0],
        "chip_name": chip.name if chip else None,
        "vendor": chip.vendor_id if chip else None,
        "value": figure.value,
        "unit": figure.unit,
        "derived": figure.derived,
        "results_considered": considered,
        "result": {
            "id": result.id,
            "metric": result.metric,
            "value": result.value,
            "unit": result.unit,
            "model_label": result.model_label,
            "models": result.model_ids,
            "scenario": result.operating_point,
            "system": attributes.get("system"),
            "submitter": attributes.get("submitter"),
            "division": attributes.get("division"),
            "availability": attributes.get("availability"),
            "accelerator_count": attributes.get("accelerator_count"),
            "power_w": attributes.get("power_w"),
            "verification": result.verification,
            "witnessed_by": result.witnessed_by,
            "reported_by": result.reported_by,
            "link": result.link,
            "dataset": result.dataset,
            "dataset_version": result.dataset_version,
            "row_key": result.row_key,
            "import_id": result.import_id,
            "source_id": result.source_id,
        },
    }


def known_metrics(*, session: Session) -> set[str]:
    """Every metric a leaderboard can rank by: those results state (any benchmark), the derived ones and
    the default."""
    stated = session.scalars(select(Result.metric).where(Result.metric.is_not(None)).distinct())
    return {*stated, *DERIVED_METRICS, DEFAULT_METRIC}


def known_scenarios(*, session: Session) -> set[str]:
    """Every scenario (a result's operating point) results state, case-folded as the filter compares."""
    column = Result.operating_point
    points = session.scalars(select(column).where(column.is_not(None)).distinct())
    return {p.casefold() for p in points}


def known_models(*, session: Session) -> set[str]:
    """Every value the ``model`` filter can match: the knowledge base's model ids and the model names
    results state (``model_label``, such as llama2-70b-99), case-folded as the filter compares them."""
    labels = session.scalars(select(Result.model_label).where(Result.model_label.is_not(None)).distinct())
    return {*session.scalars(select(Model.id)), *(label.casefold() for label in labels)}


def build_leaderboard(
    *, session: Session, benchmark: str, model: str | None, scenario: str | None, metric: str, limit: int
) -> dict[str, Any]:
    """The best ``metric`` figure per chip among ``benchmark``'s current results (filtered by ``model``:
    a model id or the result's own model name, and ``scenario``), best first, at most ``limit`` chips.

    Each entry: rank, chip, the figure (``derived`` holds formula and inputs for a computed one),
    how many results of the chip were considered, and the winning result with its provenance (dataset,
    version, row key, link, verification). Raises :class:`UnknownBenchmark`.
    """
    if session.get(Benchmark, benchmark) is None:
        raise UnknownBenchmark(benchmark)
    best: dict[str, tuple[_Figure, Result]] = {}
    considered: dict[str, int] = {}
    stmt = select(Result).where(Result.benchmark_id == benchmark).order_by(Result.id)
    lower = lower_is_better(metric)
    for result in session.scalars(stmt):
        if not _counts(result, model, scenario):
            continue
        figure = _figure(result, metric)
        if figure is None:
            continue
        chip_id = result.chip_ids[0]
        considered[chip_id] = considered.get(chip_id, 0) + 1
        held = best.get(chip_id)
        if held is None or (figure.value < held[0].value if lower else figure.value > held[0].value):
            best[chip_id] = (figure, result)
    ranked = sorted(best.items(), key=lambda kv: (kv[1][0].value if lower else -kv[1][0].value, kv[0]))[
        :limit
    ]
    chips = {c.id: c for c in session.scalars(select(Chip).where(Chip.id.in_([k for k, _ in ranked])))}
    entries = [
        _entry(rank, result, figure, chips.get(chip_id), considered[chip_id])
        for rank, (chip_id, (figure, result)) in enumerate(ranked, start=1)
    ]
    return {
        "benchmark": benchmark,
        "model": model,
        "scenario": scenario,
        "metric": metric,
        "order": "ascending" if lower else "descending",
        "entries": entries,
    }
