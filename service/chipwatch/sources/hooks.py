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

A dataset source (MLPerf, Epoch AI, InferenceX files) is fetched by the same check as a feed, but its
bytes become facts, not items: the importer registered with :func:`on_dataset_fetched` (the imports
domain, through the wiring) is called in the check's write transaction with the changed bytes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
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


@dataclass(frozen=True, slots=True)
class DatasetImported:
    """What the importer did with a dataset source's bytes: ``import_id`` is the import it recorded
    (applied, or refused), ``error`` says why the file was not applied (None when it was)."""

    import_id: int | None
    error: str | None = None


class DatasetImporter(Protocol):
    """Imports the changed bytes of a dataset source in the check's session (flushes, never commits).

    ``kind`` is the source's dataset kind, ``url`` the final URL after redirects. Returns a
    :class:`DatasetImported`; a refused file is an ``error``, any other exception fails the check.
    """

    def __call__(
        self, *, session: Session, source_id: str, kind: str, body: bytes, url: str
    ) -> DatasetImported: ...


_importers: tuple[DatasetImporter, ...] = ()


def on_dataset_fetched(importer: DatasetImporter) -> Callable[[], None]:
    """Make ``importer`` the one that takes dataset sources' bytes (a later registration replaces an
    earlier one); returns a function that unregisters it."""
    global _importers
    with _lock:
        _importers = (importer,)

    def remove() -> None:
        global _importers
        with _lock:
            _importers = tuple(fn for fn in _importers if fn is not importer)

    return remove


def import_dataset(*, session: Session, source_id: str, kind: str, body: bytes, url: str) -> DatasetImported:
    """Hand a dataset source's changed bytes to the registered importer in ``session``'s transaction.

    Without one (a process that did not run the wiring) nothing is imported and the result says so,
    so the check records it as the source's failure instead of dropping the bytes silently.
    """
    importers = _importers
    if not importers:
        return DatasetImported(None, "no dataset importer is registered in this process")
    return importers[0](session=session, source_id=source_id, kind=kind, body=body, url=url)


__all__ = [
    "DatasetImported",
    "DatasetImporter",
    "import_dataset",
    "on_dataset_fetched",
    "ItemsStoredListener",
    "StorePreparer",
    "notify_items_stored",
    "on_items_stored",
    "on_prepare_store",
    "prepare_store",
]
