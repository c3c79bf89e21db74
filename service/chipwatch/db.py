"""Database engine and session scope.

SQLite (the embedded default) runs in WAL mode with a busy timeout so the API, the scheduler and a CLI
command can share one file; PostgreSQL is reached through psycopg 3 when ``CHIPWATCH_DATABASE_URL`` says so.
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson
from sqlalchemy import event
from sqlalchemy.engine import Engine, make_url
from sqlmodel import Session, create_engine

from chipwatch.config import Settings, get_settings
from chipwatch.kit.files import restrict_file

SQLITE_BUSY_TIMEOUT_MS = 15_000

_engines: dict[str, Engine] = {}
_lock = threading.Lock()


class ChangeClock:
    """A process-local counter bumped after every commit that wrote rows.

    Read models (``/v1/race``, ``/v1/signals``) cache their serialised bytes keyed by this counter, so a
    cached answer is dropped the moment a write in this process commits.
    """

    def __init__(self) -> None:
        self.value = 0
        self._lock = threading.Lock()

    def bump(self) -> int:
        with self._lock:
            self.value += 1
            return self.value


change_clock = ChangeClock()


class WriteGate:
    """First come, first served turns at SQLite's single write lock, for the writers of this process.

    SQLite has one writer at a time and lets the others wait in its busy handler, which sleeps and
    retries (up to 100 ms between tries) instead of queueing: a writer that commits and begins again at
    once, as a long job writing in short transactions does, wins the lock again and again while an API
    write waits out its sleeps. Writers of this process take a turn here before ``BEGIN IMMEDIATE`` and
    give it up after their ``COMMIT`` or ``ROLLBACK``, so each waiting writer gets the lock next in the
    order it asked. Writers in other processes (a CLI command, a separate worker) still meet SQLite's
    busy handler.

    The turn belongs to the transaction, not to a thread: it may be given up by another thread than the
    one that took it (a request's session is opened and closed in different worker threads).
    """

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._busy = False
        self._waiting: deque[threading.Event] = deque()
        self.holder: object | None = None
        """The transaction's connection whose turn it is (set by the engine's begin hook)."""

    def acquire(self, timeout_s: float) -> bool:
        """Wait for this writer's turn; False when ``timeout_s`` passed first (the turn is not taken)."""
        with self._mutex:
            if not self._busy and not self._waiting:
                self._busy = True
                return True
            turn = threading.Event()
            self._waiting.append(turn)
        if turn.wait(timeout_s):
            return True
        with self._mutex:
            if turn.is_set():  # handed over just as the wait ran out
                return True
            self._waiting.remove(turn)
            return False

    def release(self) -> None:
        """End this writer's turn and hand it to the longest-waiting writer, if any."""
        with self._mutex:
            if self._waiting:
                self._waiting.popleft().set()  # stays busy: the turn passes straight on
            else:
                self._busy = False


_ORJSON_OPTIONS = (
    orjson.OPT_NON_STR_KEYS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)


def _refuse(value: object) -> object:
    raise TypeError(f"{type(value).__name__} is not JSON")


def json_text(value: object) -> str:
    """``value`` as JSON text for a JSON column: orjson's compact encoding (several times faster than
    the standard library's, which the engine would use otherwise).

    What orjson would encode differently from ``json.dumps`` (dates and times, dataclasses, subclasses
    of str, int, dict or list, integers beyond 64 bits) goes to ``json.dumps``, so a value the standard
    encoder refuses (a datetime, a Decimal) is still refused with its TypeError rather than stored in
    some other form.
    """
    try:
        return orjson.dumps(value, default=_refuse, option=_ORJSON_OPTIONS).decode()
    except TypeError:
        return json.dumps(value)


# An integer of 19 digits or more may lie beyond 64 bits, which orjson reads as a float (json keeps it).
_LONG_DIGITS = re.compile(r"\d{19}")


def json_value(text: str | bytes | object) -> object:
    """A JSON column's text as Python values: orjson's reader (several times faster than the standard
    library's, which the engine would use otherwise; on SQLite every JSON value of every row read passes
    through here). Text orjson reads otherwise than ``json.loads`` goes to ``json.loads``: a run of 19 or
    more digits (an integer beyond 64 bits would become a float), NaN and infinity, lone surrogates."""
    if isinstance(text, bytes | bytearray):
        probe = text.decode("utf-8", "replace")
    elif isinstance(text, str):
        probe = text
    else:  # SQLite hands a number stored in a JSON column as one: json.loads' TypeError tells the engine so
        return json.loads(text)
    if _LONG_DIGITS.search(probe):
        return json.loads(text)
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def _on_sqlite_connect(dbapi_conn, _record) -> None:  # pragma: no cover - exercised by every test
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.close()


