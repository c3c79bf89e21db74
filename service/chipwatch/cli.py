"""The ``chipwatch`` command line."""

from __future__ import annotations

import dataclasses
import logging
import sys
from typing import NoReturn

import typer
from rich.console import Console
from rich.table import Table

from chipwatch.config import get_settings
from chipwatch.imports.cli import import_dataset

app = typer.Typer(
    help="chipwatch: knowledge base and signal monitor for the AI inference chip race.",
    no_args_is_help=True,
    add_completion=False,
)
console = Console()


def _setup_logging() -> None:
    from chipwatch.logs import configure_logging

    configure_logging(get_settings())


def _fail(message: str, code: int = 2) -> NoReturn:
    """One line on stderr and exit ``code``: what is wrong and what to do, never a traceback."""
    typer.echo(f"chipwatch: {message}", err=True)
    raise typer.Exit(code)


def _require_database() -> None:
    """Exit 2 with one line unless the database exists and is migrated to head; creates nothing."""
    from chipwatch.preflight import NotReady, require_initialised

    try:
        require_initialised(get_settings())
    except NotReady as exc:
        _fail(str(exc))


def _start(*, database: bool = True) -> None:
    """What every command that does work needs first: logging, the cross-domain listeners and (unless
    ``database`` is False, as for ``init``) an initialised database."""
    from chipwatch.wiring import wire

    _setup_logging()
    if database:
        _require_database()
    wire()


def _seed() -> None:
    from chipwatch.db import session_scope
    from chipwatch.seeds import SeedError, load_seeds
    from chipwatch.signals.evaluation import evaluate_seeded

    try:
        with session_scope() as session:
            report = load_seeds(session=session)
            # Seeded facts and signals are evaluated in the same transaction, as any other write is.
            evaluate_seeded(session=session, report=report)
    except SeedError as exc:
        console.print(f"[red]seed data refused, nothing written:[/red] {exc}")
        raise typer.Exit(2) from exc
    console.print(f"seed data loaded: {report}", highlight=False, soft_wrap=True)
    for conflict in report.conflicts:
        # The seed entry and the row both changed since the last load: the edit stays, the seed waits.
        console.print(f"conflict, edit kept: {conflict}", highlight=False, soft_wrap=True, markup=False)


@app.command()
def init() -> None:
    """Migrate the database to head and load seed_data/ (idempotent); prints a new admin token once.

    The only command that creates a database: a SQLite file in a directory that exists, or in the data
    directory (created if missing); exit status 2 with one line otherwise.
    """
    _start(database=False)
    from chipwatch.kit.auth import ensure_admin_token
    from chipwatch.migrate import upgrade_to_head
    from chipwatch.preflight import NotReady, prepare_new_database

    settings = get_settings()
    try:
        prepare_new_database(settings)
    except NotReady as exc:
        _fail(str(exc))
    upgrade_to_head(settings)
    console.print("database migrated to head")
    _seed()
    token = ensure_admin_token(settings)
    if token:
        # Printed to the terminal once, never logged; it is kept (mode 0600) in the data directory.
        console.print(
            f"admin token (shown once; stored in {settings.data_dir}/admin_token): {token}",
            soft_wrap=True,
            highlight=False,
        )


@app.command()
def seed() -> None:
    """Load seed_data/ into the database (validated first; refused files write nothing)."""
    _start()
    _seed()


@app.command()
def serve(
    host: str = typer.Option("127.0.0.1", help="interface to bind"),
    port: int = typer.Option(8000, help="TCP port"),
    no_scheduler: bool = typer.Option(False, "--no-scheduler", help="serve the API only (replicas)"),
    workers: int = typer.Option(1, help="uvicorn worker processes"),
) -> None:
    """Serve the REST API (and, unless --no-scheduler, the scheduled jobs) with uvicorn.

    Checks the database and binds the port before anything starts: a database that is not initialised
    or a bad CHIPWATCH_DATABASE_URL exits 2, a port that cannot be bound exits 1, each with one line.
    Prints "listening on http://HOST:PORT" once serving. Access log: CHIPWATCH_ACCESS_LOG=1.
    """
    import os

    from chipwatch.serving import CannotListen
    from chipwatch.serving import serve as serve_api

    if no_scheduler:
        os.environ["CHIPWATCH_SCHEDULER_ENABLED"] = "0"
        get_settings.cache_clear()
    _setup_logging()
    _require_database()
    try:
        started = serve_api(get_settings(), host=host, port=port, workers=workers)
    except CannotListen as exc:
        _fail(str(exc), code=1)
    if not started:
        _fail("the API did not start; see the log above", code=1)


