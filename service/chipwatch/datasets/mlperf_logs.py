"""MLPerf LoadGen ``mlperf_log_summary.txt`` -> one result with its validity and latency percentiles.

The summary is ``name : value`` lines under three banners (results, additional stats, test parameters).
It names neither system nor model: the results tree does (``<division>/<submitter>/results/<system>/
<model>/<scenario>/performance/run_1/mlperf_log_summary.txt``), and :func:`context_from_path` reads that
path or the ``division__submitter__system__model__scenario__mlperf_log_summary.txt`` names of stored
copies. Latencies are logged in nanoseconds and returned in milliseconds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from chipwatch.datasets import values
from chipwatch.datasets.records import DatasetFormatError, ParseResult, Percentiles, Record, RowIssue
from chipwatch.datasets.tables import decode_text

KIND = "mlperf-log-summary"

_LINE = re.compile(r"^\s*(?P<name>[^:*]+?)\s*:\s*(?P<value>.*?)\s*$")
_PERCENTILE = re.compile(r"^(?P<pct>\d+(?:\.\d+)?) percentile (?P<what>.+) \(ns\)$")
_STAT = re.compile(r"^(?P<stat>min|max|mean) (?P<what>.+) \(ns\)$")
_PCT_FIELDS = {"50.00": "p50_ms", "90.00": "p90_ms", "95.00": "p95_ms", "97.00": "p97_ms", "99.00": "p99_ms",
               "99.90": "p99_9_ms"}
_SERIES = {"latency": "latency", "first token latency": "ttft", "time to output token": "tpot"}
_STORED_NAME = re.compile(r"^(closed|open|network)__(.+?)__(.+)__(.+?)__(.+?)__mlperf_log_summary\.txt$")
_ERRORS = re.compile(r"\b\d+ errors? encountered")


@dataclass(frozen=True, slots=True)
class LogContext:
    """What the results tree says about a log summary: division, submitter, system, model, scenario."""

    division: str
    submitter: str
    system: str
    model: str
    scenario: str


@dataclass(slots=True, kw_only=True)
class MlperfLogResult(Record):
    """One LoadGen performance run.

    ``valid`` is True for ``Result is : VALID``; ``checks`` maps each ``... satisfied`` line to its
    yes/no. Throughputs are per second as logged (``tokens_per_s`` is the completed rate in Server
    runs). ``latency``, ``ttft`` and ``tpot`` are per-query, first-token and per-output-token latency
    percentiles in ms. ``target_ttft_ms``/``target_tpot_ms`` are the run's latency constraints.
    """

    division: str | None = None
    submitter: str | None = None
    system: str | None = None
    model: str | None = None
    scenario: str
    mode: str | None = None
    valid: bool
    checks: dict[str, bool] = field(default_factory=dict)
    samples_per_s: float | None = None
    tokens_per_s: float | None = None
    scheduled_samples_per_s: float | None = None
    latency: Percentiles = field(default_factory=Percentiles)
    ttft: Percentiles = field(default_factory=Percentiles)
    tpot: Percentiles = field(default_factory=Percentiles)
    target_qps: float | None = None
    target_ttft_ms: float | None = None
    target_tpot_ms: float | None = None
    min_duration_ms: float | None = None
    samples_per_query: int | None = None
    errors_reported: bool | None = None


def context_from_path(path: str) -> LogContext | None:
    """The result's context from an upstream results path or a stored copy's name; None otherwise."""
    pure = PurePosixPath(path.replace("\\", "/"))
    match = _STORED_NAME.match(pure.name)
    if match:
        return LogContext(*match.groups())
    parts = pure.parts
    if "results" in parts:
        at = len(parts) - 1 - parts[::-1].index("results")
        if at >= 2 and len(parts) >= at + 4:
            return LogContext(parts[at - 2], parts[at - 1], parts[at + 1], parts[at + 2], parts[at + 3])
    return None


def _pairs(text: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for raw in text.splitlines():
        match = _LINE.match(raw)
        if match:
            pairs.setdefault(match["name"].strip().casefold(), match["value"])
    return pairs


def _percentiles(pairs: dict[str, str], series: str, warnings: list[RowIssue]) -> Percentiles:
    found: dict[str, float] = {}
    for name, raw in pairs.items():
        match = _PERCENTILE.match(name) or _STAT.match(name)
        if not match or _SERIES.get(match["what"]) != series:
            continue
        slot = _PCT_FIELDS.get(match["pct"]) if "pct" in match.groupdict() else f"{match['stat']}_ms"
        if slot is None:
            continue
        try:
            nanoseconds = values.number(raw)
        except values.CellError as exc:
            warnings.append(RowIssue(1, f"{name}: {exc}; read as unknown"))
            continue
        if nanoseconds is not None:
            found[slot] = nanoseconds / 1e6
    return Percentiles(**found)


def _number(pairs: dict[str, str], warnings: list[RowIssue], *names: str, scale: float = 1.0) -> float | None:
    for name in names:
        if name in pairs:
            try:
                figure = values.number(pairs[name])
            except values.CellError as exc:
                warnings.append(RowIssue(1, f"{name}: {exc}; read as unknown"))
                return None
            return None if figure is None else figure * scale
    return None


def _checks(pairs: dict[str, str]) -> dict[str, bool]:
    return {
        name.removesuffix(" satisfied"): value.strip().casefold() == "yes"
        for name, value in pairs.items()
        if name.endswith(" satisfied")
    }


def parse_log_summary(
    data: bytes | str, *, context: LogContext | None = None
) -> ParseResult[MlperfLogResult]:
    """The run recorded by one ``mlperf_log_summary.txt``.

    Returns a ParseResult holding one :class:`MlperfLogResult` keyed ``<division>/<submitter>/<system>/
    <model>/<scenario>`` when ``context`` is given, else by the scenario. Raises DatasetFormatError
    naming the missing lines when the text is not a LoadGen summary (no ``Scenario`` or ``Result is``).
    """
    text = decode_text(data, KIND)
    pairs = _pairs(text)
    missing = tuple(name for name in ("Scenario", "Result is") if name.casefold() not in pairs)
    if "mlperf results summary" not in text.casefold() or missing:
        missing = missing or ("MLPerf Results Summary",)
        raise DatasetFormatError(KIND, "not a LoadGen summary", missing=missing)
    warnings: list[RowIssue] = []
    scenario = pairs["scenario"]
    key = scenario
    if context:
        key = "/".join((context.division, context.submitter, context.system, context.model, scenario))
    record = MlperfLogResult(
        row=1, row_key=key, division=context.division if context else None,
        submitter=context.submitter if context else None, system=context.system if context else None,
        model=context.model if context else None, scenario=scenario, mode=pairs.get("mode"),
        valid=pairs["result is"].strip().upper() == "VALID", checks=_checks(pairs),
        samples_per_s=_number(pairs, warnings, "samples per second", "completed samples per second"),
        tokens_per_s=_number(pairs, warnings, "tokens per second", "completed tokens per second"),
        scheduled_samples_per_s=_number(pairs, warnings, "scheduled samples per second"),
        latency=_percentiles(pairs, "latency", warnings), ttft=_percentiles(pairs, "ttft", warnings),
        tpot=_percentiles(pairs, "tpot", warnings), target_qps=_number(pairs, warnings, "target_qps"),
        target_ttft_ms=_number(pairs, warnings, "ttft_latency (ns)", scale=1e-6),
        target_tpot_ms=_number(pairs, warnings, "tpot_latency (ns)", scale=1e-6),
        min_duration_ms=_number(pairs, warnings, "min_duration (ms)"),
        samples_per_query=_samples_per_query(pairs),
        errors_reported=_errors_reported(text),
    )
    return ParseResult(kind=KIND, records=(record,), warnings=tuple(warnings), rows_read=1)


def _errors_reported(text: str) -> bool | None:
    folded = text.casefold()
    if "no errors encountered" in folded:
        return False
    return True if _ERRORS.search(folded) else None


def _samples_per_query(pairs: dict[str, str]) -> int | None:
    try:
        return values.integer(pairs.get("samples_per_query"))
    except values.CellError:
        return None
