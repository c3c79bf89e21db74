"""Every fact and figure of SEED_FACTS.md is in the database after a seed load, with its provenance.

The expected rows live in ``tests/fixtures/seed_facts.py`` as plain data so the API tests can check the
same table over HTTP.
"""

from __future__ import annotations

from typing import get_args

import pytest
from sqlalchemy import select

from chipwatch.config import Settings
from chipwatch.db import get_engine, session_scope
from chipwatch.knowledge.models import FundingRound, Result
from chipwatch.migrate import upgrade_to_head
from chipwatch.seeds import KINDS, load_seeds
from chipwatch.sources.models import DATASET_SOURCE_KINDS, Source
from chipwatch.vocab.facts import FundingStatus
from tests.fixtures.seed_facts import EXPECTED_COUNTS, SEED_FACTS, check_fields

TABLES = {kind.name: kind.model for kind in KINDS}
FACT_KINDS = (
    "vendors",
    "chips",
    "models",
    "benchmarks",
    "results",
    "funding_rounds",
    "deployments",
    "claims",
)


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> Settings:
    """A freshly migrated SQLite file holding the real seed_data."""
    data_dir = tmp_path_factory.mktemp("seed-facts")
    settings = Settings(data_dir=data_dir, database_url=f"sqlite:///{(data_dir / 'chipwatch.db').as_posix()}")
    upgrade_to_head(settings)
    with session_scope(settings) as session:
        load_seeds(session=session)
    yield settings
    get_engine(settings).dispose()


def _rows(settings: Settings, kind: str) -> dict[str, dict]:
    with session_scope(settings, write=False) as session:
        rows = {row.id: row.model_dump() for row in session.scalars(select(TABLES[kind]))}
        if kind == "sources":
            return rows
        # Rows credited to a dataset source (the vendors and benchmark dataset imports name) are not
        # founding facts.
        datasets = set(session.scalars(select(Source.id).where(Source.kind.in_(DATASET_SOURCE_KINDS))))
        return {row_id: row for row_id, row in rows.items() if row.get("source_id") not in datasets}


@pytest.mark.parametrize(
    ("kind", "row_id", "expected"), SEED_FACTS, ids=[f"{kind}:{row_id}" for kind, row_id, _ in SEED_FACTS]
)
def test_fact_is_in_database(seeded, kind, row_id, expected):
    with session_scope(seeded, write=False) as session:
        row = session.get(TABLES[kind], row_id)
        assert row is not None, f"{kind} {row_id!r} was not seeded"
        problems = check_fields(row.model_dump(), expected)
    assert not problems, f"{kind} {row_id}:\n" + "\n".join(problems)


def test_table_covers_every_seeded_row(seeded):
    """The expected table and seed_data name the same rows, so a fact cannot be added to one only."""
    listed: dict[str, set[str]] = {}
    for kind, row_id, _ in SEED_FACTS:
        listed.setdefault(kind, set()).add(row_id)
    for kind, count in EXPECTED_COUNTS.items():
        rows = _rows(seeded, kind)
        if kind == "sources":
            # The founding facts come from article outlets; the watched news feeds are not facts.
            rows = {k: v for k, v in rows.items() if v["kind"] == "article"}
        assert set(rows) == listed[kind], kind
        assert len(listed[kind]) == count, kind


def test_results_r1_to_r17_are_all_present(seeded):
    numbers = sorted(int(row_id[1:3]) for row_id in _rows(seeded, "results"))
    assert numbers == list(range(1, 18))


@pytest.mark.parametrize("kind", FACT_KINDS)
def test_every_row_carries_provenance(seeded, kind):
    article_sources = set(_rows(seeded, "sources"))
    for row_id, row in _rows(seeded, kind).items():
        assert row["source_id"] in article_sources, (kind, row_id)
        assert row["published_on"] is not None, (kind, row_id)
        assert row["as_of"] is not None, (kind, row_id)
        assert row["verification"] in ("vendor_reported", "witnessed", "independent"), (kind, row_id)


def test_every_seeded_funding_round_has_a_status(seeded):
    """SEED_FACTS.md gives each round as done (raised, reached, bought): none may be left without a
    status, and every status is one the vocabulary allows."""
    with session_scope(seeded, write=False) as session:
        statuses = {row.id: row.status for row in session.scalars(select(FundingRound))}
    assert len(statuses) >= 3
    assert {row_id: s for row_id, s in statuses.items() if s not in get_args(FundingStatus)} == {}
    assert statuses["xiwang-2026-08-round"] == statuses["groq-acquisition-nvidia"] == "closed"


def test_no_jalapeno_figure_is_independent_yet(seeded):
    """Independent reproduction of a Jalapeño figure is a watch signal, not a seed fact."""
    with session_scope(seeded, write=False) as session:
        rows = [r for r in session.scalars(select(Result)) if "jalapeno" in r.chip_ids]
    assert len(rows) == 10
    assert {r.verification for r in rows} == {"witnessed"}
    assert all(r.reproduced_by is None for r in rows)