@app.command()
def worker(
    metrics_port: int = typer.Option(0, help="serve /metrics on this port (0: off)"),
) -> None:
    """Run the scheduled jobs (feed checks, signal deadlines, webhook deliveries) without the API.

    Several workers share the work through row claims on PostgreSQL; stop with SIGTERM or Ctrl-C.
    """
    import asyncio
    import signal as os_signal

    _start()
    settings = get_settings()
    log = logging.getLogger("chipwatch.worker")

    async def run() -> None:
        from chipwatch.scheduler import collect_jobs, start_scheduler

        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (os_signal.SIGTERM, os_signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        if metrics_port:
            from prometheus_client import start_http_server

            from chipwatch.metrics import REGISTRY

            start_http_server(metrics_port, registry=REGISTRY)
        from chipwatch.webhooks.jobs import start_dispatcher

        dispatcher = await start_dispatcher(settings)
        sched = await start_scheduler(settings, collect_jobs())
        log.info("worker started")
        try:
            await stop.wait()
        finally:
            await sched.stop()
            await dispatcher.stop()
            log.info("worker stopped")

    asyncio.run(run())


SIGNAL_COLUMNS = ("id", "status", "outcome", "deadline", "watch health", "known_at")
"""The signals table's columns, most wanted first: when the terminal is too narrow for all of them,
the last ones are left out (never cut short)."""


@app.command()
def signals(
    columns: str = typer.Option(
        None,
        "--columns",
        "-c",
        help=f"comma-separated columns to show, of: {', '.join(SIGNAL_COLUMNS)} "
        "(default: as many as the terminal's width holds, in that order)",
    ),
) -> None:
    """A table of the watch signals: id, status, outcome, deadline, watch health and known_at (UTC).

    No value is ever cut short: on a narrow terminal the columns that do not fit are left out, last
    first, and a line says which; ``--columns`` picks them. Exit status 2 for an unknown column.
    """
    from chipwatch.db import session_scope
    from chipwatch.signals import service

    chosen = _signal_columns(columns)
    _require_database()
    with session_scope(write=False) as session:
        rows = service.list_signals(session=session, limit=10_000)["items"]
    table, left_out = _fitting_signals_table(rows, chosen, fit=columns is None)
    console.print(table)
    if left_out:
        console.print(
            f"{', '.join(left_out)} left out to fit {console.width} columns; "
            "widen the terminal or pick with --columns",
            highlight=False,
        )


def _signal_columns(columns: str | None) -> list[str]:
    if columns is None:
        return list(SIGNAL_COLUMNS)
    # A column is named as the table heads it or as the API's field (watch_health): either spelling.
    by_key = {column.replace("_", " "): column for column in SIGNAL_COLUMNS}
    given = [name.strip() for name in columns.split(",") if name.strip()]
    unknown = [name for name in given if name.replace("_", " ") not in by_key]
    if unknown or not given:
        named = ", ".join(unknown) or "(none given)"
        _fail(f"unknown column {named}; choose from {', '.join(SIGNAL_COLUMNS)}")
    return [by_key[name.replace("_", " ")] for name in given]


def _fitting_signals_table(rows: list[dict], columns: list[str], *, fit: bool) -> tuple[Table, list[str]]:
    """The signals table with ``columns``; with ``fit``, the last columns are dropped (id and status
    stay) until it fits the console. Returns the table and the columns left out."""
    from rich.measure import Measurement

    colour = {"open": "yellow", "pending_review": "magenta", "resolved": "green"}
    cells = {
        "id": lambda r: r["id"],
        "status": lambda r: f"[{colour.get(r['status'], 'white')}]{r['status']}[/]",
        "outcome": lambda r: r["outcome"] or "-",
        "deadline": lambda r: r["deadline"] or "-",
        "watch health": lambda r: r["watch_health"],
        "known_at": lambda r: (r["known_at"] or "-")[:16].replace("T", " "),
    }
    shown, left_out = list(columns), []
    while True:
        table = Table(title="watch signals")
        for name in shown:
            table.add_column(name, no_wrap=True)
        for r in rows:
            table.add_row(*(cells[name](r) for name in shown))
        width = Measurement.get(console, console.options.update_width(10_000), table).maximum
        if not fit or width <= console.width or len(shown) <= 2:
            return table, left_out
        left_out.insert(0, shown.pop())


@app.command()
def check(
    source: list[str] = typer.Option(
        None, "--source", "-s", help="source id to check (repeatable); default: every enabled feed"
    ),
) -> None:
    """Check feeds now, whether due or not, with a progress bar and a summary table.

    Uses the same check as the scheduler. A feed that fails is listed with its error (and recorded
    in its health). Exit status: 2 for an unknown --source id or a source that is not a feed; 1 when
    every feed checked failed (no network, a database that refuses writes: nothing was checked); 0
    otherwise, since some of many feeds failing is their own health, not the command's.
    """
    import asyncio

    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from chipwatch.db import session_scope
    from chipwatch.sources import service
    from chipwatch.sources.check_pass import check_sources
    from chipwatch.sources.errors import NotAFeed, SourceNotFound

    _start()
    # Each failure is in the summary table; per-check log lines would only break up the progress bar.
    logging.getLogger("chipwatch.sources").setLevel(logging.WARNING)
    settings = get_settings()
    with session_scope(write=False) as session:
        try:
            ids = service.feed_source_ids(session=session, source_ids=source or None)
        except (SourceNotFound, NotAFeed) as exc:
            console.print(f"[red]{escape(str(exc))}[/red]")
            raise typer.Exit(2) from exc
    if not ids:
        console.print("no enabled feeds to check")
        return

    with Progress(
        TextColumn("checking feeds"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
        console=console,
        transient=False,
    ) as progress:
        task = progress.add_task("", total=len(ids))

        def advance(outcome) -> None:
            progress.update(task, advance=1, description=outcome.source_id)

        outcomes = asyncio.run(check_sources(ids, settings=settings, on_outcome=advance))

    _print_check_summary(outcomes)
    if outcomes and all(o.status == "error" for o in outcomes):
        raise typer.Exit(1)


def _print_check_summary(outcomes: list) -> None:
    """The feed check's table (one row per source) and its totals line."""
    table = Table(title="feed check")
    table.add_column("source", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("HTTP", justify="right")
    table.add_column("new items", justify="right")
    table.add_column("updated", justify="right")
    table.add_column("error", overflow="fold")
    colour = {"ok": "green", "not_modified": "cyan", "error": "red"}
    for o in sorted(outcomes, key=lambda o: o.source_id):
        table.add_row(
            o.source_id,
            f"[{colour.get(o.status, 'white')}]{o.status}[/]",
            str(o.http_status or "-"),
            str(o.new_items),
            str(o.updated_items),
            (o.error or "")[:120],
        )
    console.print(table)
    failed = sum(o.status == "error" for o in outcomes)
    console.print(
        f"{len(outcomes)} checked, {sum(o.new_items for o in outcomes)} new items, {failed} failed",
        highlight=False,
    )


jobs_app = typer.Typer(help="The scheduled jobs: list them, or run one now.", no_args_is_help=True)
app.add_typer(jobs_app, name="jobs")


@jobs_app.command("list")
def jobs_list() -> None:
    """A table of the scheduled jobs: id, interval, whether it runs at start-up, what it does."""
    from chipwatch.scheduler import collect_jobs

    table = Table(title="scheduled jobs")
    table.add_column("id", no_wrap=True)
    table.add_column("every", justify="right", no_wrap=True)
    table.add_column("at start", no_wrap=True)
    table.add_column("does", overflow="fold")
    for job in collect_jobs():
        table.add_row(job.id, f"{job.interval_s:g} s", "yes" if job.run_at_start else "no", job.description)
    console.print(table)


@jobs_app.command("run")
def jobs_run(name: str = typer.Argument(..., help="job id, e.g. sources.check_due")) -> None:
    """Run one scheduled job now, once, through the same code path as the scheduler.

    Exit status 2 for an unknown job id; a job that fails exits 1 with its error.
    """
    import asyncio

    from chipwatch.kit.jobs import find_job
    from chipwatch.scheduler import collect_jobs

    try:
        job = find_job(collect_jobs(), name)
    except KeyError as exc:
        console.print(f"[red]{exc.args[0]}[/red]", highlight=False)
        raise typer.Exit(2) from exc
    _start()
    result = asyncio.run(job.func(get_settings()))
    console.print(f"{job.id} done: {_summary(result)}", highlight=False, soft_wrap=True)


secrets_app = typer.Typer(help="The key that encrypts webhook secrets at rest.", no_args_is_help=True)
app.add_typer(secrets_app, name="secrets")


@secrets_app.command("rotate")
def secrets_rotate() -> None:
    """Encrypt every webhook secret under a new key, then retire the older keys (README: Secrets at rest).

    With the generated key file this is the whole rotation; with CHIPWATCH_SECRET_KEYS it re-encrypts under
    the first listed key, after which the others can be removed. Exit status 1 when a stored secret opens
    with none of the keys.
    """
    from chipwatch.kit.sealing import SealError
    from chipwatch.webhooks.keys import rotate_keys

    _start()
    try:
        done = rotate_keys(get_settings())
    except SealError as exc:
        console.print(f"[red]{exc}[/red]", highlight=False, soft_wrap=True)
        raise typer.Exit(1) from exc
    if get_settings().secret_keys:
        tail = f"all sealed under the first key of {done.origin}; the keys after it can now be removed"
    else:
        tail = f"new key in {done.origin}; {done.dropped_keys} older key(s) removed"
    message = f"{done.resealed} webhook endpoint(s) re-encrypted; {tail}"
    console.print(message, highlight=False, soft_wrap=True)


def _summary(result: object) -> str:
    """A one-line account of a job's return value (a list is counted, None says nothing to report)."""
    if result is None:
        return "nothing to report"
    if isinstance(result, list):
        return f"{len(result)} done"
    if dataclasses.is_dataclass(result) and not isinstance(result, type):
        # A report dataclass reads as its non-zero counts (lists counted), not as its Python repr.
        counts = []
        for f in dataclasses.fields(result):
            value = getattr(result, f.name)
            n = len(value) if isinstance(value, list | tuple | set | dict) else value
            if isinstance(n, int) and not isinstance(n, bool) and n:
                counts.append(f"{n} {f.name.replace('_', ' ')}")
        return ", ".join(counts) or "nothing to report"
    return str(result)


app.command("import")(import_dataset)


def main() -> None:  # pragma: no cover
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)


logging.getLogger("httpx").setLevel(logging.WARNING)


if __name__ == "__main__":  # pragma: no cover
    main()
