"""Raw vLLM/SGLang ``benchmark_serving`` output JSON (one run per file) -> a serving result record.

The file states the load and what was measured (request and token throughput, TTFT/TPOT/ITL/E2EL
statistics in ms) but not the hardware: the caller names it, and may pass the accelerator count.
InferenceX names its files ``concurrency_<n>_req_rate_<r>_gpus_<g>_ctx_<p>_gen_<d>.json``;
:func:`context_from_name` reads the GPU counts (prefill ``ctx`` and decode ``gen`` workers) from such a
name. A ``request_rate`` of ``inf`` means requests were sent as fast as concurrency allowed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date

from chipwatch.datasets import values
from chipwatch.datasets.records import ParseResult, Percentiles, Record
from chipwatch.datasets.rows import Cells, Collector, RowRejected
from chipwatch.datasets.tables import json_object

KIND = "benchmark-serving"

REQUIRED_FIELDS = ("model_id", "max_concurrency", "completed", "output_throughput", "median_ttft_ms",
                   "median_tpot_ms")

_HF_CACHE = re.compile(r"models--(?P<org>[^/]+?)--(?P<name>[^/]+)")
_FILE_NAME = re.compile(
    r"concurrency_(?P<conc>\d+)_req_rate_(?P<rate>[^_]+)_gpus_(?P<gpus>\d+)(?:_ctx_(?P<ctx>\d+)_gen_(?P<gen>\d+))?"
)
_RUN_DATE = re.compile(r"^(\d{4})(\d{2})(\d{2})-\d{6}$")
_STATS = {"mean": "mean_ms", "median": "p50_ms", "std": "std_ms", "p90": "p90_ms", "p95": "p95_ms",
          "p99": "p99_ms", "p99.9": "p99_9_ms"}


@dataclass(frozen=True, slots=True)
class ServingContext:
    """What an InferenceX result file name says: concurrency, GPUs in all, prefill and decode GPUs."""

    concurrency: int
    accelerator_count: int
    prefill_accelerators: int | None = None
    decode_accelerators: int | None = None


@dataclass(slots=True, kw_only=True)
class ServingResult(Record):
    """One benchmark_serving run on hardware the caller named.

    ``model`` is the Hugging Face id read from the model path when it is a cache path
    (``models--MiniMaxAI--MiniMax-M2.5``), else the path itself. ``request_rate_per_s`` is None for an
    unthrottled run. Throughputs are per second over the run; latencies are in ms.
    """

    hardware: str
    accelerator_count: int | None = None
    model: str
    backend: str | None = None
    run_on: date | None = None
    concurrency: int
    request_rate_per_s: float | None = None
    prompts: int | None = None
    completed: int
    duration_s: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    request_throughput_per_s: float | None = None
    output_tokens_per_s: float
    total_tokens_per_s: float | None = None
    ttft: Percentiles = field(default_factory=Percentiles)
    tpot: Percentiles = field(default_factory=Percentiles)
    itl: Percentiles = field(default_factory=Percentiles)
    e2el: Percentiles = field(default_factory=Percentiles)


def context_from_name(name: str) -> ServingContext | None:
    """Concurrency and GPU counts from an InferenceX result file name; None when it has no such parts."""
    match = _FILE_NAME.search(name)
    if not match:
        return None
    ctx, gen = match["ctx"], match["gen"]
    return ServingContext(
        int(match["conc"]), int(match["gpus"]), int(ctx) if ctx else None, int(gen) if gen else None
    )


def model_name(model_id: str) -> str:
    """``/models/models--Org--Name/snapshots/<sha>/`` -> ``Org/Name``; any other id unchanged."""
    match = _HF_CACHE.search(model_id)
    return f"{match['org']}/{match['name']}" if match else model_id.strip()


def _stats(cells: Cells, series: str) -> Percentiles:
    found = {slot: cells.number(f"{stat}_{series}_ms") for stat, slot in _STATS.items()}
    return Percentiles(**{slot: figure for slot, figure in found.items() if figure is not None})


def _request_rate(cells: Cells) -> float | None:
    raw = cells.raw("request_rate")
    if isinstance(raw, str) and raw.strip().casefold() in ("inf", "infinity"):
        return None
    return cells.number("request_rate")


def _run_day(raw: str | None) -> date | None:
    match = _RUN_DATE.match(raw or "")
    if not match:
        return None
    try:
        return values.day(f"{match[1]}-{match[2]}-{match[3]}")
    except values.CellError:
        return None


def _serving(
    cells: Cells, hardware: str, accelerator_count: int | None, row_key: str | None
) -> ServingResult:
    model = model_name(cells.required("model_id"))
    concurrency, completed = cells.integer("max_concurrency"), cells.integer("completed")
    output_rate = cells.number("output_throughput")
    if concurrency is None or completed is None or output_rate is None:
        raise RowRejected("max_concurrency, completed and output_throughput must be numbers")
    run = cells.text("date")
    return ServingResult(
        row=1, row_key=row_key or f"{hardware}/{model}/{run or 'undated'}/c{concurrency}",
        hardware=hardware, accelerator_count=accelerator_count, model=model, backend=cells.text("backend"),
        run_on=_run_day(run), concurrency=concurrency, request_rate_per_s=_request_rate(cells),
        prompts=cells.integer("num_prompts"), completed=completed, duration_s=cells.number("duration"),
        input_tokens=cells.integer("total_input_tokens"), output_tokens=cells.integer("total_output_tokens"),
        request_throughput_per_s=cells.number("request_throughput"), output_tokens_per_s=output_rate,
        total_tokens_per_s=cells.number("total_token_throughput"),
        ttft=_stats(cells, "ttft"), tpot=_stats(cells, "tpot"), itl=_stats(cells, "itl"),
        e2el=_stats(cells, "e2el"),
    )


def parse_benchmark_serving(
    data: bytes | str, *, hardware: str, accelerator_count: int | None = None, row_key: str | None = None
) -> ParseResult[ServingResult]:
    """The run recorded by one benchmark_serving output file, on the ``hardware`` the caller names.

    Returns a ParseResult holding one :class:`ServingResult`, keyed by ``row_key`` when given (a file
    name identifies a run best) else ``<hardware>/<model>/<date>/c<concurrency>``; a run whose
    concurrency, completed count or output throughput is not a number is one error. Raises ValueError
    for a blank ``hardware`` and DatasetFormatError naming the missing fields for another kind of file.
    """
    if not hardware or not hardware.strip():
        raise ValueError("benchmark_serving files do not name their hardware: name it")
    document = json_object(data, kind=KIND, required=REQUIRED_FIELDS)
    collector: Collector[ServingResult] = Collector(KIND)
    name = hardware.strip()
    collector.add(Cells(document, 1), lambda cells: _serving(cells, name, accelerator_count, row_key))
    return collector.result()
