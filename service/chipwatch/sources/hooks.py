"""What runs after a check stores items: listeners registered explicitly by the wiring (``create_app``,
the CLI, a worker), never by importing a module.

Sources produce items and know nothing of their consumers: signal evaluation registers itself here
through the wiring, so the sources domain never imports the signals domain.

A listener is called as ``listener(session=..., item_ids=[...])`` with the ids of the items a check
added or changed, inside the transaction that stored them: what it writes (evidence, transitions,
outbox events) commits or rolls back with the items, and an exception it raises fails the whole check
(recorded in the source's health; the items are stored again at the next check).

A preparer (:func:`on_prepare_store`) is called in a read transaction before a check that parsed new
content opens its write transaction: what it caches there (a compiled matcher) is not built while the
write lock is held, where every other writer would wait for it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Protocol

from sqlmodel import Session


class ItemsStoredListener(Protocol):
    """Called with the check's session and the ids of the items it added or changed."""

    def __call__(self, *, session: Session, item_ids: list[int]) -> object: ...


_lock = threading.Lock()
# A tuple, replaced whole on each change, so a check reads a consistent set without taking the lock.
_listeners: tuple[ItemsStoredListener, ...] = ()


def on_items_stored(listener: ItemsStoredListener) -> Callable[[], None]:
    """Register ``listener`` for every later check; returns a function that unregisters it.

    Registering the same function again keeps one registration (wiring may run more than once in a
    process, e.g. one ``create_app`` per test). Listeners run in registration order.
    """
    global _listeners
    with _lock:
        if listener not in _listeners:
            _listeners = (*_listeners, listener)

    def remove() -> None:
        global _listeners
        with _lock:
            _listeners = tuple(fn for fn in _listeners if fn is not listener)

    return remove


def notify_items_stored(*, session: Session, item_ids: Sequence[int]) -> int:
    """Call every registered listener with ``item_ids`` in ``session``'s transaction; returns how many
    ran (0 when ``item_ids`` is empty). A listener's exception propagates to the caller."""
    if not item_ids:
        return 0
    listeners = _listeners
    for listener in listeners:
        listener(session=session, item_ids=list(item_ids))
    return len(listeners)


class StorePreparer(Protocol):
    """Called with a read-only session before a check writes; builds what the listeners will need."""

    def __call__(self, *, session: Session) -> object: ...


_preparers: tuple[StorePreparer, ...] = ()


def on_prepare_store(preparer: StorePreparer) -> Callable[[], None]:
    """Register ``preparer`` for every later check (once per function); returns its unregistering."""
    global _preparers
    with _lock:
        if preparer not in _preparers:
            _preparers = (*_preparers, preparer)

    def remove() -> None:
        global _preparers
        with _lock:
            _preparers = tuple(fn for fn in _preparers if fn is not preparer)

    return remove


def prepare_store(*, session: Session) -> int:
    """Call every registered preparer with ``session`` (a read transaction); returns how many ran."""
    preparers = _preparers
    for preparer in preparers:
        preparer(session=session)
    return len(preparers)


__all__ = [
    "ItemsStoredListener",
    "StorePreparer",
    "notify_items_stored",
    "on_items_stored",
    "on_prepare_store",
    "prepare_store",
]
