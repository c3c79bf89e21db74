"""Write transactions for checks: one per check, or many checks' results committed together.

A check runs its database work (claims, storing items, health) as a function of a session handed to
a :class:`Writer`, never inside the HTTP exchange. :class:`ThreadWriter` gives each function its own
transaction; :class:`BatchWriter` (a pass over many sources) runs them on one thread and commits those
queued together at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

from sqlalchemy import select
from sqlmodel import Session

from chipwatch.config import Settings
from chipwatch.db import is_postgres, session_scope
from chipwatch.sources.models import Source

logger = logging.getLogger(__name__)
T = TypeVar("T")


class Writer(Protocol):
    """Runs ``fn(session)`` in a write transaction, off the event loop, and returns its result.

    ``source_id`` names the source row ``fn`` will update, so a batching writer can load the rows of
    a whole batch in one query; ``urgent`` asks a batching writer not to wait for more work first.
    A function may carry a ``weight`` attribute, the feed entries it stores (default 1): a batching
    writer bounds the weight of one transaction (:func:`work_weight`).
    """

    def run(
        self, fn: Callable[[Session], T], *, source_id: str | None = None, urgent: bool = False
    ) -> Awaitable[T]:
        """``fn(session)``'s result once its transaction has committed; ``fn``'s exception otherwise."""
        ...


def work_weight(fn: Callable[[Session], Any]) -> int:
    """The work ``fn`` declares in its ``weight`` attribute (feed entries it stores), at least 1."""
    return max(1, int(getattr(fn, "weight", 1)))


class ThreadWriter:
    """One write transaction per call, in a worker thread (the database driver blocks)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    async def run(
        self, fn: Callable[[Session], T], *, source_id: str | None = None, urgent: bool = False
    ) -> T:
        """``fn(session)`` in its own committed transaction; exceptions roll back and propagate."""
        return await asyncio.to_thread(self._run, fn)

    def _run(self, fn: Callable[[Session], T]) -> T:
        with session_scope(self.settings) as session:
            return fn(session)


class BatchWriter:
    """Runs write functions one after another in one thread, committing those queued together at once.

    Used when many checks finish at about the same time (a scheduled pass, ``chipwatch check``).
    Why: SQLite has a single writer, and threads queueing on its lock wait in the busy handler's
    coarse sleeps, while one writer thread never waits; and one commit (and one query loading the
    batch's source rows) per batch instead of per check saves most of the rest ("group commit").

    The functions of a batch share one transaction. If any of them raises, the transaction is rolled
    back and each function is run again in a transaction of its own, so one failing check cannot
    lose the others' results and its caller gets its exception. Functions must therefore depend only
    on the database and their own inputs (``record_check`` does). ``max_batch`` bounds how many
    checks share one transaction and ``max_weight`` how many feed entries they store together (the
    first function of a batch is taken whatever its weight), and so how long its locks are held: on
    SQLite every other writer waits for the whole transaction.

    A batch is started ``linger_s`` seconds after the first function of an idle writer arrives (or
    at once for an ``urgent`` function or a full batch), so that results finishing close together
    share it; functions queued while a batch commits form the next one straight away. Larger batches
    also mean fewer hand-overs of the interpreter lock between this thread and the event loop, which
    under load cost more than the statements themselves.

    Use as ``async with BatchWriter(settings) as writer:``.
    """

    def __init__(
        self, settings: Settings, *, max_batch: int = 128, max_weight: int = 400, linger_s: float = 0.25
    ) -> None:
        self.settings = settings
        self.max_batch = max(1, max_batch)
        self.max_weight = max(1, max_weight)
        self.linger_s = max(0.0, linger_s)
        self._pending: list[tuple[Callable[[Session], Any], str | None, asyncio.Future]] = []
        self._wake = asyncio.Event()
        self._flush_now = asyncio.Event()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="chipwatch-writer")
        self._pump: asyncio.Task | None = None
        self.batches = 0

    async def __aenter__(self) -> BatchWriter:
        self._pump = asyncio.create_task(self._run_pump())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._pump is not None:
            self._pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._pump
        for _fn, _key, future in self._pending:  # only left when the pass itself was cancelled
            if not future.done():
                future.cancel()
        self._executor.shutdown(wait=True)

    async def run(
        self, fn: Callable[[Session], T], *, source_id: str | None = None, urgent: bool = False
    ) -> T:
        """Queue ``fn(session)`` and return its result once its batch has committed."""
        if self._pump is None:
            raise RuntimeError("BatchWriter is used outside its 'async with' block")
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        self._pending.append((fn, source_id, future))
        self._wake.set()
        if urgent or len(self._pending) >= self.max_batch:
            self._flush_now.set()
        return await future

    async def _run_pump(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await self._wake.wait()
            if self.linger_s and not self._flush_now.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._flush_now.wait(), self.linger_s)
            self._wake.clear()
            self._flush_now.clear()
            while self._pending:
                size = self._batch_size()
                batch, self._pending = self._pending[:size], self._pending[size:]
                work = [(fn, key) for fn, key, _future in batch]
                results = await loop.run_in_executor(self._executor, self._commit, work)
                self.batches += 1
                for (_fn, _key, future), (ok, value) in zip(batch, results, strict=True):
                    if future.done():
                        continue
                    if ok:
                        future.set_result(value)
                    else:
                        future.set_exception(value)

    def _batch_size(self) -> int:
        """How many of the pending functions the next transaction takes (at least one)."""
        weight = 0
        for size, (fn, _key, _future) in enumerate(self._pending[: self.max_batch]):
            weight += work_weight(fn)
            if weight > self.max_weight and size > 0:
                return size
        return min(len(self._pending), self.max_batch)

    def _commit(self, work: list[tuple[Callable[[Session], Any], str | None]]) -> list[tuple[bool, Any]]:
        try:
            with session_scope(self.settings) as session:
                keys = [key for _fn, key in work if key is not None]
                loaded: list[Source] = []
                if keys:
                    # Loads the rows into the session (kept referenced: the identity map is weak), so
                    # each function's session.get() is free; on PostgreSQL it also locks them, in id
                    # order so two writers cannot deadlock.
                    stmt = select(Source).where(Source.id.in_(keys)).order_by(Source.id)
                    if is_postgres(session.get_bind().engine):
                        stmt = stmt.with_for_update()
                    loaded = list(session.scalars(stmt))
                results = [(True, fn(session)) for fn, _key in work]
                del loaded
                return results
        except Exception:
            if len(work) > 1:
                logger.info("a batch of %d check results failed; storing them one by one", len(work))
        results: list[tuple[bool, Any]] = []
        for fn, _key in work:
            try:
                with session_scope(self.settings) as session:
                    results.append((True, fn(session)))
            except Exception as exc:
                results.append((False, exc))
        return results


__all__ = ["BatchWriter", "ThreadWriter", "Writer", "work_weight"]
