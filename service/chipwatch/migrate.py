"""Run Alembic migrations from code (``chipwatch init`` and the test fixtures)."""

from __future__ import annotations

from functools import cache

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, text

from chipwatch.config import Settings, get_settings
from chipwatch.db import get_engine
from chipwatch.paths import MIGRATIONS_DIR, PROJECT_ROOT


def alembic_config(settings: Settings | None = None) -> Config:
    """An Alembic Config pointing at ``migrations/`` and the configured database."""
    settings = settings or get_settings()
    cfg = Config(str(PROJECT_ROOT / "alembic.ini"))
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("sqlalchemy.url", settings.resolved_database_url.replace("%", "%%"))
    return cfg


def upgrade_to_head(settings: Settings | None = None) -> None:
    """Upgrade the configured database to the newest migration (idempotent)."""
    settings = settings or get_settings()
    cfg = alembic_config(settings)
    with get_engine(settings).begin() as conn:
        cfg.attributes["connection"] = conn
        cfg.attributes["settings"] = settings  # data migrations (sealing secrets) need the keys in force
        command.upgrade(cfg, "head")


@cache
def migration_heads() -> frozenset[str]:
    """The head revisions of ``migrations/`` (one, unless two branches were merged badly)."""
    return frozenset(ScriptDirectory(str(MIGRATIONS_DIR)).get_heads())


def schema_lag(conn: Connection) -> str | None:
    """None when the database on ``conn`` is migrated to head, else why not (one line).

    Raises the driver's error when the database does not answer or has no ``alembic_version`` table.
    """
    stored = set(conn.execute(text("SELECT version_num FROM alembic_version")).scalars())
    wanted = migration_heads()
    if stored == wanted:
        return None
    have = ", ".join(sorted(stored)) or "none"
    return f"schema at revision {have}, this version needs {', '.join(sorted(wanted))}: run chipwatch init"
