"""Cross-process wake-up for outbox consumers on PostgreSQL (``LISTEN``/``NOTIFY``).

In-process consumers are woken by :func:`chipwatch.outbox.emit.add_waker` when a commit wrote events.
Another process (an API replica, when a worker runs the dispatcher) cannot see that commit, so on
PostgreSQL every transaction that writes events also sends ``NOTIFY chipwatch_outbox``; PostgreSQL
delivers it only when that transaction commits, and at most once per transaction. :class:`OutboxListener`
holds one autocommit connection that ``LISTEN``\\s on the channel and calls a wake function for each
notification. On SQLite there is one writer host and nothing to do: the listener is not started and
consumers keep their poll.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlmodel import Session

log = logging.getLogger(__name__)

OUTBOX_CHANNEL = "chipwatch_outbox"
_NOTIFIED_KEY = "chipwatch_outbox_notified"
RECONNECT_MIN_S, RECONNECT_MAX_S = 0.5, 30.0
NOTIFY_WAIT_S = 5.0  # how often the listening loop looks up from the socket to see if it should stop


def notify_on_commit(session: Session) -> None:
    """On PostgreSQL, have this transaction announce on commit that it wrote outbox events (once per
    transaction; a rollback sends nothing). Does nothing on other databases."""
    if session.get_bind().dialect.name != "postgresql":
        return
    transaction = session.get_transaction()
    if transaction is not None and session.info.get(_NOTIFIED_KEY) is transaction:
        return
    session.execute(text(f"NOTIFY {OUTBOX_CHANNEL}"))
    session.info[_NOTIFIED_KEY] = transaction


def libpq_conninfo(database_url: str) -> str | None:
    """The libpq URL of a SQLAlchemy PostgreSQL URL (``postgresql+psycopg://`` -> ``postgresql://``),
    or ``None`` for any other database."""
    url = make_url(database_url)
    if url.get_backend_name() != "postgresql":
        return None
    return url.set(drivername="postgresql").render_as_string(hide_password=False)


class OutboxListener:
    """Calls ``wake`` whenever another process commits outbox events (PostgreSQL only).

    ``start()`` returns at once; the listening runs as a task on the running loop, reconnecting with
    backoff when the database goes away, and calling ``wake`` after each (re)connection because events
    may have committed while nobody listened.
    """

    def __init__(self, conninfo: str, wake: Callable[[], None]) -> None:
        self.conninfo = conninfo
        self.wake = wake
        self.listening = asyncio.Event()  # set while a LISTEN is in place (tests wait on it)
        self._task: asyncio.Task | None = None
        self._stopping = False

    def start(self) -> None:
        """Begin listening in a background task of the running loop."""
        self._stopping = False
        self._task = asyncio.create_task(self._run(), name="outbox.listener")

    async def stop(self) -> None:
        """Stop listening and close the connection."""
        self._stopping = True
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None

    async def _run(self) -> None:
        import psycopg  # only PostgreSQL deployments have it installed

        delay_s = RECONNECT_MIN_S
        while not self._stopping:
            try:
                async with await psycopg.AsyncConnection.connect(self.conninfo, autocommit=True) as conn:
                    await conn.execute(f"LISTEN {OUTBOX_CHANNEL}")
                    self.listening.set()
                    delay_s = RECONNECT_MIN_S
                    self.wake()
                    while not self._stopping:
                        async for _note in conn.notifies(timeout=NOTIFY_WAIT_S):
                            self.wake()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the database restarted or is unreachable: try again later
                log.warning("outbox listener lost its connection (%s); retrying in %.1f s",
                            type(exc).__name__, delay_s)
            finally:
                self.listening.clear()
            if not self._stopping:
                await asyncio.sleep(delay_s)
                delay_s = min(delay_s * 2, RECONNECT_MAX_S)
