"""Benchmark records -> results and systems (pure): MLPerf Inference summaries, system descriptions and
LoadGen log summaries; InferenceX accuracy evals and benchmark_serving runs.

Verification by rule (docs/datasets.md): an MLPerf closed-division result of an available system was
peer reviewed by the other submitters (``witnessed``, witnessed by MLCommons); open-division and preview
results are ``vendor_reported``; a LoadGen log alone says nothing about review, so it is
``vendor_reported``. InferenceX evals are run by SemiAnalysis on the vendors' hardware (``independent``);
a raw benchmark_serving file is whatever its importer ran (``vendor_reported``). Derived figures
(tokens/s per accelerator, per kW) are stored in ``derived``, labelled with their formula and inputs.
"""

from __future__ import annotations

from typing import Any

from chipwatch.datasets import derived as derived_figures
from chipwatch.imports.build import Built, day, figure, pick
from chipwatch.imports.resolve import Resolver, Unresolved
from chipwatch.vocab.slugs import slugify

MLPERF_BENCHMARK = "mlperf-inference"
INFERENCEX_BENCHMARK = "inferencex"
MLCOMMONS = "mlcommons"
SEMIANALYSIS = "semianalysis"

MLPERF_ATTRIBUTES = (
    "mlperf_id",
    "round",
    "submitter",
    "division",
    "category",
    "availability",
    "system",
    "platform",
    "model_used",
    "accelerator",
    "accelerators_per_node",
    "nodes",
    "accelerator_count",
    "host_processor",
    "host_processors_per_node",
    "host_processor_core_count",
    "operating_system",
    "weight_data_types",
    "accuracy_target_pct",
    "accuracy",
    "accuracy_text",
    "power_w",
    "energy_per_query_mj",
    "inferred",
    "notes",
    "code_link",
    "location",
    "audit_id",
)


def _compact(stats: dict[str, Any] | None) -> dict[str, Any] | None:
    """Latency statistics without the ones the file does not give; None when it gives none."""
    found = {name: value for name, value in (stats or {}).items() if value is not None}
    return found or None


def _accelerators(
    parts: list[dict[str, Any]], resolver: Resolver
) -> tuple[list[str], dict[str, int | None], list[Unresolved]]:
    chip_ids: list[str] = []
    counts: dict[str, int | None] = {}
    missing: list[Unresolved] = []
    for part in parts:
        resolved = resolver.part("chip", part["name"], part.get("count"))
        if resolved.chip_key is None:
            missing.append(Unresolved(part["name"], "chip", resolved.reason or "no alias matches"))
            continue
        if resolved.chip_key not in counts:
            chip_ids.append(resolved.chip_key)
            counts[resolved.chip_key] = 0
        previous = counts[resolved.chip_key]
        count = part.get("count")
        counts[resolved.chip_key] = None if previous is None or count is None else previous + count
    return chip_ids, counts, missing


def _precision(text: str | None) -> str | None:
    return text if text and len(text) <= 16 else None


def _mlperf_derived(plain: dict[str, Any]) -> list[dict[str, Any]]:
    if plain.get("metric") != "tokens_per_s":
        return []
    out = figure(derived_figures.tokens_per_s_per_kw(plain["value"], plain.get("power_w")))
    if len(plain.get("accelerators") or []) == 1:
        count = plain.get("accelerator_count")
        out += figure(derived_figures.tokens_per_s_per_accelerator(plain["value"], count))
    return out


