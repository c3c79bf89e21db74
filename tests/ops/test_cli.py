"""The operator's command line: jobs are listed and run by id, through the scheduler's code path."""

from __future__ import annotations

import subprocess
import sys
from datetime import date

from sqlalchemy import select
from typer.testing import CliRunner

from chipwatch.cli import app
from chipwatch.db import session_scope
from chipwatch.scheduler import collect_jobs
from chipwatch.signals.models import Signal

runner = CliRunner()


def test_jobs_list_names_every_declared_job(db):
    result = runner.invoke(app, ["jobs", "list"], terminal_width=200)
    assert result.exit_code == 0, result.output
    ids = [j.id for j in collect_jobs()]
    assert ids == ["sources.check_due", "sources.relink_mentions", "signals.deadlines", "webhooks.deliver"]
    for job in collect_jobs():
        assert job.id in result.output and f"{job.interval_s:g} s" in result.output


def test_jobs_run_runs_the_job_once(db):
    # A signal whose deadline has passed is resolved by the deadlines job, as the scheduler would.
    with session_scope(db) as session:
        signal = session.get(Signal, "jalapeno-100mw-2026")
        assert (signal.status, signal.on_deadline) == ("open", "no")
        signal.deadline = date(2026, 1, 31)
    result = runner.invoke(app, ["jobs", "run", "signals.deadlines"], terminal_width=200)
    assert result.exit_code == 0, result.output
    # One signal moved (its deadline passed); the report reads as counts, not as a Python repr.
    assert result.output.strip().splitlines()[-1] == "signals.deadlines done: 1 transitions"
    with session_scope(db, write=False) as session:
        signal = session.get(Signal, "jalapeno-100mw-2026")
        assert (signal.status, signal.outcome) == ("resolved", "no")
        still_open = session.scalars(select(Signal.id).where(Signal.status == "open")).all()
    assert still_open and "jalapeno-100mw-2026" not in still_open


def test_an_unknown_job_is_refused_naming_the_known_ones(db):
    result = runner.invoke(app, ["jobs", "run", "sources.chek_due"], terminal_width=200)
    assert result.exit_code == 2
    assert "no job 'sources.chek_due'" in result.output and "sources.check_due" in result.output


def test_importing_the_metrics_module_touches_no_database(tmp_path):
    # A fresh interpreter pointed at a database that does not exist: any query at import would fail
    # loudly ("queue depth unavailable") or create the file.
    missing = tmp_path / "nowhere" / "chipwatch.db"
    code = "import chipwatch.metrics, chipwatch.app"
    env = {"CHIPWATCH_DATABASE_URL": f"sqlite:///{missing}", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "queue depth unavailable" not in done.stderr
    assert not missing.exists() and not missing.parent.exists()


def test_the_signals_table_lists_every_signal(db):
    with session_scope(db, write=False) as session:
        ids = session.scalars(select(Signal.id)).all()
    result = runner.invoke(app, ["signals"], env={"COLUMNS": "250"})  # wide enough that no id is folded
    assert result.exit_code == 0, result.output
    assert ids and all(signal_id in result.output for signal_id in ids)
