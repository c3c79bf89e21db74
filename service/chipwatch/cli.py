"""The ``chipwatch`` command line."""

from __future__ import annotations

import logging
import sys

import typer
from rich.console import Console
from rich.table import Table

from chipwatch.config import get_settings

app = typer.Typer(
    help="chipwatch: knowledge base and signal monitor for the AI inference chip race.",
    no_args_is_help=True,
    add_completion=False,
)
console = Console()


def _setup_logging() -> None:
    from chipwatch.logs import configure_logging

    configure_logging(get_settings())


def _seed() -> None:
    from chipwatch.db import session_scope
    from chipwatch.seeds import SeedError, load_seeds

    try:
        with session_scope() as session:
            report = load_seeds(session=session)
    except SeedError as exc:
        console.print(f"[red]seed data refused, nothing written:[/red] {exc}")
        raise typer.Exit(2) from exc
    console.print(f"seed data loaded: {report}")


@app.command()
def init() -> None:
    """Migrate the database to head and load seed_data/ (idempotent); prints a new admin token once."""
    _setup_logging()
    from chipwatch.auth import ensure_admin_token
    from chipwatch.migrate import upgrade_to_head

    settings = get_settings()
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
    _setup_logging()
    _seed()


@app.command()
def serve(
    host: str = typer.Option("127.0.0.1", help="interface to bind"),
    port: int = typer.Option(8000, help="TCP port"),
    no_scheduler: bool = typer.Option(False, "--no-scheduler", help="serve the API only (replicas)"),
    workers: int = typer.Option(1, help="uvicorn worker processes"),
) -> None:
    """Serve the REST API (and, unless --no-scheduler, the scheduled jobs) with uvicorn."""
    import os

    import uvicorn

    _setup_logging()
    if no_scheduler:
        os.environ["CHIPWATCH_SCHEDULER_ENABLED"] = "0"
        get_settings.cache_clear()
    uvicorn.run(
        "chipwatch.app:create_app",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level="warning",
        access_log=False,
    )


@app.command()
def worker(
    metrics_port: int = typer.Option(0, help="serve /metrics on this port (0: off)"),
) -> None:
    """Run the scheduled jobs (feed checks, signal deadlines, webhook deliveries) without the API.

    Several workers share the work through row claims on PostgreSQL; stop with SIGTERM or Ctrl-C.
    """
    import asyncio
    import signal as os_signal

    _setup_logging()
    settings = get_settings()
    log = logging.getLogger("chipwatch.worker")

    async def run() -> None:
        from chipwatch.scheduler import start_scheduler

        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (os_signal.SIGTERM, os_signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        if metrics_port:
            from prometheus_client import start_http_server

            from chipwatch.metrics import REGISTRY

            start_http_server(metrics_port, registry=REGISTRY)
        sched = await start_scheduler(settings)
        log.info("worker started")
        try:
            await stop.wait()
        finally:
            await sched.stop()
            log.info("worker stopped")

    asyncio.run(run())


@app.command()
def signals() -> None:
    """A table of the watch signals: id, status, outcome, known_at, deadline and watch health."""
    from chipwatch.db import session_scope
    from chipwatch.signals import service

    with session_scope(write=False) as session:
        rows, _ = service.list_signals(
            session=session, status=None, outcome=None, limit=10_000, after_id=None
        )
    table = Table("id", "status", "outcome", "known_at", "deadline", "watch health", title="watch signals")
    colour = {"open": "yellow", "pending_review": "magenta", "resolved": "green"}
    for r in rows:
        table.add_row(
            r["id"],
            f"[{colour.get(r['status'], 'white')}]{r['status']}[/]",
            r["outcome"] or "-",
            (r["known_at"] or "-")[:19],
            r["deadline"] or "-",
            r["watch_health"],
        )
    console.print(table)


def main() -> None:  # pragma: no cover
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)


logging.getLogger("httpx").setLevel(logging.WARNING)


if __name__ == "__main__":  # pragma: no cover
    main()
