"""Shared API pieces: problem+json errors, cursor pagination, auth dependencies, cached reads."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

import orjson
from fastapi import Depends, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from pydantic import BaseModel
from sqlalchemy.exc import DataError
from sqlmodel import Session
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from chipwatch.auth import admin_token as configured_admin_token
from chipwatch.config import get_settings
from chipwatch.db import change_clock, session_scope

T = TypeVar("T")
PROBLEM_JSON = "application/problem+json"
MAX_LIMIT = 500


class Page(BaseModel, Generic[T]):
    """A list answer: ``items`` and an opaque ``next_cursor`` (null on the last page)."""

    items: list[T]
    next_cursor: str | None = None


class Problem(BaseModel):
    """RFC 9457 problem details."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str | None = None
    instance: str | None = None
    errors: list[dict[str, Any]] | None = None


class ApiError(Exception):
    """An error the API answers as problem+json with ``status``."""

    def __init__(self, status: int, title: str, detail: str | None = None, **extra: Any) -> None:
        super().__init__(detail or title)
        self.status, self.title, self.detail, self.extra = status, title, detail, extra


class NotFound(ApiError):
    def __init__(self, kind: str, id_: str) -> None:
        super().__init__(404, "Not Found", f"no {kind} with id {id_!r}")


class Conflict(ApiError):
    def __init__(self, detail: str) -> None:
        super().__init__(409, "Conflict", detail)


def invalid(field: str, message: str) -> ApiError:
    """A 422 naming the offending field."""
    return ApiError(
        422, "Unprocessable Content", f"{field}: {message}", errors=[{"field": field, "message": message}]
    )


def problem_response(
    status: int, title: str, detail: str | None, instance: str | None, **extra: Any
) -> Response:
    """An ``application/problem+json`` response; ``extra`` members (e.g. ``errors``) are added."""
    body = {"type": "about:blank", "title": title, "status": status}
    if detail is not None:
        body["detail"] = detail
    if instance:
        body["instance"] = instance
    body.update({k: v for k, v in extra.items() if v is not None})
    return Response(orjson.dumps(body), status_code=status, media_type=PROBLEM_JSON)


def install_error_handlers(app) -> None:
    """Every error leaves the API as application/problem+json (RFC 9457)."""

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError):
        return problem_response(exc.status, exc.title, exc.detail, request.url.path, **exc.extra)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException):
        from http import HTTPStatus

        title = (
            HTTPStatus(exc.status_code).phrase
            if exc.status_code in HTTPStatus._value2member_map_
            else "Error"
        )
        resp = problem_response(
            exc.status_code, title, str(exc.detail) if exc.detail else None, request.url.path
        )
        for k, v in (exc.headers or {}).items():
            resp.headers[k] = v
        return resp

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError):
        errors = []
        for err in exc.errors():
            loc = [str(p) for p in err.get("loc", ()) if p not in ("body", "query", "path", "header")]
            errors.append({"field": ".".join(loc) or str(err.get("loc")), "message": err.get("msg", "")})
        detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors)
        return problem_response(422, "Unprocessable Content", detail, request.url.path, errors=errors)

    @app.exception_handler(DataError)
    async def _data_error(request: Request, exc: DataError):
        # The database refused a value the models let through (PostgreSQL stores no NUL character in
        # text, for one); the transaction was rolled back, so nothing was written.
        reason = str(exc.orig).splitlines()[0] if exc.orig is not None else "value not storable"
        return problem_response(422, "Unprocessable Content", f"a value cannot be stored: {reason}",
                                request.url.path)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception):  # pragma: no cover - last resort
        import logging

        logging.getLogger("chipwatch.api").exception("unhandled error on %s", request.url.path)
        return problem_response(
            500, "Internal Server Error", "unexpected error; see server logs", request.url.path
        )


# ---------------------------------------------------------------- sessions and auth
def read_session() -> Iterator[Session]:
    """Request dependency: a read-only transaction."""
    with session_scope(write=False) as session:
        yield session


def write_session() -> Iterator[Session]:
    """Request dependency: a write transaction, committed when the route returns without error."""
    with session_scope(write=True) as session:
        yield session