def result_from_mlperf(plain: dict[str, Any], resolver: Resolver, **_: Any) -> Built:
    """An MLPerf summary row -> a result on ``mlperf-inference``: every accelerator part resolved to a
    chip (an empty accelerator is no chip; a part that resolves to nothing holds the row), scenario as
    operating point, verification by the division/availability rule, ``Details`` as the link."""
    chip_ids, counts, missing = _accelerators(plain.get("accelerators") or [], resolver)
    model_id, _ = resolver.one("model", plain.get("model"))
    reporter, _ = resolver.one("vendor", plain.get("submitter"))
    attributes = pick(plain, MLPERF_ATTRIBUTES)
    attributes["accelerator_counts"] = counts or None
    witnessed = plain["verification"] == "witnessed"
    values = {
        "benchmark_id": MLPERF_BENCHMARK,
        "chip_ids": chip_ids,
        "model_ids": [model_id] if model_id else [],
        "model_label": plain["model"][:200],
        "metric": plain.get("metric") or slugify(plain.get("unit") or "value", max_length=64) or "value",
        "value": plain["value"],
        "unit": (plain.get("unit") or "")[:32] or None,
        "operating_point": plain["scenario"].casefold()[:64],
        "precision": _precision(plain.get("weight_data_types")),
        "software": (plain.get("software") or "")[:200] or None,
        "verification": plain["verification"],
        "reported_by": reporter,
        "witnessed_by": MLCOMMONS if witnessed else None,
        "link": plain.get("link"),
        "attributes": attributes,
        "derived": _mlperf_derived(plain),
    }
    return Built("results", plain["row_key"], scope=plain.get("round"), values=values, waiting=tuple(missing))


MLPERF_SYSTEM_ATTRIBUTES = (
    "system_id",
    "submitter",
    "division",
    "status",
    "system_type",
    "nodes",
    "accelerators_per_node",
    "accelerator_count",
    "accelerator",
    "accelerator_memory_bytes",
    "accelerator_memory_type",
    "accelerator_interconnect",
    "accelerator_host_interconnect",
    "host_processor",
    "host_processors_per_node",
    "host_processor_core_count",
    "host_memory_bytes",
    "framework",
    "software_stack",
    "operating_system",
    "cooling",
    "hardware_notes",
)


def system_from_mlperf(plain: dict[str, Any], resolver: Resolver, **_: Any) -> Built:
    """An MLPerf system description -> a chip of kind ``system`` whose ``platform`` is its accelerator
    chip (a named accelerator that resolves to nothing holds the row), known also by its system id."""
    platform, missing = resolver.one("chip", plain.get("accelerator"))
    vendor_id, _ = resolver.one("vendor", plain.get("submitter"))
    system_id = plain.get("system_id")
    values = {"platform": platform, "attributes": pick(plain, MLPERF_SYSTEM_ATTRIBUTES)}
    create = {
        "name": plain["system_name"][:200],
        "kind": "system",
        "vendor_id": vendor_id,
        "reported_by": vendor_id,
        "aliases": [system_id] if system_id else [],
        "verification": "vendor_reported",
    }
    return Built(
        "chips",
        plain["row_key"],
        values=values,
        create=create,
        id_hint=f"{system_id or plain['system_name']}",
        waiting=(missing,) if missing else (),
    )


def result_from_log(plain: dict[str, Any], resolver: Resolver, **_: Any) -> Built:
    """A LoadGen log summary -> a result on ``mlperf-inference`` for the system its path names (the
    system's accelerator when the system is known with one), with validity and latency percentiles.
    Without a system (a file not named by its results path) the row is skipped."""
    system = plain.get("system")
    if not system:
        return Built(
            "results",
            plain["row_key"],
            skip="the log names no system: import it under its "
            "results-tree path or as division__submitter__system__model__scenario__...txt",
        )
    system_id = resolver.exact("chip", system)
    waiting = (
        ()
        if system_id
        else (Unresolved(system, "chip", "no system with this id: import its system description first"),)
    )
    chip = (resolver.platform_of(system_id) or system_id) if system_id else None
    tokens = plain.get("tokens_per_s")
    attributes = pick(
        plain,
        (
            "division",
            "submitter",
            "system",
            "mode",
            "valid",
            "checks",
            "samples_per_s",
            "tokens_per_s",
            "scheduled_samples_per_s",
            "target_qps",
            "target_ttft_ms",
            "target_tpot_ms",
            "min_duration_ms",
            "samples_per_query",
            "errors_reported",
        ),
    )
    attributes.update(
        system_chip_id=system_id,
        latency_ms=_compact(plain.get("latency")),
        ttft_ms=_compact(plain.get("ttft")),
        tpot_ms=_compact(plain.get("tpot")),
    )
    values = {
        "benchmark_id": MLPERF_BENCHMARK,
        "chip_ids": [chip] if chip else [],
        "model_label": (plain.get("model") or "")[:200] or None,
        "model_ids": [m] if (m := resolver.one("model", plain.get("model"))[0]) else [],
        "metric": "tokens_per_s" if tokens is not None else "samples_per_s",
        "value": tokens if tokens is not None else plain.get("samples_per_s"),
        "unit": "Tokens/s" if tokens is not None else "Samples/s",
        "operating_point": plain["scenario"].casefold()[:64],
        "verification": "vendor_reported",
        "attributes": attributes,
    }
    return Built("results", plain["row_key"], values=values, waiting=waiting)


