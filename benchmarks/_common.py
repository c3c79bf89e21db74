"""Helpers shared by the benchmark scripts: temporary seeded databases and server processes."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def seeded_env(tmp: Path) -> dict[str, str]:
    """Environment for a chipwatch process on a fresh migrated, seeded SQLite file under ``tmp``."""
    env = {
        **os.environ,
        "CHIPWATCH_DATA_DIR": str(tmp),
        "CHIPWATCH_ADMIN_TOKEN": "bench",
        "CHIPWATCH_SCHEDULER_ENABLED": "0",
        "CHIPWATCH_ALLOW_PRIVATE_NETWORKS": "1",
    }
    env.pop("CHIPWATCH_DATABASE_URL", None)
    subprocess.run(
        [sys.executable, "-m", "chipwatch.cli", "init"],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        cwd=ROOT,
    )
    return env


@contextmanager
def server(argv: list[str], env: dict[str, str], port: int, path: str = "/healthz", wait_s: float = 30):
    """Run a server process until the block ends; waits up to ``wait_s`` until ``path`` answers (start-up
    on a large database, on a busy machine, can take minutes) and raises RuntimeError with the end of its
    log when it exits or does not answer in time. Its log goes to a file, not a pipe: a server that logs
    more than a pipe holds would stall."""
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen(argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log)
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}{path}", timeout=5).status_code < 500:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                raise RuntimeError(f"server did not start: {log.read().decode()[-2000:]}")
            time.sleep(0.2)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@contextmanager
def tempdir():
    with tempfile.TemporaryDirectory(prefix="chipwatch-bench-") as d:
        yield Path(d)


@contextmanager
def seeded_database(database_url: str | None = None, **env: str):
    """A fresh migrated, seeded database for this process: SQLite in a temporary data directory, or the
    (empty) database at ``database_url``.

    ``env`` adds settings (e.g. ``CHIPWATCH_ALLOW_PRIVATE_NETWORKS="1"``); yields the Settings, and
    disposes of the engines when the block ends."""
    from chipwatch.config import get_settings
    from chipwatch.db import dispose_engines, session_scope
    from chipwatch.migrate import upgrade_to_head
    from chipwatch.seeds import load_seeds

    with tempfile.TemporaryDirectory(prefix="chipwatch-bench-") as tmp:
        os.environ["CHIPWATCH_DATA_DIR"] = tmp
        os.environ.update(env)
        if database_url:
            os.environ["CHIPWATCH_DATABASE_URL"] = database_url
        else:
            os.environ.pop("CHIPWATCH_DATABASE_URL", None)
        get_settings.cache_clear()
        settings = get_settings()
        upgrade_to_head(settings)
        with session_scope(settings) as session:
            load_seeds(session=session)
        try:
            yield settings
        finally:
            dispose_engines()
