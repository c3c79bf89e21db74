"""Fixtures of the webhooks tests; the helpers they use live in ``tests.fixtures.webhooks``."""

from __future__ import annotations

import pytest

from tests.fixtures.webhooks import Receiver


@pytest.fixture
def receiver():
    """A real HTTP receiver on 127.0.0.1 (see :class:`~tests.fixtures.webhooks.Receiver`)."""
    r = Receiver()
    yield r
    r.close()
