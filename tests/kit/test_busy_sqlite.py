"""SQLite: a write that cannot get the write lock within the busy timeout ("database is locked") is
answered 503 with Retry-After, never 500; reads go on meanwhile (WAL)."""

from __future__ import annotations

import sqlite3

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.engine import make_url

import chipwatch.db as chipwatch_db
from chipwatch.config import get_settings
from tests.fixtures.database import ADMIN_TOKEN, postgres_url

pytestmark = pytest.mark.skipif(
    bool(postgres_url()), reason="SQLite's database-wide write lock is what this holds"
)


@pytest.fixture
def quick_client(db, monkeypatch):
    # A short busy timeout, so the refused write does not wait the service's 15 s.
    monkeypatch.setattr(chipwatch_db, "SQLITE_BUSY_TIMEOUT_MS", 300)
    from chipwatch.app import create_app

    with TestClient(create_app(scheduler=False)) as client:
        yield client


def test_a_write_blocked_by_another_writer_is_a_503_with_retry_after(quick_client):
    path = make_url(get_settings().resolved_database_url).database
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process holding the write lock
    try:
        headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        refused = quick_client.patch("/v1/vendors/groq", json={"country": "ZZ"}, headers=headers)
        assert refused.status_code == 503, refused.text
        assert refused.headers["retry-after"] == "1"
        assert refused.headers["content-type"] == "application/problem+json"
        assert refused.json()["detail"].startswith("the database is busy (locked by another writer)")
        read = quick_client.get("/v1/vendors/groq")
        assert read.status_code == 200 and read.json()["country"] != "ZZ"
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    accepted = quick_client.patch("/v1/vendors/groq", json={"country": "ZZ"}, headers=headers)
    assert accepted.status_code == 200 and accepted.json()["country"] == "ZZ"
