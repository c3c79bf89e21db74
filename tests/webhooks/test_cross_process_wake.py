"""On PostgreSQL an event committed by another process (an API replica) wakes a worker's dispatcher at
once through LISTEN/NOTIFY, instead of waiting for its poll; a rolled-back event sends no notification.
SQLite has no cross-process notification: there the test is skipped, saying so."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest

from chipwatch.config import get_settings
from chipwatch.db import session_scope
from chipwatch.outbox.emit import emit
from chipwatch.webhooks.dispatcher import Dispatcher
from tests.fixtures.webhooks import HEALTH, subscribe

PROJECT_ROOT = Path(__file__).resolve().parents[2]
EMIT_IN_ANOTHER_PROCESS = "from tests.fixtures.webhooks import health_event; health_event()"
POLL_S = 120.0  # far longer than the test waits: only a notification can explain a prompt delivery


@pytest.fixture
def on_postgres(db):
    if not get_settings().resolved_database_url.startswith("postgresql"):
        pytest.skip("cross-process wake-up uses PostgreSQL LISTEN/NOTIFY; this run is on SQLite")


def test_an_event_committed_by_another_process_is_delivered_without_waiting_for_the_poll(
    on_postgres, receiver
):
    subscribe(receiver.url("/hook"))

    async def scenario() -> tuple[float, int]:
        dispatcher = Dispatcher(get_settings(), poll_interval_s=POLL_S)
        await dispatcher.start()
        try:
            await asyncio.wait_for(dispatcher._listener.listening.wait(), timeout=10)
            await asyncio.sleep(0.5)  # the first round has run and found nothing: now it waits
            # A rolled-back event in this process: nothing to notify, nothing delivered.
            with pytest.raises(RuntimeError), session_scope() as session:
                emit(session, "source.health_changed", HEALTH, source_id="example")
                raise RuntimeError("roll back")
            started = time.monotonic()
            other = await asyncio.create_subprocess_exec(
                sys.executable, "-c", EMIT_IN_ANOTHER_PROCESS, cwd=PROJECT_ROOT, env=dict(os.environ)
            )
            assert await other.wait() == 0
            await asyncio.to_thread(receiver.wait_for, 1, "/hook", 15.0)
            elapsed_s = time.monotonic() - started
            await asyncio.sleep(0.5)  # a second (rolled-back) event would have arrived by now
            return elapsed_s, len(receiver.at("/hook"))
        finally:
            await dispatcher.stop()

    elapsed_s, delivered = asyncio.run(scenario())
    assert delivered == 1
    # The subprocess itself takes a few seconds to import the service; the poll would take 120 s.
    assert elapsed_s < 30, elapsed_s
