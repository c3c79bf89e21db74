"""The HTTP cache of hot read models: serialised answers keyed by request and change clock, ETags, 304s.

:func:`etag_response` is the one place an ``If-None-Match`` header is compared with an ETag; cached
reads (:func:`cached_json`), the ASGI fast path (:class:`HotReadMiddleware`) and any route that
renders its own body (the Atom feed) answer through it or through :func:`etag_matches`.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import orjson
from fastapi import Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from chipwatch.config import get_settings
from chipwatch.db import change_clock
from chipwatch.kit.auth import bearer_token, may_read

CACHE_CONTROL = "no-cache"


def strong_etag(body: bytes) -> str:
    """A strong ETag for ``body``: a quoted 24-hex-digit BLAKE2b digest."""
    return '"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"'


def etag_matches(if_none_match: str | None, etag: str) -> bool:
    """True when an ``If-None-Match`` value names ``etag`` (or is ``*``), by the weak comparison
    RFC 9110 section 13.1.2 prescribes for it (``W/"x"`` matches ``"x"``)."""
    if not if_none_match:
        return False
    wanted = etag.removeprefix("W/")
    for tag in if_none_match.split(","):
        tag = tag.strip()
        if tag == "*" or tag.removeprefix("W/") == wanted:
            return True
    return False


def etag_response(
    if_none_match: str | None, body: bytes, *, media_type: str, etag: str | None = None
) -> Response:
    """``body`` with its ETag and ``Cache-Control: no-cache``, or an empty 304 when
    ``if_none_match`` (the request header's value) names that ETag."""
    etag = etag or strong_etag(body)
    headers = {"ETag": etag, "Cache-Control": CACHE_CONTROL}
    if etag_matches(if_none_match, etag):
        return Response(status_code=304, headers=headers)
    return Response(body, media_type=media_type, headers=headers)


class ReadCache:
    """Serialised answers of hot read models, keyed by request and :data:`change_clock`.

    A write committed in this process bumps the clock before its response is sent, so a read that
    follows it rebuilds before answering (read-your-writes on cached paths).  Writes by other processes
    (workers, replicas) are picked up within ``ttl_s``: past it an entry is rebuilt before it is served.
    Concurrent misses of one key at one clock share a single build, so a burst of readers never runs the
    same query many times over; a build that started before the latest write is never shared with a
    reader that came after it.  At most ``max_entries`` answers are kept; the least recently used goes
    first.
    """

    def __init__(self, ttl_s: float = 1.0, max_entries: int = 256) -> None:
        self.ttl_s, self.max_entries = ttl_s, max_entries
        self._entries: OrderedDict[str, tuple[int, float, bytes, str]] = OrderedDict()
        self._building: dict[str, tuple[int, asyncio.Future]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def _store(self, key: str, clock: int, built_at: float, payload: Any) -> tuple[bytes, str]:
        # A build may hand over finished bytes (a rendered page); anything else is a JSON-ready payload.
        if isinstance(payload, bytes):
            body = payload
        else:
            body = orjson.dumps(payload, option=orjson.OPT_NON_STR_KEYS)
        etag = strong_etag(body)
        with self._lock:
            current = self._entries.get(key)
            if current is not None and current[0] > clock:
                return body, etag  # a build from before a write finished last: keep the newer entry
            self._entries[key] = (clock, built_at, body, etag)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return body, etag

    def _hit(self, key: str) -> tuple[int, float, bytes, str] | None:
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self._entries.move_to_end(key)
        return hit

    def fresh(self, key: str) -> tuple[bytes, str] | None:
        """The cached ``(body, ETag)`` for ``key`` when it is current and within ``ttl_s``, else None."""
        hit = self._hit(key)
        if hit is not None and hit[0] == change_clock.value and time.monotonic() - hit[1] < self.ttl_s:
            return hit[2], hit[3]
        return None

    def build_sync(self, key: str, build: Callable[[], Any], clock: int | None = None) -> tuple[bytes, str]:
        """Build and store ``key`` now (thread-safe; used off the event loop).

        ``clock`` is the change clock read before the build was asked for (default: now).
        """
        # The clock is read before building: a write landing mid-build leaves the entry stale, not wrong.
        clock = change_clock.value if clock is None else clock
        built_at = time.monotonic()
        return self._store(key, clock, built_at, build())

    async def get(self, key: str, build: Callable[[], Any]) -> tuple[bytes, str]:
        """``(body bytes, strong ETag)`` for ``key``, building in the thread pool when needed.

        ``build`` returns a JSON-ready payload (serialised here) or the body's bytes as they are.

        Serves an entry only when it was built at the current clock and within ``ttl_s``; otherwise it
        waits for a build that started at the current clock (its own, or one already running).
        """
        fresh = self.fresh(key)
        if fresh is not None:
            return fresh
        clock = change_clock.value
        pending = self._building.get(key)
        if pending is None or pending[0] != clock:
            future = self._start_build(key, build, clock)
        else:
            future = pending[1]
        return await asyncio.shield(future)

    def _start_build(self, key: str, build: Callable[[], Any], clock: int) -> asyncio.Future:
        future = asyncio.ensure_future(run_in_threadpool(self.build_sync, key, build, clock))
        self._building[key] = (clock, future)

        def done(f: asyncio.Future) -> None:
            if self._building.get(key, (None, None))[1] is f:
                del self._building[key]
            if not f.cancelled():
                f.exception()  # retrieved here so a failed build is not also reported as never retrieved

        future.add_done_callback(done)
        return future

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._entries.clear()


read_cache = ReadCache()


def cache_key(path: str, query: str) -> str:
    """The read-cache key of a request: its path and raw query string."""
    return f"{path}?{query}"


async def cached_json(request: Request, build: Callable[[], Any]) -> Response:
    """A JSON response from :data:`read_cache`, answering 304 when ``If-None-Match`` matches.

    ``build`` returns the JSON-ready payload. A hit is served on the event loop with no thread hop; a
    miss builds in the thread pool so the database query never blocks the loop.
    """
    body, etag = await read_cache.get(cache_key(request.url.path, request.url.query), build)
    return etag_response(
        request.headers.get("if-none-match"), body, media_type="application/json", etag=etag
    )


class HotReadMiddleware:
    """Serves current cached answers of the hot read models straight from the ASGI layer.

    ``GET /v1/signals`` and ``GET /v1/race`` are polled far more than anything changes; a hit here skips
    routing, dependency resolution and parameter validation.  Anything else (a miss, a stale entry, a
    closed read API without the right token) falls through to the normal route, which validates,
    builds and fills the cache under the same key.
    """

    def __init__(self, app, paths: tuple[str, ...] = ("/v1/signals", "/v1/race")) -> None:
        self.app, self.paths = app, frozenset(paths)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET" and scope["path"] in self.paths:
            hit = read_cache.fresh(cache_key(scope["path"], scope["query_string"].decode("latin-1")))
            if hit is not None:
                headers = dict(scope["headers"])
                authorization = headers.get(b"authorization", b"").decode("latin-1")
                if may_read(get_settings(), bearer_token(authorization)):
                    await self._answer(send, headers, *hit)
                    return
        await self.app(scope, receive, send)

    @staticmethod
    async def _answer(send, headers: dict[bytes, bytes], body: bytes, etag: str) -> None:
        inm = headers.get(b"if-none-match")
        out = [(b"etag", etag.encode()), (b"cache-control", CACHE_CONTROL.encode())]
        if etag_matches(inm.decode("latin-1") if inm is not None else None, etag):
            await send({"type": "http.response.start", "status": 304, "headers": out})
            await send({"type": "http.response.body", "body": b""})
            return
        out += [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": out})
        await send({"type": "http.response.body", "body": body})
