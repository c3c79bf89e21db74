"""A commit the database refuses is answered with a problem, never with the route's 2xx.

The refusal is real: a trigger on ``vendors`` writes a row whose foreign key is checked only at
COMMIT (``DEFERRABLE INITIALLY DEFERRED``), so every statement of the write succeeds and the commit
itself fails, on SQLite and on PostgreSQL alike. On PostgreSQL a deferred constraint trigger also
raises a serialization failure at commit, the error of a busy database.
"""

from __future__ import annotations

import pytest
from sqlalchemy import text

from chipwatch.db import get_engine, is_postgres, session_scope
from tests.fixtures.database import ADMIN_TOKEN
from tests.fixtures.server import serving

ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}

SQLITE_GUARD = [
    "CREATE TABLE commit_guard (vendor_id VARCHAR(64) REFERENCES vendors (id) DEFERRABLE INITIALLY DEFERRED)",
    "CREATE TRIGGER vendors_commit_guard AFTER UPDATE OF country ON vendors WHEN NEW.country = 'ZZ' "
    "BEGIN INSERT INTO commit_guard (vendor_id) VALUES ('no-such-vendor'); END",
]
POSTGRES_GUARD = [
    "CREATE TABLE commit_guard (vendor_id VARCHAR(64) REFERENCES vendors (id) DEFERRABLE INITIALLY DEFERRED)",
    "CREATE FUNCTION commit_guard_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    "INSERT INTO commit_guard (vendor_id) VALUES ('no-such-vendor'); RETURN NEW; END $$",
    "CREATE TRIGGER vendors_commit_guard AFTER UPDATE OF country ON vendors FOR EACH ROW "
    "WHEN (NEW.country = 'ZZ') EXECUTE FUNCTION commit_guard_row()",
    # Fires at COMMIT (deferred) and fails as a concurrent writer would make a SERIALIZABLE commit fail.
    "CREATE FUNCTION busy_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    "RAISE EXCEPTION 'could not serialize access' USING ERRCODE = 'serialization_failure'; END $$",
    "CREATE CONSTRAINT TRIGGER vendors_busy_at_commit AFTER UPDATE OF country ON vendors "
    "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.country = 'YY') EXECUTE FUNCTION busy_at_commit()",
]


@pytest.fixture
def guarded(db):
    """The test database with the commit-time guards installed; yields True on PostgreSQL."""
    postgres = is_postgres(get_engine())
    with session_scope() as session:
        for statement in POSTGRES_GUARD if postgres else SQLITE_GUARD:
            session.execute(text(statement))
    return postgres


def _country(vendor_id: str) -> str | None:
    with session_scope(write=False) as session:
        return session.execute(text("SELECT country FROM vendors WHERE id = :id"), {"id": vendor_id}).scalar()


def _history_rows(vendor_id: str) -> int:
    with session_scope(write=False) as session:
        query = text("SELECT count(*) FROM fact_history WHERE kind = 'vendors' AND fact_id = :id")
        return session.execute(query, {"id": vendor_id}).scalar_one()


@pytest.fixture
def http(guarded):
    import httpx

    from chipwatch.app import create_app

    with serving(create_app(scheduler=False)) as base_url:
        with httpx.Client(base_url=base_url, headers=ADMIN) as client:
            yield client


def test_a_commit_refused_by_a_deferred_constraint_answers_409_and_saves_nothing(http):
    before_country, before_history = _country("groq"), _history_rows("groq")
    refused = http.patch("/v1/vendors/groq", json={"country": "ZZ", "notes": "edited"})
    assert refused.status_code == 409, refused.text
    assert refused.headers["content-type"] == "application/problem+json"
    problem = refused.json()
    assert problem["status"] == 409 and problem["title"] == "Conflict"
    assert "FOREIGN KEY" in problem["detail"].upper()
    assert problem["detail"].endswith("The change was not saved.")
    assert problem["instance"] == "/v1/vendors/groq"
    # Nothing of the write is left: not the field, not its history, not the guard's row.
    assert _country("groq") == before_country != "ZZ"
    assert _history_rows("groq") == before_history
    assert http.get("/v1/vendors/groq").json()["notes"] != "edited"
    with session_scope(write=False) as session:
        assert session.execute(text("SELECT count(*) FROM commit_guard")).scalar_one() == 0
    # The connection that failed is usable again: the next write commits and is acknowledged.
    accepted = http.patch("/v1/vendors/groq", json={"country": "US"})
    assert accepted.status_code == 200, accepted.text
    assert _country("groq") == "US" and http.get("/v1/vendors/groq").json()["country"] == "US"


def test_a_commit_refused_as_busy_answers_503_with_retry_after(http, guarded):
    if not guarded:
        pytest.skip("SQLite has no deferred triggers; its busy database is refused at BEGIN IMMEDIATE")
    before = _country("groq")
    refused = http.patch("/v1/vendors/groq", json={"country": "YY"})
    assert refused.status_code == 503, refused.text
    assert refused.headers["retry-after"] == "1"
    assert refused.headers["content-type"] == "application/problem+json"
    assert refused.json()["detail"] == (
        "the database is busy (locked by another writer); try again in 1 s. The change was not saved."
    )
    assert _country("groq") == before != "YY"
