"""The request body cap and the early token check, on an app of the test's own and on the real API."""

from __future__ import annotations

from http import HTTPStatus

import pytest
from fastapi import APIRouter, Body, FastAPI
from fastapi.testclient import TestClient

from chipwatch.config import get_settings
from chipwatch.kit.auth import AdminDep
from chipwatch.kit.errors import PROBLEM_JSON, install_error_handlers
from chipwatch.kit.request_limits import RequestLimitMiddleware, body_cap
from tests.fixtures.database import ADMIN_TOKEN

ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


@pytest.fixture
def app(monkeypatch, tmp_path) -> TestClient:
    monkeypatch.setenv("CHIPWATCH_REQUEST_MAX_BYTES", "1000")
    monkeypatch.setenv("CHIPWATCH_ADMIN_TOKEN", ADMIN_TOKEN)
    monkeypatch.setenv("CHIPWATCH_DATA_DIR", str(tmp_path))
    get_settings.cache_clear()
    seen: list[int] = []
    router = APIRouter(dependencies=[AdminDep])

    @router.post("/default")
    def default(payload: list = Body(...)) -> dict:
        seen.append(len(payload))
        return {"items": len(payload)}

    @router.post("/declared", dependencies=[body_cap(5000)])
    def declared(payload: list = Body(...)) -> dict:
        seen.append(len(payload))
        return {"items": len(payload)}

    @router.post("/from-settings", dependencies=[body_cap(lambda s: 2 * s.request_max_bytes)])
    def from_settings(payload: list = Body(...)) -> dict:
        seen.append(len(payload))
        return {"items": len(payload)}

    api = FastAPI()
    install_error_handlers(api)
    api.add_middleware(RequestLimitMiddleware)
    api.include_router(router)
    with TestClient(api) as client:
        client.seen = seen  # type: ignore[attr-defined]
        yield client
    get_settings.cache_clear()


def _array(size: int) -> bytes:
    """A JSON array of zeros exactly ``size`` bytes long (size >= 3)."""
    count = (size - 1) // 2
    body = b"[" + b",".join(b"0" for _ in range(count)) + b"]"
    return body + b" " * (size - len(body))


def test_bodies_up_to_the_default_cap_pass_and_larger_ones_get_413(app):
    r = app.post("/default", content=_array(1000), headers={**ADMIN, "content-type": "application/json"})
    assert r.status_code == 200 and r.json() == {"items": 499}
    r = app.post("/default", content=_array(1001), headers={**ADMIN, "content-type": "application/json"})
    assert r.status_code == 413
    assert r.headers["content-type"] == PROBLEM_JSON
    assert r.json() == {"type": "about:blank", "title": HTTPStatus(413).phrase, "status": 413,
                        "detail": "request body over 1000 bytes", "instance": "/default"}
    assert app.seen == [499]


def test_a_streamed_body_without_length_is_counted(app):
    def chunks():
        for _ in range(30):
            yield b" " * 100  # 3,000 bytes in all, no Content-Length

    r = app.post("/default", content=chunks(), headers={**ADMIN, "content-type": "application/json"})
    assert r.status_code == 413 and r.json()["detail"] == "request body over 1000 bytes"


def test_routes_declare_their_own_cap(app):
    json = {**ADMIN, "content-type": "application/json"}
    assert app.post("/declared", content=_array(5000), headers=json).json() == {"items": 2499}
    assert app.post("/declared", content=_array(5001), headers=json).status_code == 413
    assert app.post("/from-settings", content=_array(2000), headers=json).status_code == 200
    r = app.post("/from-settings", content=_array(2001), headers=json)
    assert r.status_code == 413 and r.json()["detail"] == "request body over 2000 bytes"


def test_a_missing_or_wrong_token_is_refused_before_the_size_or_the_json(app):
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        for body in (_array(50_000), b"[[[[not json"):
            r = app.post("/default", content=body, headers={**headers, "content-type": "application/json"})
            assert r.status_code == 401, (headers, r.text)
            assert r.headers["content-type"] == PROBLEM_JSON
            assert r.headers["www-authenticate"] == "Bearer"
            assert r.json()["detail"] == "admin token required"
    assert app.seen == []


def test_the_api_caps_write_bodies_at_the_setting(client, admin_headers):
    """On the real app: a source created with a normal body, refused with 413 over 1 MiB (the
    default), and refused with 401 without a token whatever the body."""
    body = {"url": "http://127.0.0.1:9/feed.xml", "name": "Capped feed", "notes": "n" * 1000}
    assert client.post("/v1/sources", json=body, headers=admin_headers).status_code == 201
    big = {**body, "name": "Too big", "notes": "n" * (1024 * 1024)}
    r = client.post("/v1/sources", json=big, headers=admin_headers)
    assert r.status_code == 413 and r.json()["detail"] == f"request body over {1024 * 1024} bytes"
    assert client.post("/v1/sources", json=big).status_code == 401
    assert client.get("/v1/sources/too-big").status_code == 404