def _bearer(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


async def require_admin(request: Request) -> None:
    """Writes need ``Authorization: Bearer <admin token>``; 401 otherwise."""
    expected = configured_admin_token(get_settings())
    token = _bearer(request)
    if not expected or not token or not hmac.compare_digest(token.encode(), expected.encode()):
        raise StarletteHTTPException(401, "admin token required", headers={"WWW-Authenticate": "Bearer"})


async def require_reader(request: Request) -> None:
    """Reads are open unless ``CHIPWATCH_READ_TOKEN`` is set; then the read or admin token is needed."""
    settings = get_settings()
    if not settings.read_token:
        return
    token = _bearer(request)
    admin = configured_admin_token(settings)
    ok = token is not None and (
        hmac.compare_digest(token.encode(), settings.read_token.encode())
        or (admin is not None and hmac.compare_digest(token.encode(), admin.encode()))
    )
    if not ok:
        raise StarletteHTTPException(401, "read token required", headers={"WWW-Authenticate": "Bearer"})


AdminDep = Depends(require_admin)


# ---------------------------------------------------------------- pagination
def encode_cursor(key: Any) -> str:
    """Opaque keyset cursor for the last row's sort key."""
    return base64.urlsafe_b64encode(json.dumps(key, default=str).encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None, expect: type | tuple[type, ...] = (str, int, list)) -> Any:
    """The sort key a cursor names (of type ``expect``); 422 problem when the cursor is malformed."""
    if cursor is None:
        return None
    message = "malformed cursor; pass back the next_cursor of a previous page"
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        key = json.loads(base64.urlsafe_b64decode(padded.encode()).decode())
    except (ValueError, UnicodeDecodeError) as exc:
        raise invalid("cursor", message) from exc
    if not isinstance(key, expect) or isinstance(key, bool) or key in ("", []):
        raise invalid("cursor", message)
    return key


LimitQ = Query(50, ge=1, le=MAX_LIMIT, description="page size")
CursorQ = Query(None, max_length=512, description="next_cursor of the previous page")


# ---------------------------------------------------------------- cached read models
class ReadCache:
    """Serialised answers of hot read models, keyed by request and :data:`change_clock`.

    A write committed in this process bumps the clock, so the next read rebuilds before answering.
    Writes by other processes (workers, replicas) are picked up within ``ttl_s``: past it, the entry is
    refreshed in the background while the previous bytes are still served.  Concurrent misses of one key
    share a single build, so a burst of readers never runs the same query many times over.
    """

    def __init__(self, ttl_s: float = 1.0, max_entries: int = 256) -> None:
        self.ttl_s, self.max_entries = ttl_s, max_entries
        self._entries: dict[str, tuple[int, float, bytes, str]] = {}
        self._building: dict[str, asyncio.Future] = {}
        self._lock = threading.Lock()

    def _store(self, key: str, clock: int, built_at: float, payload: Any) -> tuple[bytes, str]:
        body = orjson.dumps(payload, option=orjson.OPT_NON_STR_KEYS)
        etag = '"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"'
        with self._lock:
            if len(self._entries) >= self.max_entries:
                self._entries.clear()
            self._entries[key] = (clock, built_at, body, etag)
        return body, etag

    def fresh(self, key: str) -> tuple[bytes, str] | None:
        """The cached ``(body, ETag)`` for ``key`` when it is current and within ``ttl_s``, else None."""
        hit = self._entries.get(key)
        if hit is not None and hit[0] == change_clock.value and time.monotonic() - hit[1] < self.ttl_s:
            return hit[2], hit[3]
        return None

    def build_sync(self, key: str, build: Callable[[], Any]) -> tuple[bytes, str]:
        """Build and store ``key`` now (thread-safe; used off the event loop)."""
        # Read the clock before building: a write landing mid-build leaves the entry stale, not wrong.
        clock, built_at = change_clock.value, time.monotonic()
        return self._store(key, clock, built_at, build())

    async def get(self, key: str, build: Callable[[], Any]) -> tuple[bytes, str]:
        """``(body bytes, strong ETag)`` for ``key``, building in the thread pool when needed."""
        hit = self._entries.get(key)
        if hit is not None and hit[0] == change_clock.value:
            if time.monotonic() - hit[1] >= self.ttl_s and key not in self._building:
                self._start_build(key, build)
            return hit[2], hit[3]
        pending = self._building.get(key)
        if pending is None:
            pending = self._start_build(key, build)
        return await asyncio.shield(pending)

    def _start_build(self, key: str, build: Callable[[], Any]) -> asyncio.Future:
        future = asyncio.ensure_future(run_in_threadpool(self.build_sync, key, build))
        self._building[key] = future

        def done(f: asyncio.Future) -> None:
            self._building.pop(key, None)
            if not f.cancelled():
                f.exception()  # retrieved here so a failed background refresh is not reported twice

        future.add_done_callback(done)
        return future

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


read_cache = ReadCache()


def cache_key(path: str, query: str) -> str:
    """The read-cache key of a request: its path and raw query string."""
    return f"{path}?{query}"


async def cached_json(request: Request, build: Callable[[], Any]) -> Response:
    """A JSON response from :data:`read_cache`, answering 304 when ``If-None-Match`` matches.

    A hit is served on the event loop with no thread hop; a miss builds in the thread pool so the
    database query never blocks the loop.
    """
    body, etag = await read_cache.get(cache_key(request.url.path, request.url.query), build)
    headers = {"ETag": etag, "Cache-Control": "no-cache"}
    inm = request.headers.get("if-none-match")
    if inm and etag in [t.strip() for t in inm.split(",")]:
        return Response(status_code=304, headers=headers)
    return Response(body, media_type="application/json", headers=headers)


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
                if self._authorised(headers):
                    await self._answer(send, headers, *hit)
                    return
        await self.app(scope, receive, send)

    @staticmethod
    def _authorised(headers: dict[bytes, bytes]) -> bool:
        settings = get_settings()
        if not settings.read_token:
            return True
        scheme, _, token = headers.get(b"authorization", b"").decode("latin-1").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            return False
        admin = configured_admin_token(settings)
        return hmac.compare_digest(token.encode(), settings.read_token.encode()) or (
            admin is not None and hmac.compare_digest(token.encode(), admin.encode())
        )

    @staticmethod
    async def _answer(send, headers: dict[bytes, bytes], body: bytes, etag: str) -> None:
        inm = headers.get(b"if-none-match")
        not_modified = inm is not None and etag in [t.strip() for t in inm.decode("latin-1").split(",")]
        out = [(b"etag", etag.encode()), (b"cache-control", b"no-cache")]
        if not_modified:
            await send({"type": "http.response.start", "status": 304, "headers": out})
            await send({"type": "http.response.body", "body": b""})
            return
        out += [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": out})
        await send({"type": "http.response.body", "body": body})
