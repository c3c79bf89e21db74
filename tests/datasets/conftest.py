"""Fixtures for the dataset parser tests: bytes of the shared corpus files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.fixtures.corpus import corpus_dir
from tests.fixtures.webhooks import Receiver


@pytest.fixture(scope="session")
def corpus_file() -> Callable[[str], Path]:
    """Path of a corpus file relative to the corpus root (tests using it carry ``requires_corpus``)."""
    return lambda relative: corpus_dir() / relative


@pytest.fixture(scope="session")
def corpus_bytes(corpus_file: Callable[[str], Path]) -> Callable[[str], bytes]:
    """Bytes of a corpus file relative to the corpus root."""
    return lambda relative: corpus_file(relative).read_bytes()


@pytest.fixture
def receiver():
    """A real HTTP webhook receiver on 127.0.0.1 (see :class:`~tests.fixtures.webhooks.Receiver`)."""
    r = Receiver()
    yield r
    r.close()


@pytest.fixture
def httpserver(httpserver_ipv4):
    """pytest-httpserver bound to 127.0.0.1 (the plugin's default host is "localhost")."""
    return httpserver_ipv4
