"""Dataset import throughput per format against a bare baseline, in the same run.

For every dataset format of the shared corpus, rows per second of ``chipwatch import`` (the same code
path: parse, resolve names through the alias table, decide against the previous version, insert with
history, evaluate signals, commit) against a bare baseline: ``csv``/``json`` parse of the same file plus
one executemany insert of the same rows into the same table (each row's cells as its JSON attributes),
committed. Both start from the same seeded database (a fresh copy per round; a format whose names
resolve to chips gets the Epoch hardware imported first, untimed, for both). Files that hold one row
(MLPerf system descriptions and log summaries, benchmark_serving runs) are measured as a directory of
them is imported: all the files as one import (``chipwatch import KIND DIR``: one transaction), against
the bare parse of every file and one executemany of all their rows, committed once. (Until the batch
import existed, both sides ran one transaction per file; that measured the fixed cost of an import,
which the statement counts printed below now report on their own.) Each side's figure is its best round
(after one warm-up round): other load on the machine only ever slows a round down.
Goal: ratio >= 0.5.

After the table, the SQL statements one single-file import of each one-row format executes (counted
with a ``before_cursor_execute`` listener: SQLite's explicit BEGIN is one, the commit is none), a new
fact and then the same file again.

    python benchmarks/imports.py [--rounds 5] [--cpu] [--corpus ../shared/corpus]
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import event, insert

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "service"))

from chipwatch.config import Settings  # noqa: E402
from chipwatch.db import dispose_engines, get_engine, session_scope  # noqa: E402
from chipwatch.imports.runner import execute_import  # noqa: E402
from chipwatch.imports.service import ImportFile, ImportRequest  # noqa: E402
from chipwatch.knowledge.models import KB_TABLES  # noqa: E402
from chipwatch.migrate import upgrade_to_head  # noqa: E402
from chipwatch.seeds import load_seeds  # noqa: E402
from chipwatch.wiring import wire  # noqa: E402

HARDWARE = "epoch-ai/ml_hardware__joshyou-clod.csv"


@dataclass
class Format:
    """One dataset format: its kind, files, the table it fills, and whether chips must exist first."""

    kind: str
    files: list[str]
    kb_kind: str
    needs_chips: bool = False
    options: dict[str, Any] = field(default_factory=dict)
    batch: bool = False  # one-row files: the directory is one import


FORMATS = [
    Format("epoch-ml-hardware", [HARDWARE], "chips"),
    Format("epoch-gpu-clusters", ["epoch-ai/gpu_clusters.csv"], "deployments", needs_chips=True),
    Format("epoch-funding-rounds", ["epoch-ai/ai_companies_funding_rounds.csv"], "funding-rounds"),
    Format(
        "mlperf-inference-summary", ["mlperf-inference/v5.1_summary_results_subset.json"], "results", True
    ),
    Format("mlperf-system", ["mlperf-inference/v5.1_systems/*.json"], "chips", True, batch=True),
    Format("mlperf-log-summary", ["mlperf-inference/v5.1_log_summaries/*.txt"], "results", True, batch=True),
    Format("inferencex-evals", ["inferencex/inferencex-app__supplemental-evals.json"], "results", True),
    Format(
        "benchmark-serving",
        ["inferencex/raw_benchmark_serving_minimax-m2.5_1k1k/*.json"],
        "results",
        True,
        {"hardware": "B200"},
        batch=True,
    ),
]


def files_of(corpus: Path, fmt: Format) -> list[Path]:
    out: list[Path] = []
    for pattern in fmt.files:
        out += sorted(corpus.glob(pattern)) if "*" in pattern else [corpus / pattern]
    return out


def settings_for(path: Path) -> Settings:
    return Settings(data_dir=path.parent, database_url=f"sqlite:///{path.as_posix()}", admin_token="bench")


def make_template(tmp: Path, corpus: Path) -> tuple[Path, Path]:
    """A migrated, seeded database, and a copy with the Epoch hardware imported (untimed setup)."""
    seeded = tmp / "seeded.db"
    upgrade_to_head(settings_for(seeded))
    with session_scope(settings_for(seeded)) as session:
        load_seeds(session=session)
    dispose_engines()
    with_chips = tmp / "with_chips.db"
    shutil.copyfile(seeded, with_chips)
    request = ImportRequest(
        "epoch-ml-hardware", (corpus / HARDWARE).read_bytes(), file_name="ml_hardware.csv"
    )
    execute_import(request, settings=settings_for(with_chips))
    dispose_engines()
    return seeded, with_chips


# ---------------------------------------------------------------- the two sides
def run_import(settings: Settings, fmt: Format, paths: list[Path]) -> int:
    if fmt.batch:
        files = tuple(ImportFile(path.as_posix(), path.read_bytes()) for path in paths)
        name = paths[0].parent.name
        request = ImportRequest(fmt.kind, b"", file_name=name, options=fmt.options, files=files)
        outcome = execute_import(request, settings=settings)
        assert outcome.report is not None, outcome.refusal
        return outcome.report.rows_read
    rows = 0
    for path in paths:
        request = ImportRequest(fmt.kind, path.read_bytes(), file_name=path.name, options=fmt.options)
        outcome = execute_import(request, settings=settings)
        assert outcome.report is not None, outcome.refusal
        rows += outcome.report.rows_read
    return rows


def bare_rows(path: Path) -> list[dict[str, Any]]:
    """The file's rows as dicts: csv.DictReader or json (one object is one row)."""
    data = path.read_bytes()
    if path.suffix == ".csv":
        return list(csv.DictReader(io.StringIO(data.decode("utf-8-sig"))))
    if path.suffix == ".txt":  # a LoadGen summary: "name : value" lines
        lines = (line.split(":", 1) for line in data.decode().splitlines() if ":" in line)
        return [{name.strip(): value.strip() for name, value in lines}]
    document = json.loads(data)
    return document if isinstance(document, list) else [document]


