"""What a command checks before it uses the database, so a wrong setting is one clear line, not a traceback.

Every command but ``init`` needs a database that exists and is migrated to head
(:func:`require_initialised`); it creates nothing to find out. Only ``init`` creates a SQLite database,
and only in a directory that exists or in the data directory (:func:`prepare_new_database`).
"""

from __future__ import annotations

import re
from pathlib import Path

from sqlalchemy import inspect
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError

from chipwatch.config import Settings
from chipwatch.db import get_engine
from chipwatch.kit.files import private_dir
from chipwatch.migrate import schema_lag

SUPPORTED_BACKENDS = ("sqlite", "postgresql")
INIT_HINT = "run `chipwatch init` first"


class NotReady(RuntimeError):
    """The database cannot be used as configured; ``str(exc)`` is one line saying why and what to do."""


def _masked(raw: str) -> str:
    """A URL as the user wrote it, with any password replaced by ``***``."""
    return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", raw)


def database_url(settings: Settings) -> URL:
    """The configured database URL, parsed; raises :class:`NotReady` when it is not a URL chipwatch
    can use (unparseable, another database than SQLite or PostgreSQL, or an in-memory SQLite)."""
    raw = settings.resolved_database_url
    try:
        url = make_url(raw)
    except (ArgumentError, ValueError) as exc:
        raise NotReady(
            f"CHIPWATCH_DATABASE_URL is not a database URL: {_masked(settings.database_url or raw)!r}; "
            "expected e.g. postgresql://user@host/chipwatch or sqlite:////var/lib/chipwatch/chipwatch.db"
        ) from exc
    backend = url.get_backend_name()
    if backend not in SUPPORTED_BACKENDS:
        raise NotReady(
            f"CHIPWATCH_DATABASE_URL names a {backend} database; chipwatch runs on sqlite or postgresql"
        )
    if backend == "sqlite" and (not url.database or url.database == ":memory:"):
        raise NotReady("CHIPWATCH_DATABASE_URL names an in-memory SQLite database; give a file path")
    return url


def database_label(settings: Settings) -> str:
    """The database as messages name it: a SQLite file's path, else the URL without its password."""
    url = database_url(settings)
    if url.get_backend_name() == "sqlite":
        return str(Path(url.database))
    return url.render_as_string(hide_password=True)


def require_initialised(settings: Settings) -> None:
    """Raise :class:`NotReady` unless the database exists, answers and is migrated to head.

    A SQLite file that does not exist is reported without being created; a PostgreSQL database is
    only read (its ``alembic_version`` row).
    """
    url = database_url(settings)
    where = database_label(settings)
    if url.get_backend_name() == "sqlite" and not Path(url.database).is_file():
        raise NotReady(f"the database {where} is not initialised: {INIT_HINT}")
    try:
        engine = get_engine(settings)
    except (RuntimeError, ArgumentError, ModuleNotFoundError) as exc:
        raise NotReady(f"CHIPWATCH_DATABASE_URL cannot be used: {exc}") from exc
    try:
        with engine.connect() as conn:
            if not inspect(conn).has_table("alembic_version"):
                raise NotReady(f"the database {where} is not initialised: {INIT_HINT}")
            lag = schema_lag(conn)
    except DBAPIError as exc:
        lines = str(exc.orig if exc.orig is not None else exc).strip().splitlines()
        reason = lines[0] if lines else type(exc).__name__
        raise NotReady(f"the database {where} does not answer: {reason}") from exc
    if lag is not None:
        raise NotReady(f"the database {where} is not up to date: {lag}")


def prepare_new_database(settings: Settings) -> None:
    """Make sure ``init`` may create the configured database; raises :class:`NotReady` when not.

    A SQLite file is created only in a directory that exists, or in the data directory (created mode
    0700 with its missing parents): a mistyped path is refused rather than created.
    """
    url = database_url(settings)
    if url.get_backend_name() != "sqlite":
        return
    parent = Path(url.database).parent
    if parent.is_dir():
        return
    if parent.exists():
        raise NotReady(f"cannot create the database {url.database}: {parent} is not a directory")
    if parent.resolve() != Path(settings.data_dir).resolve():
        raise NotReady(
            f"cannot create the database {url.database}: directory {parent} does not exist "
            f"(create it first; only the data directory {settings.data_dir} is created for you)"
        )
    private_dir(parent)
