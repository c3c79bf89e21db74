"""A whole number the SQLite driver cannot bind (beyond 64 bits) is a 422 problem, not a 500."""

from __future__ import annotations

import sqlite3

from fastapi import FastAPI
from fastapi.testclient import TestClient

from chipwatch.kit.errors import install_error_handlers


def test_a_number_sqlite_cannot_bind_is_answered_as_a_problem(tmp_path):
    app = FastAPI()
    install_error_handlers(app)
    path = tmp_path / "overflow.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (n INTEGER)")

    @app.post("/store/{n}")
    def store(n: int):
        with sqlite3.connect(path) as conn:
            conn.execute("INSERT INTO t (n) VALUES (?)", (n,))
        return {"stored": n}

    client = TestClient(app)
    assert client.post(f"/store/{2**63 - 1}").status_code == 200
    refused = client.post(f"/store/{2**64}")
    assert refused.status_code == 422
    assert refused.headers["content-type"] == "application/problem+json"
    assert refused.json()["detail"].startswith("a value cannot be stored: ")
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT n FROM t").fetchall() == [(2**63 - 1,)]