REQUIRED = {
    "chips": {"name": "bench", "kind": "chip"},
    "deployments": {"status": "planned"},
    "funding-rounds": {"vendor_id": "openai", "round_type": "bench"},
    "results": {"metric": "bench"},
}


def run_bare(settings: Settings, fmt: Format, paths: list[Path]) -> int:
    table = KB_TABLES[fmt.kb_kind]
    columns = {c.name for c in table.__table__.columns}  # type: ignore[attr-defined]
    defaults = {
        n: i.get_default(call_default_factory=True) for n, i in table.model_fields.items() if n in columns
    }
    batches: list[list[dict[str, Any]]] = []
    for n_file, path in enumerate(paths):
        parsed = bare_rows(path)
        values = [
            {**defaults, **REQUIRED[fmt.kb_kind], "id": f"bench-{n_file}-{i}", "attributes": row}
            for i, row in enumerate(parsed)
        ]
        if "attributes" not in columns:
            values = [
                {k: v for k, v in row.items() if k != "attributes"} | {"notes": json.dumps(row["attributes"])}
                for row in values
            ]
        if fmt.batch and batches:
            batches[0] += values  # the files' rows, one executemany in one transaction
        else:
            batches.append(values)
    for values in batches:
        with session_scope(settings) as session:
            session.execute(insert(table), values)
    return sum(len(values) for values in batches)


def statements_per_import(template: Path, work: Path, fmt: Format, path: Path) -> tuple[int, int]:
    """SQL statements of one import of ``path`` on a fresh copy of ``template``: the first time (a new
    fact) and again (unchanged)."""
    shutil.copyfile(template, work)
    settings = settings_for(work)
    engine = get_engine(settings)
    counted: list[str] = []

    def count(_conn, _cursor, statement, _params, _context, _many) -> None:
        counted.append(statement)

    event.listen(engine, "before_cursor_execute", count)
    try:
        out = []
        for _ in range(2):
            counted.clear()
            run_import(settings, Format(fmt.kind, [], fmt.kb_kind, options=fmt.options), [path])
            out.append(len(counted))
    finally:
        event.remove(engine, "before_cursor_execute", count)
        engine.dispose()
    return out[0], out[1]


def timed(
    template: Path,
    work: Path,
    side: Callable[[Settings], int],
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[int, float]:
    """Run ``side`` on a fresh copy of ``template``, timed by ``clock``; the engine (and its compiled
    statements) is kept from one round to the next, as in a running service, only its connections are
    closed."""
    shutil.copyfile(template, work)
    settings = settings_for(work)
    started = clock()
    rows = side(settings)
    seconds = clock() - started
    get_engine(settings).dispose()
    return rows, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    parser.add_argument(
        "--cpu", action="store_true",
        help="time both sides by the process's CPU time (time.process_time) instead of the wall clock: on a "
        "shared machine the wall clock also counts waiting for a core",
    )
    args = parser.parse_args()
    clock = time.process_time if args.cpu else time.perf_counter
    print(f"clock: {'process CPU time' if args.cpu else 'wall clock'}; best of {args.rounds} rounds per side")
    wire()  # signal evaluation runs on import, as in the service
    print(f"{'format':26} {'rows':>5} {'import rows/s':>14} {'bare rows/s':>12} {'ratio':>6}")
    ratios = []
    with tempfile.TemporaryDirectory(prefix="chipwatch-bench-") as tmp_name:
        tmp = Path(tmp_name)
        seeded, with_chips = make_template(tmp, args.corpus)
        for fmt in FORMATS:
            paths = files_of(args.corpus, fmt)
            template = with_chips if fmt.needs_chips else seeded
            imports, bares = [], []
            for round_ in range(args.rounds + 1):  # the first round warms both sides up and is not counted
                rows, seconds = timed(
                    template, tmp / "ours.db", lambda s, f=fmt, p=paths: run_import(s, f, p), clock
                )
                rows_b, seconds_b = timed(
                    template, tmp / "bare.db", lambda s, f=fmt, p=paths: run_bare(s, f, p), clock
                )
                if round_:
                    imports.append(rows / seconds)
                    bares.append(rows_b / seconds_b)
            ours, bare = max(imports), max(bares)
            ratios.append(ours / bare)
            print(f"{fmt.kind:26} {rows:>5} {ours:>14.0f} {bare:>12.0f} {ours / bare:>6.2f}")
        low, mid = min(ratios), statistics.median(ratios)
        print(f"goal: ratio >= 0.5 for every format; lowest {low:.2f}, median {mid:.2f}")
        print("statements per single-file import (new fact, then unchanged):")
        for fmt in FORMATS:
            if fmt.batch:
                first = files_of(args.corpus, fmt)[0]
                new, again = statements_per_import(with_chips, tmp / "count.db", fmt, first)
                print(f"  {fmt.kind:26} {new:>3} {again:>3}")


if __name__ == "__main__":
    main()
