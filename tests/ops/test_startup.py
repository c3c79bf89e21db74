"""The real ``chipwatch`` command says what is wrong in one line: before ``init``, with a bad database URL,
a SQLite path in a missing directory, a port in use; and ``serve`` says where it listens, quietly.

Every test runs the installed console script in a subprocess, in a temporary directory, with only the
``CHIPWATCH_*`` variables it sets.
"""

from __future__ import annotations

import re
import socket
import stat
import subprocess
import time
import uuid
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine, inspect, text
from sqlalchemy.engine import make_url

from chipwatch.db import session_scope
from tests.fixtures.cli import CHIPWATCH, chipwatch, chipwatch_env, db_settings
from tests.fixtures.database import postgres_url

NOT_INITIALISED = re.compile(r"^chipwatch: the database (.+) is not initialised: run `chipwatch init` first$")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


COMMANDS = [
    ["signals"], ["check"], ["seed"], ["worker"], ["jobs", "run", "signals.deadlines"], ["serve"],
    ["import", "epoch-ml-hardware", "ml_hardware.csv", "--dry-run"],
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda args: " ".join(args))
def test_a_command_before_init_says_so_in_one_line_and_creates_nothing(tmp_path, args):
    data_dir = tmp_path / "data"
    done = chipwatch(*args, cwd=tmp_path, data_dir=str(data_dir))
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert NOT_INITIALISED.match(line) and str(data_dir / "chipwatch.db") in line
    assert done.stdout == ""
    assert not data_dir.exists() and list(tmp_path.iterdir()) == []


def test_an_empty_database_file_is_not_initialised_either(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "chipwatch.db").touch()
    done = chipwatch("serve", "--port", str(_free_port()), cwd=tmp_path, data_dir=str(tmp_path / "data"))
    assert done.returncode == 2
    assert NOT_INITIALISED.match(done.stderr.strip())


@pytest.mark.skipif(not postgres_url(), reason="needs CHIPWATCH_TEST_DATABASE_URL (a PostgreSQL server)")
def test_a_postgresql_database_never_initialised_is_refused_and_left_empty(tmp_path):
    server = make_url(postgres_url().replace("postgresql://", "postgresql+psycopg://", 1))
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    name = f"chipwatch_empty_{uuid.uuid4().hex[:8]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(postgres_url()).set(database=name).render_as_string(hide_password=False)
    try:
        for args in (["signals"], ["serve", "--port", str(_free_port())]):
            done = chipwatch(*args, cwd=tmp_path, database_url=url, data_dir=str(tmp_path / "data"))
            assert done.returncode == 2, done.stderr
            assert NOT_INITIALISED.match(done.stderr.strip()), done.stderr
        empty = create_engine(make_url(url.replace("postgresql://", "postgresql+psycopg://", 1)))
        with empty.connect() as conn:
            assert inspect(conn).get_table_names() == []
        empty.dispose()
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.mark.parametrize(
    "url",
    ["postgresql://chipwatch:s3cret@db:notaport/chipwatch", "not a url at all", "mysql://db/chipwatch"],
)
def test_serve_with_an_unusable_database_url_refuses_to_start(tmp_path, url):
    started = time.monotonic()
    done = chipwatch("serve", "--port", str(_free_port()), cwd=tmp_path, database_url=url, timeout_s=60)
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("chipwatch: CHIPWATCH_DATABASE_URL ")
    assert "s3cret" not in line
    assert time.monotonic() - started < 30  # refused at once, not retried every few seconds
    assert list(tmp_path.iterdir()) == []


def test_init_creates_a_database_only_in_an_existing_directory_or_the_data_directory(tmp_path):
    missing = tmp_path / "no" / "such" / "dir" / "chipwatch.db"
    done = chipwatch(
        "init", cwd=tmp_path, database_url=f"sqlite:///{missing}", data_dir=str(tmp_path / "data")
    )
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line == (
        f"chipwatch: cannot create the database {missing}: directory {missing.parent} does not exist "
        f"(create it first; only the data directory {tmp_path / 'data'} is created for you)"
    )
    assert list(tmp_path.iterdir()) == []

    # The data directory (here two levels that do not exist yet) is created, owner-only.
    data_dir = tmp_path / "var" / "chipwatch"
    done = chipwatch("init", cwd=tmp_path, data_dir=str(data_dir), admin_token="t" * 32)
    assert done.returncode == 0, done.stderr
    assert (data_dir / "chipwatch.db").is_file()
    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700
    assert chipwatch("signals", cwd=tmp_path, data_dir=str(data_dir)).returncode == 0


