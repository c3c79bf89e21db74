"""Alembic environment: the only way chipwatch's tables are made (``chipwatch init`` upgrades to head)."""

from __future__ import annotations

from alembic import context
from sqlmodel import SQLModel

import chipwatch.models  # registers every domain's tables
from chipwatch.db import get_engine

config = context.config
target_metadata = SQLModel.metadata


def run_migrations_offline() -> None:
    context.configure(
        url=config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=True,
        include_name=chipwatch.models.include_name,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    with get_engine().connect() as conn:
        _run(conn)
        conn.commit()


def _run(connection) -> None:
    # batch mode lets later migrations alter SQLite tables (which cannot ALTER COLUMN in place)
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        include_name=chipwatch.models.include_name,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
