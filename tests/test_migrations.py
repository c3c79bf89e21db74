"""Alembic is the only way tables are made: the models and the migrations must not drift apart."""

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

import chipwatch.models as models
from chipwatch.db import get_engine


def test_models_and_migrations_agree(db):
    # include_name leaves out the search index objects that SQLAlchemy metadata cannot describe
    opts = {"compare_type": True, "include_name": models.include_name}
    with get_engine().connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn, opts=opts), models.metadata)
    assert diff == [], f"models and migrations differ; run `make revision MSG=...`: {diff}"


def test_every_table_is_made_by_migrations(db):
    tables = set(inspect(get_engine()).get_table_names())
    assert set(models.metadata.tables) <= tables
    assert "alembic_version" in tables
