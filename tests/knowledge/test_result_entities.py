"""results?chip=X through the result_entities index: the index follows every write of a result (seed,
API create and change, dataset import), the migration fills it from stored results, and the listing's
plan walks it in id order on SQLite and PostgreSQL."""

from __future__ import annotations

import re

import pytest
from alembic import command
from sqlalchemy import insert, select

from chipwatch.db import get_engine, session_scope
from chipwatch.knowledge.models import RESULT_LINK_ROLES, Result, ResultEntity, link_result_rows
from chipwatch.knowledge.service import list_rows
from chipwatch.migrate import alembic_config
from tests.fixtures.corpus import requires_corpus
from tests.fixtures.imports import MLPERF_V51, import_corpus
from tests.fixtures.plans import analyze, plan_of


def _stored_links() -> set[tuple[str, str, str]]:
    with session_scope(write=False) as session:
        return {(r.role, r.entity_id, r.result_id) for r in session.scalars(select(ResultEntity))}


def _links_of_results() -> set[tuple[str, str, str]]:
    """What the index must hold: one row per id in each result's lists."""
    with session_scope(write=False) as session:
        return {
            (role, entity_id, result.id)
            for result in session.scalars(select(Result))
            for column, role in RESULT_LINK_ROLES.items()
            for entity_id in getattr(result, column) or []
        }


def test_the_seed_load_indexes_every_result(db):
    links = _stored_links()
    assert {role for role, _e, _r in links} == {"chip", "baseline", "model"}
    assert any(link[:2] == ("chip", "jalapeno") for link in links)
    assert links == _links_of_results()


def test_api_create_and_change_keep_the_index(client, admin_headers):
    body = {
        "id": "probe-result", "metric": "throughput_per_kw", "value": 2.5, "benchmark_id": "inferencex",
        "chip_ids": ["jalapeno"], "baseline_ids": ["gb300"], "model_ids": [],
    }
    created = client.post("/v1/results", json=body, headers=admin_headers)
    assert created.status_code == 201, created.text
    assert {("chip", "jalapeno", "probe-result"), ("baseline", "gb300", "probe-result")} <= _stored_links()
    changed = client.patch(
        "/v1/results/probe-result", json={"chip_ids": ["vera-rubin"], "baseline_ids": []},
        headers=admin_headers,
    )
    assert changed.status_code == 200, changed.text
    mine = {link for link in _stored_links() if link[2] == "probe-result"}
    assert mine == {("chip", "vera-rubin", "probe-result")}
    assert _stored_links() == _links_of_results()
    listed = client.get("/v1/results", params={"chip": "vera-rubin", "limit": 500}).json()["items"]
    assert "probe-result" in [r["id"] for r in listed]
    listed = client.get("/v1/results", params={"chip": "jalapeno", "limit": 500}).json()["items"]
    assert "probe-result" not in [r["id"] for r in listed]


@requires_corpus
def test_a_dataset_import_indexes_the_results_it_writes(db):
    before = _stored_links()
    assert import_corpus("mlperf-inference-summary", MLPERF_V51).report.status == "applied"
    after = _stored_links()
    assert len(after) > len(before)
    assert after == _links_of_results()


def test_the_migration_fills_the_index_from_stored_results(db):
    cfg = alembic_config(db)
    expected = _links_of_results()
    command.downgrade(cfg, "9d3b6e21f0a4")
    command.upgrade(cfg, "head")
    assert _stored_links() == expected


@pytest.fixture
def many_results(db):
    """20,000 more results (as many as the scale goal names): gb300 in every tenth, gb200 in the rest;
    written as an import writes new facts, Core rows and then their index."""
    defaults = {column.name: column.default.arg for column in Result.__table__.columns
                if column.default is not None and not callable(column.default.arg)}
    rows = [
        {**defaults, "id": f"r{n:05d}", "metric": "throughput", "value": float(n), "attributes": {},
         "chip_ids": ["gb300" if n % 10 == 0 else "gb200"], "baseline_ids": ["gb200"], "model_ids": []}
        for n in range(20_000)
    ]
    with session_scope(db) as session:
        session.execute(insert(Result.__table__), rows)
        link_result_rows(session, rows)
    analyze(db)
    return db


def _page(settings, cursor=None, **values):
    with session_scope(settings, write=False) as session:
        params = {"chip": None, "baseline": None, "model": None, **values}
        return list_rows(session=session, kind="results", values=params, cursor=cursor, limit=50)


@pytest.mark.parametrize("chip", ["gb300", "gb200"])
def test_a_chip_filter_walks_the_index_at_any_depth(many_results, chip):
    dialect = get_engine(many_results).dialect.name
    cursor = _page(many_results, chip=chip)["next_cursor"]
    for after in (None, cursor):
        plan = plan_of(
            many_results, lambda after=after: _page(many_results, cursor=after, chip=chip),
            lambda sql: sql.lstrip().upper().startswith("SELECT RESULTS.") and "ORDER BY" in sql.upper(),
        )
        if dialect == "sqlite":
            assert "TEMP B-TREE" not in plan, plan
            assert not re.search(r"SCAN results\b", plan), plan
            index = "sqlite_autoindex_result_entities_1"
            shape = rf"SEARCH \w+ USING (COVERING )?INDEX {index} \(role=\? AND entity_id=\?"
            assert re.search(shape, plan), plan
            if after:
                assert "result_id>?" in plan, plan
        else:
            # PostgreSQL may merge the link rows with the results' key order, sorting at most the link
            # rows of that chip (a few bytes each); it never reads the JSON nor sorts result rows.
            assert "chip_ids" not in plan and "Seq Scan on results" not in plan, plan
            assert re.search(r"Index (Only )?Scan (using \w+ )?on result_entities", plan), plan
            assert all("result_entities" in key for key in re.findall(r"Sort Key: (.*)", plan)), plan


def test_chip_pages_list_every_matching_result_once_in_id_order(many_results):
    got, cursor = [], None
    while True:
        page = _page(many_results, cursor=cursor, chip="gb300", baseline="gb200")
        got += [r["id"] for r in page["items"]]
        if (cursor := page["next_cursor"]) is None:
            break
    with session_scope(many_results, write=False) as session:
        expected = sorted(
            r.id for r in session.scalars(select(Result).where(Result.retracted_at.is_(None)))
            if "gb300" in r.chip_ids and "gb200" in r.baseline_ids
        )
    assert got == expected
    assert len(expected) >= 2000
