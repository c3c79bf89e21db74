"""Every fact of SEED_FACTS.md, read back over the REST API (the same table as tests/test_seed_facts.py)."""

import pytest
from fastapi.testclient import TestClient

from chipwatch.config import get_settings
from chipwatch.db import dispose_engines
from tests.fixtures.database import clone_database, drop_database, use_database
from tests.fixtures.seed_facts import EXPECTED_COUNTS, SEED_FACTS, check_fields

PATHS = {"funding_rounds": "funding-rounds"}


@pytest.fixture(scope="module")
def api(template_db, tmp_path_factory):
    """One read-only client over a copy of the seeded database, shared by the module's cases."""
    data_dir = tmp_path_factory.mktemp("facts-api")
    url = clone_database(template_db, data_dir)
    with pytest.MonkeyPatch.context() as mp:
        use_database(mp, url, data_dir)
        from chipwatch.app import create_app

        with TestClient(create_app(scheduler=False)) as client:
            yield client
        dispose_engines()
        get_settings.cache_clear()
    drop_database(url)


@pytest.mark.parametrize("kind,row_id,expected", SEED_FACTS, ids=[f"{k}:{i}" for k, i, _ in SEED_FACTS])
def test_seed_fact_served(api, kind, row_id, expected):
    r = api.get(f"/v1/{PATHS.get(kind, kind)}/{row_id}")
    assert r.status_code == 200, r.text
    assert check_fields(r.json(), expected) == []


@pytest.mark.parametrize("kind,count", sorted(EXPECTED_COUNTS.items()))
def test_every_seed_row_listed(api, kind, count):
    body = api.get(f"/v1/{PATHS.get(kind, kind)}", params={"limit": 500}).json()
    assert body["next_cursor"] is None
    assert len(body["items"]) >= count
