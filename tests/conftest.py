"""Shared fixtures: every test runs on its own migrated, seeded database (SQLite file or PostgreSQL)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from chipwatch.config import get_settings
from chipwatch.db import dispose_engines
from tests.fixtures.database import ADMIN_TOKEN, build_template, clone_database, drop_database, use_database


@pytest.fixture(scope="session")
def template_db(tmp_path_factory) -> str:
    """URL of a migrated, seeded template database built once per run."""
    return build_template(tmp_path_factory.mktemp("template"))


@pytest.fixture
def db(template_db, tmp_path, monkeypatch):
    """Settings pointing at this test's own copy of the seeded database."""
    url = clone_database(template_db, tmp_path / "data")
    settings = use_database(monkeypatch, url, tmp_path / "data")
    yield settings
    dispose_engines()
    get_settings.cache_clear()
    drop_database(url)


@pytest.fixture
def client(db):
    """A TestClient on the app (scheduler off) over this test's database."""
    from chipwatch.app import create_app

    with TestClient(create_app(scheduler=False)) as c:
        yield c


@pytest.fixture
def admin_headers() -> dict[str, str]:
    return {"Authorization": f"Bearer {ADMIN_TOKEN}"}
