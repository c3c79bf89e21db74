"""The dataset kinds, one per file format: name -> parser, record type and the options it takes.

This is the one list an importer, a CLI or an API consults to parse a file of a named kind. Some
formats do not name their subject (a benchmark_serving run its hardware, a LoadGen summary its system);
:func:`options_from_name` reads what a conventional file name says, and the caller supplies the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from chipwatch.datasets import (
    benchmark_serving,
    epoch_clusters,
    epoch_funding,
    epoch_hardware,
    inferencex_evals,
    mlperf_logs,
    mlperf_summary,
    mlperf_systems,
)
from chipwatch.datasets.records import ParseResult, Record


@dataclass(frozen=True, slots=True)
class DatasetKind:
    """A file format: its kind name, a title, the record type, its parser and the options it accepts.

    ``required_options`` must be given by the caller (or read from the file name); ``media_type`` is
    what the file is served as. ``plain``: the parser gives its records in plain form (dicts with the
    record type's fields, as :func:`~chipwatch.datasets.records.to_plain` gives), not as records.
    """

    name: str
    title: str
    record_type: type[Record]
    parse: Callable[..., ParseResult[Any]]
    media_type: str
    options: tuple[str, ...] = ()
    required_options: tuple[str, ...] = ()
    plain: bool = False


DATASET_KINDS: dict[str, DatasetKind] = {
    kind.name: kind
    for kind in (
        DatasetKind(epoch_hardware.KIND, "Epoch AI ML hardware", epoch_hardware.ChipSpec,
                    epoch_hardware.parse_ml_hardware, "text/csv", plain=True),
        DatasetKind(epoch_clusters.KIND, "Epoch AI GPU clusters", epoch_clusters.ClusterDeployment,
                    epoch_clusters.parse_gpu_clusters, "text/csv", plain=True),
        DatasetKind(epoch_funding.KIND, "Epoch AI funding rounds", epoch_funding.FundingRoundRecord,
                    epoch_funding.parse_funding_rounds, "text/csv"),
        DatasetKind(mlperf_summary.KIND, "MLPerf Inference summary results", mlperf_summary.MlperfResult,
                    mlperf_summary.parse_summary_results, "application/json", plain=True),
        DatasetKind(mlperf_systems.KIND, "MLPerf Inference system description", mlperf_systems.MlperfSystem,
                    mlperf_systems.parse_system_description, "application/json", options=("system_id",)),
        DatasetKind(mlperf_logs.KIND, "MLPerf LoadGen log summary", mlperf_logs.MlperfLogResult,
                    mlperf_logs.parse_log_summary, "text/plain", options=("context",)),
        DatasetKind(inferencex_evals.KIND, "InferenceX accuracy evals", inferencex_evals.EvalResult,
                    inferencex_evals.parse_evals, "application/json", plain=True),
        DatasetKind(benchmark_serving.KIND, "benchmark_serving run", benchmark_serving.ServingResult,
                    benchmark_serving.parse_benchmark_serving, "application/json",
                    options=("hardware", "accelerator_count", "row_key"), required_options=("hardware",)),
    )
}
"""Kind name -> DatasetKind, for every format this package reads."""


def options_from_name(kind: str, file_name: str) -> dict[str, Any]:
    """The parser options a conventional file name or path gives for ``kind`` (``{}`` when none):
    a system description's ``system_id``, a log summary's ``context``, a benchmark_serving run's
    ``accelerator_count`` and ``row_key`` (its file name). Raises KeyError for an unknown kind."""
    if kind not in DATASET_KINDS:
        raise KeyError(kind)
    name = PurePosixPath(file_name.replace("\\", "/")).name
    if kind == mlperf_systems.KIND:
        found = mlperf_systems.system_id_from_path(file_name)
        return {"system_id": found[2] if found else name.removesuffix(".json")}
    if kind == mlperf_logs.KIND:
        context = mlperf_logs.context_from_path(file_name)
        return {"context": context} if context else {}
    if kind == benchmark_serving.KIND:
        serving = benchmark_serving.context_from_name(name)
        options: dict[str, Any] = {"row_key": name}
        if serving:
            options["accelerator_count"] = serving.accelerator_count
        return options
    return {}


def parse_dataset(kind: str, data: bytes | str, **options: Any) -> ParseResult[Any]:
    """Parse ``data`` as a file of ``kind`` with the given parser options.

    Raises KeyError for an unknown kind, ValueError when a required option is missing or an option is
    not one the kind takes, and DatasetFormatError when the file is not of that kind.
    """
    spec = DATASET_KINDS[kind]
    unknown = sorted(set(options) - set(spec.options))
    if unknown:
        raise ValueError(f"{kind} takes no option {', '.join(unknown)}")
    missing = [name for name in spec.required_options if options.get(name) in (None, "")]
    if missing:
        raise ValueError(f"{kind} needs {', '.join(missing)}")
    return spec.parse(data, **options)