def _serve(tmp_path: Path, port: int, *args: str, **settings: str) -> subprocess.Popen:
    return subprocess.Popen(
        [CHIPWATCH, "serve", "--port", str(port), *args],
        cwd=tmp_path,
        env=chipwatch_env(**settings),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_healthy(base_url: str, process: subprocess.Popen, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        try:
            if httpx.get(f"{base_url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.2)
    raise AssertionError("chipwatch serve did not answer /healthz")


def _stop(process: subprocess.Popen) -> str:
    process.send_signal(2)  # SIGINT, as Ctrl-C
    try:
        return process.communicate(timeout=30)[1]
    except subprocess.TimeoutExpired:
        process.kill()
        return process.communicate()[1]


def test_serve_on_a_port_in_use_says_so_in_one_line_before_any_job_runs(db, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = chipwatch("serve", "--port", str(port), cwd=tmp_path, **db_settings(db))
    assert done.returncode == 1
    [line] = done.stderr.strip().splitlines()
    assert line == f"chipwatch: cannot listen on http://127.0.0.1:{port}: Address already in use"


def test_serve_says_where_it_listens_and_keeps_the_log_quiet(db, tmp_path):
    port = _free_port()
    with session_scope(db) as session:  # no feed to fetch: the jobs run, but touch no network
        session.execute(text("UPDATE sources SET enabled = false"))
    process = _serve(tmp_path, port, **db_settings(db))
    _wait_healthy(f"http://127.0.0.1:{port}", process)
    for _ in range(3):
        httpx.get(f"http://127.0.0.1:{port}/v1/race")
    time.sleep(2)  # the jobs that run at start-up have run by now
    lines = _stop(process).strip().splitlines()
    assert f"listening on http://127.0.0.1:{port} (API and scheduled jobs, 1 worker process)" in lines[0]
    assert any("scheduler started" in line for line in lines)
    assert not [line for line in lines if "apscheduler" in line or "Running job" in line]
    assert not [line for line in lines if "GET /" in line]  # no access log unless asked for
    assert not [line for line in lines if "Traceback" in line or "ERROR" in line]
    assert len(lines) <= 6, lines


def test_the_access_log_is_one_line_per_request_when_set(db, tmp_path):
    port = _free_port()
    process = _serve(tmp_path, port, "--no-scheduler", access_log="1", **db_settings(db))
    _wait_healthy(f"http://127.0.0.1:{port}", process)
    assert httpx.get(f"http://127.0.0.1:{port}/v1/race").status_code == 200
    lines = _stop(process).strip().splitlines()
    assert "listening on" in lines[0] and "(API only, 1 worker process)" in lines[0]
    race = [line for line in lines if '"GET /v1/race HTTP/1.1" 200' in line]
    assert len(race) == 1 and "uvicorn.access" in race[0]



def _failed_logins(base_url: str, tries: int) -> list[int]:
    # Each try claims to come from another address; only a trusted proxy may say so.
    return [
        httpx.post(f"{base_url}/login", data={"token": "wrong", "next": "/"},
                   headers={"X-Forwarded-For": f"198.51.100.{n}"}).status_code
        for n in range(1, tries + 1)
    ]


def test_a_client_cannot_escape_the_login_throttle_by_naming_another_address(db, tmp_path):
    port = _free_port()
    process = _serve(tmp_path, port, "--no-scheduler", **db_settings(db))
    try:
        _wait_healthy(f"http://127.0.0.1:{port}", process)
        assert _failed_logins(f"http://127.0.0.1:{port}", 11) == [401] * 10 + [429]
    finally:
        _stop(process)


def test_a_trusted_proxy_names_the_client_the_throttle_counts(db, tmp_path):
    port = _free_port()
    process = _serve(tmp_path, port, "--no-scheduler", forwarded_allow_ips="127.0.0.1", **db_settings(db))
    try:
        _wait_healthy(f"http://127.0.0.1:{port}", process)
        assert _failed_logins(f"http://127.0.0.1:{port}", 11) == [401] * 11
    finally:
        _stop(process)
