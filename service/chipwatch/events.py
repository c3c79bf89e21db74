"""Moved to :mod:`chipwatch.outbox.emit`; this name stays only until every producer imports from there."""

from chipwatch.outbox.emit import add_waker, emit, new_msg_id  # noqa: F401
