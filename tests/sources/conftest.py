"""Fixtures of the sources tests; the helpers they use live in ``tests.fixtures.sources``."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator

import pytest

from chipwatch.sources.hooks import ItemsStoredListener, on_items_stored


@pytest.fixture
def httpserver(httpserver_ipv4):
    """pytest-httpserver bound to 127.0.0.1 (the plugin's default host is "localhost")."""
    return httpserver_ipv4


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A server that accepts TCP connections (via the listen backlog) but never answers."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/feed.xml"
    finally:
        sock.close()


@pytest.fixture
def closed_port_url() -> str:
    """A URL on a local port nothing listens on."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}/feed.xml"


@pytest.fixture
def listen() -> Iterator[Callable[[ItemsStoredListener], None]]:
    """Register items-stored listeners (what signal evaluation is in the service) for one test only."""
    removers: list[Callable[[], None]] = []
    yield lambda listener: removers.append(on_items_stored(listener))
    for remove in removers:
        remove()
