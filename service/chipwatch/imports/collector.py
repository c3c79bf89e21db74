"""The cyclic garbage collector paused while an import builds its rows.

An import allocates a few objects per cell (records, plain dicts, built values, bound rows) that live
until its transaction ends and hold no reference cycles: reference counting frees them. While they
live, every 700 net allocations run a young-generation collection that walks them again, and every
tenth of those an older one that walks all the survivors: on the Epoch GPU clusters file (786 rows) a
few dozen collections took a quarter of the import's CPU time and freed nothing. Pausing the collector
for the import, as bulk loaders do, leaves it one collection of whatever survives once it resumes.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_resume = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the ``with`` block, and resume it after the last of any
    overlapping blocks (imports in several threads) ends, if it was enabled when the first began.
    Reference counting still frees every object that is not part of a cycle."""
    global _depth, _resume
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                gc.enable()
