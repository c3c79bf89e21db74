"""``chipwatch import KIND PATH|URL``: import one dataset file with a progress bar and a summary."""

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
    execute_import,
    fetch_dataset,
    is_url,
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
    location: str = typer.Argument(..., metavar="PATH|URL", help="a file, or an http(s) URL to fetch"),
    dry_run: bool = typer.Option(False, "--dry-run", help="show what would change; write nothing"),
    strict: bool = typer.Option(False, "--strict", help="refuse the whole file when any row is bad"),
    hardware: str | None = typer.Option(None, help="benchmark-serving: the hardware the run used"),
    accelerators: int | None = typer.Option(None, min=1, help="benchmark-serving: accelerator count"),
    commit: str | None = typer.Option(None, help="repository commit the file comes from"),
) -> None:
    """Import a dataset file into the knowledge base (one transaction), then print what it did.

    Exit status: 0 imported (or dry run), 1 refused (wrong kind of file, no rows, --strict with bad
    rows), 2 the file could not be read or fetched, or the database is not initialised.
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
    wire()
    try:
        if is_url(location):
            data, url, name = *asyncio.run(fetch_dataset(location, settings=settings)), location
        else:
            data, url, name = read_file(Path(location), settings=settings), None, Path(location).name
    except (FetchFailed, TooLarge, OSError) as exc:
        console.print(f"[red]cannot read {location}:[/red] {exc}")
        raise typer.Exit(2) from exc
    options = {k: v for k, v in {"hardware": hardware, "accelerator_count": accelerators}.items() if v}
    request = ImportRequest(
        kind=kind,
        data=data,
        file_name=name.rsplit("/", 1)[-1] if url else name,
        url=url,
        commit=commit,
        options=options,
        strict=strict,
        actor="cli",
    )
    outcome = _run_with_progress(request, dry_run)
    _print_outcome(outcome, location)
    raise typer.Exit(1 if outcome.refusal else 0)


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
            console.print(f"  row {issue['row']}: {issue['reason']}", soft_wrap=True)
        return
    report = outcome.report
    assert report is not None
    _print_summary(report, location)


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
    for issue in report.report.get("skipped", [])[:20]:
        console.print(f"  skipped row {issue['row']}: {issue['reason']}", soft_wrap=True)
    for name in report.report.get("unresolved", [])[:20]:
        held = f"{name['rows']} rows wait" if name["holds_rows"] else f"{name['rows']} rows without the link"
        console.print(
            f"  unresolved {name['kind']} {name['name']!r}: {name['reason']} ({held})", soft_wrap=True
        )
    for change in report.report.get("changed", [])[:20]:
        console.print(f"  changed {change['id']}: {', '.join(change['fields'])}", soft_wrap=True)
