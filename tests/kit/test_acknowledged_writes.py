"""Every write route commits before it answers: the next read of any client sees the write.

Each case runs a real uvicorn server on 127.0.0.1 and a real HTTP client, and does its write then a
read of what it wrote, several rounds in a row. A witness wrapped around the app reads the same thing
in-process at the moment the write's response starts: with a commit after the response (FastAPI's
default for a ``yield`` dependency) it sees the old state every time, so each case fails on that order
whatever the timing. Cached read models (``/v1/signals``) are read warm, before and after the write.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from fastapi.routing import APIRoute

from chipwatch.kit.sessions import write_session
from tests.fixtures.corpus import corpus_dir
from tests.fixtures.database import ADMIN_TOKEN
from tests.fixtures.server import serving
from tests.fixtures.sources import Entry, rss

ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
ROUNDS = 5
WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
BOARD = "/v1/signals?limit=500"

SELF_COMMITTING = {
    ("POST", "/v1/sources/opml"),
    ("POST", "/v1/sources/{source_id}/check"),
    ("POST", "/v1/imports"),
    ("POST", "/v1/imports/sources/{source_id}/check"),
}
"""Async routes that read their body or run a check first, then write in a transaction of their own
that commits before they return (``acknowledged_write``, the check's writers, the import runner)."""


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


@dataclass
class Case:
    """One write route: ``prepare`` makes what the write needs (through the API), ``write`` gives the
    request, ``read`` the path that shows its effect and ``check`` asserts that it does."""

    route: tuple[str, str]
    write: Callable[[dict, int], tuple[str, str, dict[str, Any]]]
    read: Callable[[dict, int], str]
    check: Callable[[dict, int, httpx.Response, httpx.Response], None]
    prepare: Callable[[httpx.Client, int, dict], None] = lambda http, n, ctx: None
    status: int = 200
    ctx: dict = field(default_factory=dict)


def _ok(response: httpx.Response, status: int = 200) -> dict:
    assert response.status_code == status, response.text
    return response.json() if response.content else {}


# ---------------------------------------------------------------- knowledge base
KB_CREATE = {
    "vendors": {"name": "Ack vendor"},
    "chips": {"name": "Ack chip"},
    "models": {"name": "Ack model"},
    "benchmarks": {"name": "Ack benchmark"},
    "results": {"metric": "tokens_per_s"},
    "funding-rounds": {"vendor_id": "groq", "round_type": "series"},
    "deployments": {"status": "planned"},
    "claims": {"topic": "price", "statement": "It costs less."},
}


def _kb_cases() -> dict[str, Case]:
    cases = {}
    for kind, body in KB_CREATE.items():

        def same_notes(ctx, n, written, read):
            assert _ok(read)["notes"] == f"round {n}" == written.json()["notes"]

        cases[f"create {kind}"] = Case(
            ("POST", f"/v1/{kind}"),
            write=lambda ctx, n, kind=kind, body=body: (
                "POST", f"/v1/{kind}", {"json": {**body, "id": f"ack-{n}", "notes": f"round {n}"}}
            ),
            read=lambda ctx, n, kind=kind: f"/v1/{kind}/ack-{n}",
            check=same_notes,
            status=201,
        )

        def create_once(http, n, ctx, kind=kind, body=body):
            if n == 0:
                _ok(http.post(f"/v1/{kind}", json={**body, "id": "ack-row"}, headers=ADMIN), 201)

        cases[f"patch {kind}"] = Case(
            ("PATCH", f"/v1/{kind}/{{id}}"),
            prepare=create_once,
            write=lambda ctx, n, kind=kind: (
                "PATCH", f"/v1/{kind}/ack-row", {"json": {"notes": f"round {n}"}}
            ),
            read=lambda ctx, n, kind=kind: f"/v1/{kind}/ack-row",
            check=same_notes,
        )
    return cases


# ---------------------------------------------------------------- signals
def _definition(sid: str, **kw: Any) -> dict:
    return {
        "id": sid,
        "question": kw.pop("question", f"Does {sid} happen?"),
        "opened_on": "2026-08-25",
        "review": kw.pop("review", "auto"),
        "subjects": ["jalapeno"],
        "yes_when": kw.pop("yes_when", [{"item": {"mentions_all": ["jalapeno"], "terms_any": ["ack"]}}]),
        **kw,
    }


def _on_board(read: httpx.Response, sid: str) -> dict:
    [row] = [s for s in _ok(read)["items"] if s["id"] == sid]
    return row


def _board_status(status: str) -> Callable:
    def check(ctx, n, written, read):
        assert _on_board(read, ctx["sid"])["status"] == status == written.json()["status"]
        assert _on_board(read, ctx["sid"])["version"] == written.json()["version"]

    return check


def _new_signal(http: httpx.Client, sid: str, *, resolved: bool = False, **kw: Any) -> dict:
    created = _ok(http.post("/v1/signals", json=_definition(sid, **kw), headers=ADMIN), 201)
    if resolved:
        resolve = {"outcome": "yes", "note": "ok"}
        created = _ok(http.post(f"/v1/signals/{sid}/resolve", json=resolve, headers=ADMIN))
    return created


def _signal_cases() -> dict[str, Case]:
    def fresh(**kw):
        def prepare(http, n, ctx):
            ctx["sid"] = f"ack-move-{n}"
            _new_signal(http, ctx["sid"], **kw)

        return prepare

    def created_on_board(ctx, n, written, read):
        assert _on_board(read, f"ack-signal-{n}")["question"] == written.json()["question"]

    def question_on_board(ctx, n, written, read):
        assert _on_board(read, "ack-signal")["question"] == f"Round {n}?" == written.json()["question"]

    def create_once(http, n, ctx):
        if n == 0:
            _new_signal(http, "ack-signal")

    # A manual-review signal whose condition a seeded result meets waits in pending_review.
    pending = {"review": "manual", "yes_when": [{"result": {"chip": "jalapeno"}}]}
    return {
        "create signal": Case(
            ("POST", "/v1/signals"),
            write=lambda ctx, n: ("POST", "/v1/signals", {"json": _definition(f"ack-signal-{n}")}),
            read=lambda ctx, n: BOARD,
            check=created_on_board,
            status=201,
        ),
        "patch signal": Case(
            ("PATCH", "/v1/signals/{signal_id}"),
            prepare=create_once,
            write=lambda ctx, n: ("PATCH", "/v1/signals/ack-signal", {"json": {"question": f"Round {n}?"}}),
            read=lambda ctx, n: BOARD,
            check=question_on_board,
        ),
        "resolve signal": Case(
            ("POST", "/v1/signals/{signal_id}/resolve"),
            prepare=fresh(),
            write=lambda ctx, n: (
                "POST", f"/v1/signals/{ctx['sid']}/resolve", {"json": {"outcome": "no", "note": f"round {n}"}}
            ),
            read=lambda ctx, n: BOARD,
            check=_board_status("resolved"),
        ),
        "reopen signal": Case(
            ("POST", "/v1/signals/{signal_id}/reopen"),
            prepare=fresh(resolved=True),
            write=lambda ctx, n: ("POST", f"/v1/signals/{ctx['sid']}/reopen", {"json": {"note": "again"}}),
            read=lambda ctx, n: BOARD,
            check=_board_status("open"),
        ),
        "reject signal": Case(
            ("POST", "/v1/signals/{signal_id}/reject"),
            prepare=fresh(**pending),
            write=lambda ctx, n: ("POST", f"/v1/signals/{ctx['sid']}/reject", {"json": {"note": "not it"}}),
            read=lambda ctx, n: BOARD,
            check=_board_status("open"),
        ),
    }


# ---------------------------------------------------------------- webhooks
HOOK_URL = "http://127.0.0.1:9/hook"


def _webhook_cases() -> dict[str, Case]:
    def hook_once(http, n, ctx):
        if n == 0:
            ctx["hook"] = _ok(http.post("/v1/webhooks", json={"url": HOOK_URL}, headers=ADMIN), 201)["id"]
            queued = _ok(http.post(f"/v1/webhooks/{ctx['hook']}/test", headers=ADMIN), 202)
            ctx["delivery"] = queued["delivery_id"]

    def hook_each(http, n, ctx):
        ctx["hook"] = _ok(http.post("/v1/webhooks", json={"url": HOOK_URL}, headers=ADMIN), 201)["id"]

    def listed(ctx, n, written, read):
        [row] = [w for w in _ok(read)["items"] if w["id"] == written.json()["id"]]
        assert row["url"] == f"{HOOK_URL}/{n}" == written.json()["url"]

    def described(ctx, n, written, read):
        assert _ok(read)["description"] == f"round {n}" == written.json()["description"]

    def rotated(ctx, n, written, read):
        assert _ok(read)["previous_secret_expires_at"] == written.json()["previous_secret_expires_at"]

    def delivery_listed(ctx, n, written, read):
        ids = [d["id"] for d in _ok(read)["items"]]
        assert written.json()["delivery_id"] in ids

    def requeued(ctx, n, written, read):
        [row] = [d for d in _ok(read)["items"] if d["id"] == ctx["delivery"]]
        assert row["next_attempt_at"] == written.json()["next_attempt_at"]

    hook = "/v1/webhooks/{webhook_id}"
    return {
        "create webhook": Case(
            ("POST", "/v1/webhooks"),
            write=lambda ctx, n: ("POST", "/v1/webhooks", {"json": {"url": f"{HOOK_URL}/{n}"}}),
            read=lambda ctx, n: "/v1/webhooks?limit=500",
            check=listed,
            status=201,
        ),
        "patch webhook": Case(
            ("PATCH", hook),
            prepare=hook_once,
            write=lambda ctx, n: (
                "PATCH", f"/v1/webhooks/{ctx['hook']}", {"json": {"description": f"round {n}"}}
            ),
            read=lambda ctx, n: f"/v1/webhooks/{ctx['hook']}",
            check=described,
        ),
        "delete webhook": Case(
            ("DELETE", hook),
            prepare=hook_each,
            write=lambda ctx, n: ("DELETE", f"/v1/webhooks/{ctx['hook']}", {}),
            read=lambda ctx, n: f"/v1/webhooks/{ctx['hook']}",
            check=lambda ctx, n, written, read: _gone(read),
            status=204,
        ),
        "rotate webhook secret": Case(
            ("POST", f"{hook}/rotate-secret"),
            prepare=hook_once,
            write=lambda ctx, n: ("POST", f"/v1/webhooks/{ctx['hook']}/rotate-secret", {}),
            read=lambda ctx, n: f"/v1/webhooks/{ctx['hook']}",
            check=rotated,
        ),
        "test webhook": Case(
            ("POST", f"{hook}/test"),
            prepare=hook_once,
            write=lambda ctx, n: ("POST", f"/v1/webhooks/{ctx['hook']}/test", {"json": {"message": f"{n}"}}),
            read=lambda ctx, n: f"/v1/webhooks/{ctx['hook']}/deliveries?limit=500",
            check=delivery_listed,
            status=202,
        ),
        "retry delivery": Case(
            ("POST", f"{hook}/deliveries/{{delivery_id}}/retry"),
            prepare=hook_once,
            write=lambda ctx, n: (
                "POST", f"/v1/webhooks/{ctx['hook']}/deliveries/{ctx['delivery']}/retry", {}
            ),
            read=lambda ctx, n: f"/v1/webhooks/{ctx['hook']}/deliveries?limit=500",
            check=requeued,
            status=202,
        ),
    }


# ---------------------------------------------------------------- sources
FEED_HOST = "http://127.0.0.1:9"


def _opml(n: int) -> str:
    return (
        '<?xml version="1.0"?><opml version="2.0"><head><title>ack</title></head><body>'
        f'<outline type="rss" text="Ack feed {n}" xmlUrl="{FEED_HOST}/opml-{n}.xml"/></body></opml>'
    )


def _source_cases() -> dict[str, Case]:
    def source_there(ctx, n, written, read):
        assert _ok(read)["url"] == f"{FEED_HOST}/feed-{n}.xml"

    def imported(ctx, n, written, read):
        [created] = written.json()["created"]
        ids = [s["id"] for s in _ok(read)["items"]]
        assert created in ids

    def item_stored(ctx, n, written, read):
        assert written.json()["new_items"] == 1
        assert f"Round {n} news" in [i["title"] for i in _ok(read)["items"]]

    def feed_each(http, n, ctx):
        server = ctx["feed_server"]
        server.clear()
        entries = [Entry(f"Round {k} news", guid=f"ack-{k}") for k in range(n + 1)]
        server.expect_request("/ack.xml").respond_with_data(rss(entries), content_type="application/rss+xml")
        if n == 0:
            source = {"url": server.url_for("/ack.xml"), "name": "Ack feed", "id": "ack-feed"}
            _ok(http.post("/v1/sources", json=source, headers=ADMIN), 201)

    return {
        "create source": Case(
            ("POST", "/v1/sources"),
            write=lambda ctx, n: (
                "POST", "/v1/sources", {"json": {"url": f"{FEED_HOST}/feed-{n}.xml", "name": f"Ack {n}"}}
            ),
            read=lambda ctx, n: f"/v1/sources/ack-{n}",
            check=source_there,
            status=201,
        ),
        "import OPML": Case(
            ("POST", "/v1/sources/opml"),
            write=lambda ctx, n: (
                "POST", "/v1/sources/opml", {"content": _opml(n), "headers": {"Content-Type": "text/x-opml"}}
            ),
            read=lambda ctx, n: "/v1/sources?limit=500",
            check=imported,
        ),
        "check source": Case(
            ("POST", "/v1/sources/{source_id}/check"),
            prepare=feed_each,
            write=lambda ctx, n: ("POST", "/v1/sources/ack-feed/check", {}),
            read=lambda ctx, n: "/v1/items?source=ack-feed&limit=500",
            check=item_stored,
        ),
    }


# ---------------------------------------------------------------- aliases and dataset imports
FUNDING_FILE = "epoch-ai/ai_companies_funding_rounds.csv"


def _import_cases() -> dict[str, Case]:
    def alias_body(n: int) -> dict:
        return {"kind": "chip", "alias": f"Ack Chip {n}", "target_id": "jalapeno"}

    def new_alias(http, n) -> str:
        return _ok(http.post("/v1/aliases", json=alias_body(n), headers=ADMIN), 201)["alias"]["id"]

    def alias_once(http, n, ctx):
        if n == 0:
            ctx["alias"] = new_alias(http, 99)

    def alias_each(http, n, ctx):
        ctx["alias"] = new_alias(http, n)

    def alias_listed(ctx, n, written, read):
        assert written.json()["alias"]["id"] in [a["id"] for a in _ok(read)["items"]]

    def alias_noted(ctx, n, written, read):
        assert _ok(read)["note"] == f"round {n}" == written.json()["alias"]["note"]

    def import_listed(ctx, n, written, read):
        assert written.json()["id"] in [i["id"] for i in _ok(read)["items"]]

    def upload(ctx, n):
        path = corpus_dir() / FUNDING_FILE
        if not path.is_file():
            pytest.skip(f"{path} not found: the import case uploads a real dataset file from the corpus")
        files = {"file": (path.name, path.read_bytes(), "text/csv")}
        return "POST", "/v1/imports", {"data": {"kind": "epoch-funding-rounds"}, "files": files}

    def dataset_each(http, n, ctx):
        # Each round serves a new version (one amount changed), so each check imports.
        path = corpus_dir() / FUNDING_FILE
        if not path.is_file():
            pytest.skip(f"{path} not found: the dataset check imports a real dataset file from the corpus")
        server = ctx["feed_server"]
        server.clear()
        body = path.read_bytes().replace(b"10000000000", str(10_000_000_000 + n).encode(), 1)
        server.expect_request("/funding.csv").respond_with_data(body, content_type="text/csv")
        if n == 0:
            source = {"url": server.url_for("/funding.csv"), "name": "Ack dataset", "id": "ack-dataset",
                      "kind": "epoch-funding-rounds"}
            _ok(http.post("/v1/sources", json=source, headers=ADMIN), 201)

    def dataset_imported(ctx, n, written, read):
        assert written.json()["status"] == "imported"
        assert written.json()["import_id"] in [i["id"] for i in _ok(read)["items"]]

    return {
        "check dataset source": Case(
            ("POST", "/v1/imports/sources/{source_id}/check"),
            prepare=dataset_each,
            write=lambda ctx, n: ("POST", "/v1/imports/sources/ack-dataset/check", {}),
            read=lambda ctx, n: "/v1/imports?limit=500",
            check=dataset_imported,
        ),
        "create alias": Case(
            ("POST", "/v1/aliases"),
            write=lambda ctx, n: ("POST", "/v1/aliases", {"json": alias_body(n)}),
            read=lambda ctx, n: "/v1/aliases?kind=chip&limit=500",
            check=alias_listed,
            status=201,
        ),
        "patch alias": Case(
            ("PATCH", "/v1/aliases/{alias_id}"),
            prepare=alias_once,
            write=lambda ctx, n: ("PATCH", f"/v1/aliases/{ctx['alias']}", {"json": {"note": f"round {n}"}}),
            read=lambda ctx, n: f"/v1/aliases/{ctx['alias']}",
            check=alias_noted,
        ),
        "delete alias": Case(
            ("DELETE", "/v1/aliases/{alias_id}"),
            prepare=alias_each,
            write=lambda ctx, n: ("DELETE", f"/v1/aliases/{ctx['alias']}", {}),
            read=lambda ctx, n: f"/v1/aliases/{ctx['alias']}",
            check=lambda ctx, n, written, read: _gone(read),
            status=204,
        ),
        "import dataset": Case(
            ("POST", "/v1/imports"),
            write=upload,
            read=lambda ctx, n: "/v1/imports?limit=500",
            check=import_listed,
            status=201,
        ),
    }


def _gone(read: httpx.Response) -> None:
    assert read.status_code == 404, read.text


CASES: dict[str, Case] = {
    **_kb_cases(),
    **_signal_cases(),
    **_webhook_cases(),
    **_source_cases(),
    **_import_cases(),
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
    routes = {(method, route.path): route for route in _api_routes(app.routes) for method in route.methods}
    assert set(routes) >= _write_routes(app) and len(_write_routes(app)) >= 30
    late = [
        f"{method} {path}"
        for method, path in sorted(_write_routes(app) - SELF_COMMITTING)
        if not _commits_before_answering(routes[method, path])
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
