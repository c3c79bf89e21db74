"""Fixtures for the dataset parser tests: bytes of the shared corpus files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.fixtures.corpus import corpus_dir


@pytest.fixture(scope="session")
def corpus_file() -> Callable[[str], Path]:
    """Path of a corpus file relative to the corpus root (tests using it carry ``requires_corpus``)."""
    return lambda relative: corpus_dir() / relative


@pytest.fixture(scope="session")
def corpus_bytes(corpus_file: Callable[[str], Path]) -> Callable[[str], bytes]:
    """Bytes of a corpus file relative to the corpus root."""
    return lambda relative: corpus_file(relative).read_bytes()
