"""Every write route commits before it answers: the next read of any client sees the write.

Each case runs a real uvicorn server on 127.0.0.1 and a real HTTP client, and does its write then a
read of what it wrote, several rounds in a row. A witness wrapped around the app reads the same thing
in-process at the moment the write's response starts: with a commit after the response (FastAPI's
default for a ``yield`` dependency) it sees the old state every time, so each case fails on that order
whatever the timing. Cached read models (``/v1/signals``) are read warm, before and after the write.
"""

from __future__ import annotations

import itertools

import httpx
import pytest
from fastapi.routing import APIRoute

from chipwatch.kit.sessions import write_session
from tests.fixtures.server import serving
from tests.fixtures.write_cases import (
    ADMIN,
    Case,
    kb_cases,
    retraction_cases,
    signal_cases,
    webhook_cases,
)
from tests.fixtures.write_cases_feeds import candidate_cases, import_cases, source_cases

ROUNDS = 5
WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}

SELF_COMMITTING = {
    ("POST", "/v1/sources/opml"),
    ("POST", "/v1/sources/{source_id}/check"),
    ("POST", "/v1/imports"),
    ("POST", "/v1/signals"),
    ("PATCH", "/v1/signals/{signal_id}"),
}
"""Routes that write in a transaction of their own that commits before they return
(``acknowledged_write``, the check's writers, the import runner): async routes that read their body or
run a check first, and the signal writes, which read their answer after the commit so the write lock
is not held while it is shaped."""
NO_DATABASE_WRITE = {("POST", "/login"), ("POST", "/logout")}
"""Form posts that only set or clear the pages' session cookie."""


class Witness:
    """ASGI wrapper: when a write's response starts, GET ``path`` from the app in-process and keep
    the answer, as another client asking at that instant would get it."""

    def __init__(self, app) -> None:
        self.app, self.path, self.seen = app, None, []
        self._reader = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://witness", headers=ADMIN
        )

    async def __call__(self, scope, receive, send) -> None:
        path = self.path
        if scope["type"] != "http" or scope["method"] not in WRITE_METHODS or path is None:
            await self.app(scope, receive, send)
            return

        async def send_and_look(message) -> None:
            if message["type"] == "http.response.start":
                self.seen.append(await self._reader.get(path))
            await send(message)

        await self.app(scope, receive, send_and_look)


CASES: dict[str, Case] = {
    **kb_cases(),
    **retraction_cases(),
    **signal_cases(),
    **webhook_cases(),
    **source_cases(),
    **import_cases(),
    **candidate_cases(),
}


def _api_routes(routes) -> list[APIRoute]:
    """Every APIRoute of the app, through included routers (kept whole as ``original_router``)."""
    found: list[APIRoute] = []
    for route in routes:
        if isinstance(route, APIRoute):
            found.append(route)
        inner = getattr(route, "original_router", None)
        if inner is not None:
            found.extend(_api_routes(inner.routes))
    return found


def _write_routes(app) -> set[tuple[str, str]]:
    """(METHOD, path) of every write operation the OpenAPI document lists."""
    return {
        (method.upper(), path)
        for path, operations in app.openapi()["paths"].items()
        for method in operations
        if method.upper() in WRITE_METHODS
    }


def _commits_before_answering(route: APIRoute) -> bool:
    stack = list(route.dependant.dependencies)
    while stack:
        dep = stack.pop()
        if dep.call is write_session:
            return dep.scope == "function"
        stack.extend(dep.dependencies)
    return False


def test_every_write_route_commits_before_it_answers(db):
    from chipwatch.app import create_app

    app = create_app(scheduler=False)
    writes = {
        (method, route.path): route
        for route in _api_routes(app.routes)
        for method in route.methods & WRITE_METHODS
    }
    # The OpenAPI document's writes, and the pages' form posts that it leaves out.
    assert set(writes) >= _write_routes(app) and len(_write_routes(app)) >= 50
    assert ("POST", "/signals/{signal_id}/resolve") in writes
    late = [
        f"{method} {path}"
        for (method, path), route in sorted(writes.items())
        if (method, path) not in SELF_COMMITTING | NO_DATABASE_WRITE and not _commits_before_answering(route)
    ]
    assert late == [], "write routes that would answer before their commit (use WriteSession)"


def test_every_write_route_has_a_read_your_write_case(db):
    from chipwatch.app import create_app

    routes = _write_routes(create_app(scheduler=False))
    covered = {case.route for case in CASES.values()}
    assert routes - covered == set(), "write routes without a case in CASES"
    assert covered - routes == set(), "cases for routes the app does not have"


@pytest.fixture
def server(db, httpserver_ipv4):
    from chipwatch.app import create_app

    witness = Witness(create_app(scheduler=False))
    with serving(witness) as base_url:
        with httpx.Client(base_url=base_url, timeout=30) as writer, httpx.Client(
            base_url=base_url, headers=ADMIN
        ) as reader:
            yield witness, writer, reader, httpserver_ipv4


@pytest.mark.parametrize("name", list(CASES))
def test_a_write_is_seen_by_the_next_read(server, name):
    witness, writer, reader, feed_server = server
    case = CASES[name]
    ctx: dict = {"feed_server": feed_server}
    for n in itertools.islice(itertools.count(), ROUNDS):
        case.prepare(writer, n, ctx)
        path = case.read(ctx, n)
        reader.get(path)  # a warm read, so a cached read model holds the state before the write
        method, url, kwargs = case.write(ctx, n)
        kwargs = {**kwargs, "headers": {**ADMIN, **kwargs.get("headers", {})}}
        witness.path, witness.seen = path, []
        try:
            written = writer.request(method, url, **kwargs)
        finally:
            witness.path = None
        assert written.status_code == case.status, written.text
        [at_response_start] = witness.seen
        case.check(ctx, n, written, at_response_start)
        case.check(ctx, n, written, reader.get(path))
