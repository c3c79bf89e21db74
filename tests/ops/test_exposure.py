"""With a read token set nothing is open to a stranger but the probes: the OpenAPI document, its pages
and /metrics need a token; /metrics may take its own. /readyz is ready only at the migration head."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from chipwatch.config import get_settings
from chipwatch.db import get_engine
from chipwatch.migrate import migration_heads
from tests.fixtures.database import ADMIN_TOKEN

READ, METRICS = "read-token-1", "metrics-token-1"
GUARDED = ("/openapi.json", "/docs", "/redoc", "/metrics", "/v1/chips")


def _client(monkeypatch, **env: str) -> TestClient:
    for key, value in env.items():
        monkeypatch.setenv(f"CHIPWATCH_{key.upper()}", value)
    get_settings.cache_clear()
    from chipwatch.app import create_app

    return TestClient(create_app(scheduler=False))


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_without_a_read_token_docs_and_metrics_are_open(db, monkeypatch):
    with _client(monkeypatch) as client:
        spec = client.get("/openapi.json")
        assert spec.status_code == 200 and "/v1/chips" in spec.json()["paths"]
        assert "/openapi.json" not in spec.json()["paths"]  # the document does not list itself
        assert "swagger-ui" in client.get("/docs").text and "redoc" in client.get("/redoc").text
        assert client.get("/metrics").status_code == 200


def test_a_read_token_closes_docs_and_metrics_but_not_the_probes(db, monkeypatch):
    with _client(monkeypatch, read_token=READ) as client:
        for path in GUARDED:
            refused = client.get(path)
            assert refused.status_code == 401, path
            assert refused.headers["content-type"] == "application/problem+json"
            assert client.get(path, headers=_bearer("wrong")).status_code == 401, path
            assert client.get(path, headers=_bearer(READ)).status_code == 200, path
            assert client.get(path, headers=_bearer(ADMIN_TOKEN)).status_code == 200, path
        assert client.get("/healthz").json()["status"] == "ok"
        assert client.get("/readyz").json() == {"status": "ready"}


def test_a_browser_logged_in_at_the_pages_opens_the_docs(db, monkeypatch):
    with _client(monkeypatch, read_token=READ) as client:
        browser = {"Accept": "text/html,application/xhtml+xml"}
        sent = client.get("/docs", headers=browser, follow_redirects=False)
        assert sent.status_code == 303 and sent.headers["location"] == "/login?next=/docs"
        assert client.get("/openapi.json", headers=browser).status_code == 401  # a fetch, not a page
        logged_in = client.post("/login", data={"token": READ, "next": "/docs"}, follow_redirects=False)
        assert logged_in.status_code == 303 and logged_in.headers["location"] == "/docs"
        assert "swagger-ui" in client.get("/docs", headers=browser).text
        assert "/v1/chips" in client.get("/openapi.json").json()["paths"]  # Swagger UI's fetch, by cookie
        assert client.get("/v1/chips").status_code == 401  # the API itself still takes tokens only


@pytest.mark.parametrize("read_token", [None, READ])
def test_a_metrics_token_is_the_only_one_metrics_take_besides_the_admin(db, monkeypatch, read_token):
    env = {"metrics_token": METRICS, **({"read_token": read_token} if read_token else {})}
    with _client(monkeypatch, **env) as client:
        assert client.get("/metrics").status_code == 401
        assert client.get("/metrics", headers=_bearer(READ)).status_code == 401
        scraped = client.get("/metrics", headers=_bearer(METRICS))
        assert scraped.status_code == 200 and "chipwatch_" in scraped.text
        assert client.get("/metrics", headers=_bearer(ADMIN_TOKEN)).status_code == 200
        # The metrics token reads nothing else.
        spec = client.get("/openapi.json", headers=_bearer(METRICS))
        assert spec.status_code == (401 if read_token else 200)


def test_readyz_is_unready_until_the_schema_is_at_head(db, monkeypatch):
    (head,) = migration_heads()
    with _client(monkeypatch) as client:
        assert client.get("/readyz").status_code == 200
        with get_engine().begin() as conn:
            conn.execute(text("UPDATE alembic_version SET version_num = 'c13f4a7e2b01'"))
        behind = client.get("/readyz")
        assert behind.status_code == 503
        assert behind.json()["detail"] == (
            "database not ready: schema at revision c13f4a7e2b01, "
            f"this version needs {head}: run chipwatch init"
        )
        with get_engine().begin() as conn:
            conn.execute(text("DROP TABLE alembic_version"))
        gone = client.get("/readyz")
        assert gone.status_code == 503 and gone.json()["detail"].startswith("database not ready: ")
