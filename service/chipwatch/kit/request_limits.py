"""Request bodies: a size cap (413) and the route's token checked before a byte of the body is read.

:class:`RequestLimitMiddleware` wraps the ASGI ``receive`` channel. A route's handler reads its body
through it after routing, so at the first read the matched route is known (``scope["route"]``) and,
before anything is taken from the client:

1. the route's token checks (:func:`~chipwatch.kit.auth.require_admin`,
   :func:`~chipwatch.kit.auth.require_reader`, wherever they sit in its dependencies) run, so a
   missing or wrong token answers 401 without the body being read or parsed;
2. a ``Content-Length`` over the route's cap answers 413 at once;
3. every chunk read is counted, and the read that passes the cap answers 413 (a chunked body has no
   length up front).

The cap is ``request_max_bytes`` (1 MiB by default), or what the route declares with
``dependencies=[body_cap(n)]`` (a number of bytes, or a function of the settings, e.g. an upload
route's ``fetch_max_bytes`` plus the multipart framing). A route that never reads its body (no body
parameter) never pulls it from the client either, so its own dependencies answer first.

Errors leave as :class:`~starlette.exceptions.HTTPException` from the read, so the app's handlers
turn them into problem+json like every other error; one the app did not handle is answered here.
"""

from __future__ import annotations

from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from fastapi import Depends, Request
from fastapi.params import Depends as DependsParam
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from chipwatch.config import Settings, get_settings
from chipwatch.kit.auth import require_admin, require_reader
from chipwatch.kit.errors import problem_response

# Run before the body is read: each takes only the request and raises a 401 HTTPException.
TOKEN_CHECKS = (require_admin, require_reader)

CapSpec = int | Callable[[Settings], int]


class BodyTooLarge(StarletteHTTPException):
    """413: the request body is over ``max_bytes`` (declared up front or counted while read)."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__(413, f"request body over {max_bytes} bytes")
        self.max_bytes = max_bytes


def body_cap(max_bytes: CapSpec) -> DependsParam:
    """A route dependency declaring the route's own body cap: bytes, or a function of the settings.

    Use as ``@router.post(..., dependencies=[AdminDep, body_cap(lambda s: s.fetch_max_bytes + 65536)])``.
    It does nothing when the route runs; :class:`RequestLimitMiddleware` reads it from the route.
    """

    def declared_body_cap() -> None:
        return None

    declared_body_cap.max_body_bytes = max_bytes  # type: ignore[attr-defined]
    return Depends(declared_body_cap)


def _dependency_calls(dependant: Any) -> list[Any]:
    """Every callable in a route's dependency tree (depth first)."""
    calls: list[Any] = []
    for sub in getattr(dependant, "dependencies", ()):
        calls.append(sub.call)
        calls += _dependency_calls(sub)
    return calls


class _RoutePolicy:
    """What a route asks of its request body: token checks and a declared cap (None: the default)."""

    def __init__(self, route: Any) -> None:
        calls = _dependency_calls(getattr(route, "dependant", None))
        self.checks = [c for c in TOKEN_CHECKS if c in calls]
        caps = [getattr(c, "max_body_bytes", None) for c in calls]
        self.cap: CapSpec | None = next((c for c in caps if c is not None), None)

    def max_bytes(self, settings: Settings) -> int:
        if self.cap is None:
            return settings.request_max_bytes
        return int(self.cap(settings) if callable(self.cap) else self.cap)


_policies: dict[int, tuple[Any, _RoutePolicy]] = {}


def _policy(route: Any) -> _RoutePolicy:
    # Routes live as long as the app; keyed by id with the route kept alive beside its policy.
    cached = _policies.get(id(route))
    if cached is None or cached[0] is not route:
        cached = _policies[id(route)] = (route, _RoutePolicy(route))
    return cached[1]


def _content_length(scope: Scope) -> int | None:
    value = Headers(scope=scope).get("content-length")
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


class _Body:
    """The guarded ``receive`` of one request."""

    def __init__(self, scope: Scope, receive: Receive) -> None:
        self.scope, self._receive = scope, receive
        self.max_bytes: int | None = None
        self.read = 0

    async def receive(self) -> Message:
        if self.max_bytes is None:
            await self._first_read()
        message = await self._receive()
        if message["type"] == "http.request":
            self.read += len(message.get("body", b""))
            if self.read > self.max_bytes:
                raise BodyTooLarge(self.max_bytes)
        return message

    async def _first_read(self) -> None:
        route = self.scope.get("route")
        policy = _policy(route) if route is not None else None
        settings = get_settings()
        if policy is not None:
            request = Request(self.scope)
            for check in policy.checks:
                await check(request)
        self.max_bytes = policy.max_bytes(settings) if policy is not None else settings.request_max_bytes
        length = _content_length(self.scope)
        if length is not None and length > self.max_bytes:
            raise BodyTooLarge(self.max_bytes)


class RequestLimitMiddleware:
    """ASGI middleware: body cap (413) and token checks before the body is read (see the module)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body = _Body(scope, receive)
        started = False

        async def send_tracked(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, body.receive, send_tracked)
        except StarletteHTTPException as exc:
            # Raised from a read outside the app's handlers (a middleware reading the body).
            if started or exc.status_code not in (401, 413):
                raise
            title = HTTPStatus(exc.status_code).phrase  # the same title the app's handler gives
            response = problem_response(exc.status_code, title, str(exc.detail), scope.get("path"))
            for key, value in (exc.headers or {}).items():
                response.headers[key] = value
            await response(scope, receive, send)


__all__ = ["BodyTooLarge", "RequestLimitMiddleware", "TOKEN_CHECKS", "body_cap"]