def make_engine(url: str) -> Engine:
    """Create an engine for ``url``; SQLite files get WAL, a busy timeout and foreign keys.

    Raises ``sqlalchemy.exc.ArgumentError`` for a URL SQLAlchemy cannot parse, and ``RuntimeError``
    for a PostgreSQL URL when the driver (the ``chipwatch[postgres]`` extra) is not installed.
    """
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        # No directory is made here: only ``chipwatch init`` creates a database, and only where
        # chipwatch.preflight allows it; a mistyped path must fail, not grow a new tree.
        db_file = Path(parsed.database) if parsed.database and parsed.database != ":memory:" else None
        engine = create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000},
            pool_size=16,
            max_overflow=16,
            json_serializer=json_text,
            json_deserializer=json_value,
        )
        if db_file is not None:
            # SQLite creates the file with the umask's mode (often 0644), and its -wal and -shm files copy
            # that mode: the database holds every fact and webhook, so it is the owner's alone. Run before
            # the pragmas, so the WAL files are born 0600.
            files = (db_file, *(db_file.with_name(db_file.name + end) for end in ("-wal", "-shm")))
            event.listen(engine, "connect", lambda _conn, _record: [restrict_file(f) for f in files])
        event.listen(engine, "connect", _on_sqlite_connect)

        # SQLite's own deferred BEGIN upgrades to a write lock mid-transaction and can fail with
        # "database is locked" without waiting; BEGIN IMMEDIATE takes the lock up front and honours the
        # busy timeout.  Reads stay concurrent under WAL.
        gate = engine.write_gate = WriteGate()  # type: ignore[attr-defined]

        @event.listens_for(engine, "begin")
        def _begin_immediate(conn) -> None:
            # One-shot: ``info`` belongs to the pooled DBAPI connection, and a later plain
            # ``engine.connect()`` (a readiness probe) must not inherit a write lock.
            if not conn.info.pop("write", False):
                conn.exec_driver_sql("BEGIN")
                return
            # Past the busy timeout without a turn, BEGIN IMMEDIATE meets SQLite's own busy handler,
            # which answers "database is locked" in the end: the writer is refused, never left waiting.
            if gate.acquire(SQLITE_BUSY_TIMEOUT_MS / 1000):
                gate.holder = conn
            try:
                conn.exec_driver_sql("BEGIN IMMEDIATE")
            except BaseException:
                _end_turn(engine, conn)
                raise

        # pysqlite's own transaction handling must be off for the explicit BEGIN above to apply.
        @event.listens_for(engine, "connect")
        def _no_implicit_begin(dbapi_conn, _record) -> None:
            dbapi_conn.isolation_level = None

    else:
        try:
            engine = create_engine(
                url, pool_pre_ping=True, pool_size=10, max_overflow=20, json_serializer=json_text,
                json_deserializer=json_value,
            )
        except ModuleNotFoundError as exc:
            raise RuntimeError(
                f"no driver for {parsed.get_backend_name()} ({exc.name} is not installed); "
                "install chipwatch with the postgres extra: pip install 'chipwatch[postgres]'"
            ) from exc
    return engine


def _end_turn(engine: Engine, conn) -> None:
    """Give up the write turn ``conn``'s transaction took, if it took one (see :class:`WriteGate`)."""
    gate = getattr(engine, "write_gate", None)
    # The holder is the Connection object itself, not a mark in its ``info``, which belongs to the
    # pooled DBAPI connection and is emptied if that connection is invalidated mid-transaction.
    if gate is not None and gate.holder is conn:
        gate.holder = None
        gate.release()


def get_engine(settings: Settings | None = None) -> Engine:
    """The shared engine for the configured database URL (one per URL per process)."""
    settings = settings or get_settings()
    url = settings.resolved_database_url
    with _lock:
        engine = _engines.get(url)
        if engine is None:
            engine = _engines[url] = make_engine(url)
        return engine


def dispose_engines() -> None:
    """Close every pooled connection (tests and shutdown)."""
    with _lock:
        for engine in _engines.values():
            engine.dispose()
        _engines.clear()


def is_postgres(engine: Engine) -> bool:
    """True when ``engine`` talks to PostgreSQL (row claims use ``FOR UPDATE SKIP LOCKED`` there)."""
    return engine.dialect.name == "postgresql"


@contextmanager
def session_scope(settings: Settings | None = None, *, write: bool = True) -> Iterator[Session]:
    """A session that commits on success and rolls back on error: the edge's transaction.

    ``write=True`` takes SQLite's write lock at BEGIN so concurrent writers queue on the busy timeout
    instead of failing on lock upgrade, and bumps :data:`change_clock` after the commit so cached read
    models are dropped.  Services called inside never commit.
    """
    engine = get_engine(settings)
    with engine.connect() as conn:
        conn.info["write"] = write
        try:
            with Session(bind=conn, expire_on_commit=False) as session:
                try:
                    yield session
                    session.commit()
                except BaseException:
                    session.rollback()
                    raise
        finally:
            _end_turn(engine, conn)
        if write:
            change_clock.bump()