def result_from_eval(plain: dict[str, Any], resolver: Resolver, **_: Any) -> Built:
    """An InferenceX accuracy eval -> a result on ``inferencex``: the score (fraction correct) as an
    ``accuracy`` figure for the hardware InferenceX names (an unresolved name holds the row)."""
    chip_id, missing = resolver.one("chip", plain.get("hardware"))
    model_id, _ = resolver.one("model", plain.get("model"))
    attributes = pick(
        plain,
        (
            "hardware",
            "framework",
            "tensor_parallel",
            "expert_parallel",
            "data_parallel_attention",
            "concurrency",
            "task",
            "score_name",
            "score_se",
            "exact_match_strict",
            "exact_match_strict_se",
            "exact_match_flexible",
            "exact_match_flexible_se",
            "samples",
            "measured_at",
            "model_prefix",
            "spec_decoding",
        ),
    )
    spec = plain.get("spec_decoding")
    values = {
        "benchmark_id": INFERENCEX_BENCHMARK,
        "chip_ids": [chip_id] if chip_id else [],
        "model_ids": [model_id] if model_id else [],
        "model_label": plain["model"][:200],
        "metric": f"accuracy_{slugify(plain.get('task') or 'eval', max_length=40).replace('-', '_')}",
        "value": plain["score"],
        "unit": "fraction",
        "precision": _precision(plain.get("precision")),
        "software": plain.get("framework"),
        "speculative_decoding": None if spec is None else spec.casefold() != "none",
        "verification": "independent",
        "reported_by": SEMIANALYSIS,
        "as_of": day((plain.get("measured_at") or "")[:10] or None),
        "attributes": attributes,
    }
    return Built("results", plain["row_key"], values=values, waiting=(missing,) if missing else ())


def result_from_serving(plain: dict[str, Any], resolver: Resolver, **_: Any) -> Built:
    """A benchmark_serving run -> an ``output_tokens_per_s`` result for the hardware its importer named,
    with TTFT/TPOT/ITL/E2EL statistics (ms), concurrency and request rate in ``attributes`` and output
    tokens/s per accelerator as a derived figure. Keyed by hardware, model and run file."""
    chip_id, missing = resolver.one("chip", plain["hardware"])
    model_id, _ = resolver.one("model", plain.get("model"))
    attributes = pick(
        plain,
        (
            "hardware",
            "accelerator_count",
            "backend",
            "concurrency",
            "request_rate_per_s",
            "prompts",
            "completed",
            "duration_s",
            "input_tokens",
            "output_tokens",
            "request_throughput_per_s",
            "total_tokens_per_s",
        ),
    )
    for series in ("ttft", "tpot", "itl", "e2el"):
        attributes[f"{series}_ms"] = _compact(plain.get(series))
    count = plain.get("accelerator_count")
    rate = derived_figures.tokens_per_s_per_accelerator(plain["output_tokens_per_s"], count)
    values = {
        "chip_ids": [chip_id] if chip_id else [],
        "model_ids": [model_id] if model_id else [],
        "model_label": plain["model"][:200],
        "metric": "output_tokens_per_s",
        "value": plain["output_tokens_per_s"],
        "unit": "tokens/s",
        "operating_point": f"concurrency_{plain['concurrency']}",
        "as_of": day(plain.get("run_on")),
        "verification": "vendor_reported",
        "attributes": attributes,
        "derived": figure(rate),
    }
    key = f"{plain['hardware']}/{plain['model']}/{plain['row_key']}"
    return Built("results", key, values=values, waiting=(missing,) if missing else ())
