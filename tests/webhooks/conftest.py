"""Fixtures for the webhooks tests: a real HTTP receiver on 127.0.0.1 and helpers to subscribe and emit."""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from chipwatch.config import get_settings
from chipwatch.db import session_scope
from chipwatch.events import emit
from chipwatch.webhooks import service
from chipwatch.webhooks.delivery import run_once
from chipwatch.webhooks.schemas import WebhookCreate


@dataclass
class Received:
    """One request the receiver read completely."""

    path: str
    headers: dict[str, str]
    body: bytes
    at: float  # time.monotonic() when the body had been read


@dataclass
class Reply:
    """What the receiver answers: status, headers, body; ``hang_s`` waits first (released at teardown)."""

    status: int = 204
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    hang_s: float = 0.0


class Receiver:
    """A threaded HTTP server on 127.0.0.1 that records every POST and answers from a per-path script.

    ``script(path, [Reply, ...])``: the n-th request to ``path`` gets the n-th reply; the last one
    repeats.  Unscripted paths answer 204.
    """

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self._scripts: dict[str, list[Reply]] = {}
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()
        self.release = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                reply = receiver._record(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                if reply.hang_s:
                    receiver.release.wait(reply.hang_s)
                try:
                    self.send_response(reply.status)
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.send_header("content-length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                except OSError:  # the sender gave up (timeout) or died: nothing to answer
                    pass

            do_GET = do_POST  # noqa: N815 - a followed redirect would show up as a GET

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def script(self, path: str, replies: list[Reply]) -> None:
        with self._lock:
            self._scripts[path] = list(replies)

    def _record(self, path: str, headers: dict[str, str], body: bytes) -> Reply:
        with self._lock:
            self.requests.append(Received(path, headers, body, time.monotonic()))
            n = self._counts.get(path, 0)
            self._counts[path] = n + 1
            replies = self._scripts.get(path) or [Reply()]
            return replies[min(n, len(replies) - 1)]

    def at(self, path: str) -> list[Received]:
        with self._lock:
            return [r for r in self.requests if r.path == path]

    def wait_for(self, count: int, path: str | None = None, timeout_s: float = 10.0) -> list[Received]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            got = self.at(path) if path else list(self.requests)
            if len(got) >= count:
                return got
            time.sleep(0.02)
        raise AssertionError(f"receiver saw {len(got)} of {count} requests to {path or 'any path'}")

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


def set_env(monkeypatch, **values: str):
    """Set ``CHIPWATCH_<NAME>`` variables and return fresh settings."""
    for name, value in values.items():
        monkeypatch.setenv(f"CHIPWATCH_{name.upper()}", str(value))
    get_settings.cache_clear()
    return get_settings()


def subscribe(url: str, *, allow_private: bool = True, **fields: Any):
    """Create a webhook directly through the service; returns the committed row."""
    with session_scope() as session:
        return service.create_webhook(
            session=session, webhook_in=WebhookCreate(url=url, **fields), allow_private=allow_private
        )


def emit_event(
    type_: str, data: dict[str, Any], *, signal_id: str | None = None, source_id: str | None = None
):
    """Commit one outbox event; returns it."""
    with session_scope() as session:
        return emit(session, type_, data, signal_id=signal_id, source_id=source_id)


def deliver(**kwargs: Any):
    """Run the dispatcher until nothing is due now; returns its stats."""
    return asyncio.run(run_once(get_settings(), **kwargs))


def deliveries(webhook_id: str) -> list[dict[str, Any]]:
    """Every delivery of the webhook, newest first, with attempt logs."""
    with session_scope(write=False) as session:
        items, _ = service.list_deliveries(
            session=session, webhook_id=webhook_id, status=None, limit=500, before_id=None
        )
    return items


def webhook_row(webhook_id: str):
    with session_scope(write=False) as session:
        return service.get_webhook(session=session, webhook_id=webhook_id)


HEALTH = {"source_id": "example", "name": "Example", "healthy": False, "last_error": "HTTP 500",
          "consecutive_failures": 3, "last_checked_at": "2026-11-29T10:00:00Z"}


def health_event(**overrides: Any):
    """Commit a ``source.health_changed`` event (the simplest event any default subscription receives)."""
    return emit_event("source.health_changed", {**HEALTH, **overrides}, source_id="example")


