"""``chipwatch import KIND PATH|URL``: import one dataset file with a progress bar and a summary; for a
kind whose file is one row (MLPerf systems and log summaries, benchmark_serving runs), a directory or
several files are one import."""

from __future__ import annotations

import asyncio
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from chipwatch.config import get_settings
from chipwatch.datasets.kinds import DATASET_KINDS
from chipwatch.imports.runner import (
    FetchFailed,
    ImportOutcome,
    TooLarge,
    batch_files,
    execute_import,
    fetch_dataset,
    is_url,
    read_batch,
    read_file,
)
from chipwatch.imports.schemas import ImportPublic
from chipwatch.imports.service import ImportRequest
from chipwatch.logs import configure_logging
from chipwatch.wiring import wire

console = Console()
STAGES = {"parse": "parsing", "build": "resolving names", "write": "writing facts"}


def import_dataset(
    kind: str = typer.Argument(..., help=f"dataset kind: {', '.join(DATASET_KINDS)}"),
    locations: list[str] = typer.Argument(
        ...,
        metavar="PATH|URL...",
        help="a file, or an http(s) URL to fetch; for one-row kinds also directories or several files",
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="show what would change; write nothing"),
    strict: bool = typer.Option(False, "--strict", help="refuse the whole file when any row is bad"),
    hardware: str | None = typer.Option(None, help="benchmark-serving: the hardware the run used"),
    accelerators: int | None = typer.Option(None, min=1, help="benchmark-serving: accelerator count"),
    commit: str | None = typer.Option(None, help="repository commit the file comes from"),
) -> None:
    """Import a dataset file into the knowledge base (one transaction), then print what it did.

    For ``mlperf-system``, ``mlperf-log-summary`` and ``benchmark-serving``, a directory (searched
    recursively for the kind's files) or several files are one import: one transaction, one version
    (the SHA-256 over the files' sorted digests), errors reported by file name.

    Exit status: 0 imported (or dry run), 1 refused (wrong kind of file, no rows, --strict with bad
    rows), 2 an unknown kind, the file could not be read or fetched, or the database is not initialised.
    """
    from chipwatch.preflight import NotReady, require_initialised

    settings = get_settings()
    configure_logging(settings)
    try:
        # Before init there is nothing to import into: say so in one line and create no database.
        require_initialised(settings)
    except NotReady as exc:
        typer.echo(f"chipwatch: {exc}", err=True)
        raise typer.Exit(2) from exc
    if kind not in DATASET_KINDS:  # a usage error: nothing is read, and no refused import is recorded
        console.print(f"[red]unknown dataset kind {kind!r}[/red]; expected one of {', '.join(DATASET_KINDS)}")
        raise typer.Exit(2)
    wire()
    options = {k: v for k, v in {"hardware": hardware, "accelerator_count": accelerators}.items() if v}
    location = " ".join(locations)
    common = {"kind": kind, "commit": commit, "options": options, "strict": strict, "actor": "cli"}
    try:
        if len(locations) == 1 and is_url(locations[0]):
            data, url = asyncio.run(fetch_dataset(location, settings=settings))
            request = ImportRequest(data=data, url=url, file_name=location.rsplit("/", 1)[-1], **common)
        elif len(locations) == 1 and not Path(location).is_dir():
            path = Path(location)
            request = ImportRequest(data=read_file(path, settings=settings), file_name=path.name, **common)
        else:
            paths = batch_files(kind, [Path(p) for p in locations])
            if not paths:
                console.print(f"[red]no {kind} files in {location}[/red]")
                raise typer.Exit(2)
            files = read_batch(paths, settings=settings)
            request = ImportRequest(data=b"", files=files, file_name=_batch_name(locations), **common)
    except (FetchFailed, TooLarge, OSError, ValueError) as exc:
        console.print(f"[red]cannot read {location}:[/red] {exc}")
        raise typer.Exit(2) from exc
    outcome = _run_with_progress(request, dry_run)
    _print_outcome(outcome, location)
    raise typer.Exit(1 if outcome.refusal else 0)


def _batch_name(locations: list[str]) -> str:
    """The name an import of several files is listed under: the directory, or the first file and how
    many others."""
    if len(locations) == 1:
        return Path(locations[0]).name or locations[0]
    return f"{Path(locations[0]).name} and {len(locations) - 1} more"


def _run_with_progress(request: ImportRequest, dry_run: bool) -> ImportOutcome:
    columns = (TextColumn("{task.description:<16}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task(STAGES["parse"], total=None)

        def note(stage: str, done: int, total: int) -> None:
            progress.update(task, description=STAGES.get(stage, stage), completed=done, total=total or None)

        return execute_import(request, dry_run=dry_run, progress=note)


def _print_outcome(outcome: ImportOutcome, location: str) -> None:
    if outcome.refusal is not None:
        refusal = outcome.refusal
        console.print(f"[red]import refused, nothing written:[/red] {refusal.reason}", soft_wrap=True)
        for issue in refusal.skipped[:20]:
            console.print(f"  {_where(issue)}: {issue['reason']}", soft_wrap=True)
        return
    report = outcome.report
    assert report is not None
    _print_summary(report, location)


def _where(issue: dict) -> str:
    """Where a reported issue sits: ``row N``, or in a batch ``FILE`` (``FILE row N``)."""
    if not issue.get("file"):
        return f"row {issue['row']}"
    return issue["file"] + (f" row {issue['row']}" if issue.get("row") else "")


def _print_summary(report: ImportPublic, location: str) -> None:
    title = "dry run (nothing written)" if report.dry_run else f"import {report.id}"
    table = Table(title=f"{title}: {report.kind} {location}", title_justify="left")
    # Short headers so the row fits an 80-column terminal: new = inserted, same = unchanged.
    for column in ("read", "new", "updated", "same", "retired", "restored", "skipped", "waiting", "dups"):
        table.add_column(column, justify="right")
    counts = (
        report.rows_read,
        report.inserted,
        report.updated,
        report.unchanged,
        report.retired,
        report.restored,
        report.skipped,
        report.waiting,
        report.duplicates,
    )
    table.add_row(*(str(v) for v in counts))
    console.print(table)
    console.print(f"version sha256 {report.sha256}" + (f", commit {report.commit}" if report.commit else ""))
    if report.report.get("files"):
        files = report.report["files"]
        console.print(f"{files} file{'' if files == 1 else 's'}, one import")
    for issue in report.report.get("skipped", [])[:20]:
        console.print(f"  skipped {_where(issue)}: {issue['reason']}", soft_wrap=True)
    for name in report.report.get("unresolved", [])[:20]:
        one = name["rows"] == 1
        rows = f"{name['rows']} row{'' if one else 's'}"
        held = f"{rows} {'waits' if one else 'wait'}" if name["holds_rows"] else f"{rows} without the link"
        console.print(
            f"  unresolved {name['kind']} {name['name']!r}: {name['reason']} ({held})", soft_wrap=True
        )
    for change in report.report.get("changed", [])[:20]:
        console.print(f"  changed {change['id']}: {', '.join(change['fields'])}", soft_wrap=True)
