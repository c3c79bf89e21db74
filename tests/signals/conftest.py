"""Fixtures of the signal tests; the helpers they use live in ``tests.fixtures.signals``."""

from __future__ import annotations

import pytest

from chipwatch.db import session_scope
from chipwatch.sources.models import Source


@pytest.fixture
def feeds(db):
    """One feed source per trust level: ``vendor-feed``, ``press-feed``, ``analyst-feed``, ``lab-feed``."""
    with session_scope() as session:
        for source_id, trust in (
            ("vendor-feed", "vendor"),
            ("press-feed", "press"),
            ("analyst-feed", "analyst"),
            ("lab-feed", "independent"),
        ):
            session.add(
                Source(
                    id=source_id,
                    name=source_id,
                    url=f"https://{source_id}.example/rss",
                    kind="rss",
                    trust=trust,
                )
            )
    return db
