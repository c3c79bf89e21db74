"""Team hosting: docker-compose.yml, the Dockerfile, .env.example and the auth wall over writes."""

import re

import pytest
import yaml

from chipwatch.config import Settings
from chipwatch.paths import PROJECT_ROOT


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((PROJECT_ROOT / "docker-compose.yml").read_text())


def test_compose_services_commands_and_dependencies(compose):
    services = compose["services"]
    assert set(services) == {"db", "app", "worker"}
    db = services["db"]
    assert db["image"].startswith("postgres:16")
    assert any(v.endswith(":/var/lib/postgresql/data") for v in db["volumes"])
    assert "pg_isready" in " ".join(db["healthcheck"]["test"])
    assert "pgdata" in compose["volumes"]

    app = services["app"]
    command = " ".join(app["command"])
    assert "chipwatch init" in command and "chipwatch serve" in command and "--no-scheduler" in command
    assert command.index("chipwatch init") < command.index("chipwatch serve")
    assert "/readyz" in " ".join(app["healthcheck"]["test"])
    worker = services["worker"]
    assert worker["command"] == ["chipwatch", "worker"]
    for name in ("app", "worker"):
        svc = services[name]
        assert svc["depends_on"]["db"]["condition"] == "service_healthy"
        assert svc["environment"]["CHIPWATCH_DATABASE_URL"].startswith("postgresql://")
        assert "@db:5432/" in svc["environment"]["CHIPWATCH_DATABASE_URL"]
        assert "healthcheck" in svc


def test_dockerfile_is_slim_non_root_with_healthcheck():
    text = (PROJECT_ROOT / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.11-slim", text, re.M)
    assert re.search(r"^USER (?!root)\w+", text, re.M)
    assert "HEALTHCHECK" in text and "/readyz" in text
    for path in ("service", "migrations", "schema", "seed_data", "alembic.ini"):
        assert path in text


def test_env_example_lists_every_setting():
    text = (PROJECT_ROOT / ".env.example").read_text()
    names = set(re.findall(r"^(CHIPWATCH_[A-Z0-9_]+)=", text, re.M))
    expected = {f"CHIPWATCH_{name.upper()}" for name in Settings.model_fields}
    assert expected <= names, f"missing from .env.example: {sorted(expected - names)}"


def test_every_write_endpoint_needs_the_admin_token(client):
    schema = client.get("/openapi.json").json()
    writes = [
        (method, path)
        for path, ops in schema["paths"].items()
        for method in ops
        if method in ("post", "put", "patch", "delete")
    ]
    assert len(writes) >= 16
    for method, path in writes:
        url = re.sub(r"\{[^}]+\}", "jalapeno", path)
        for headers in ({}, {"Authorization": "Bearer not-the-token"}, {"Authorization": "Basic abc"}):
            r = client.request(method.upper(), url, headers=headers, json={})
            assert r.status_code == 401, f"{method.upper()} {path} answered {r.status_code} with {headers}"
            assert r.headers["content-type"].startswith("application/problem+json")
            assert r.headers.get("www-authenticate") == "Bearer"


def test_metrics_exposes_the_named_series(client):
    r = client.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    for name in (
        "chipwatch_source_checks_total",
        "chipwatch_fetch_latency_seconds",
        "chipwatch_items_stored_total",
        "chipwatch_signal_transitions_total",
        "chipwatch_webhook_deliveries_total",
        "chipwatch_webhook_delivery_latency_seconds",
        'chipwatch_queue_depth{queue="webhook_deliveries"}',
    ):
        assert name in r.text


def _sample(text: str, name: str) -> float:
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(name + "{"))


def test_a_transition_is_counted(client, admin_headers):
    before = _sample(client.get("/metrics").text, "chipwatch_signal_transitions_total")
    r = client.post("/v1/signals/jalapeno-price-disclosed/resolve", json={"outcome": "no", "note": "checked"},
                    headers=admin_headers)
    assert r.status_code == 200, r.text
    after = _sample(client.get("/metrics").text, "chipwatch_signal_transitions_total")
    assert after == before + 1


def test_a_check_is_counted(client, admin_headers, httpserver):
    rss = ("<?xml version='1.0'?><rss version='2.0'><channel><title>t</title><link>http://x/</link>"
           "<item><guid>a1</guid><title>Jalapeño ramps up</title><link>http://x/a1</link>"
           "<pubDate>Mon, 23 Nov 2026 10:00:00 GMT</pubDate></item></channel></rss>")
    httpserver.expect_request("/metrics-feed.xml").respond_with_data(rss, content_type="application/rss+xml")
    body = {"url": httpserver.url_for("/metrics-feed.xml"), "name": "Metrics feed", "trust": "press"}
    r = client.post("/v1/sources", json=body, headers=admin_headers)
    assert r.status_code == 201, r.text
    text = client.get("/metrics").text
    checks = _sample(text, "chipwatch_source_checks_total")
    stored = _sample(text, "chipwatch_items_stored_total")
    r = client.post(f"/v1/sources/{r.json()['id']}/check", headers=admin_headers)
    assert r.status_code == 200 and r.json()["status"] == "ok", r.text
    text = client.get("/metrics").text
    assert _sample(text, "chipwatch_source_checks_total") == checks + 1
    assert _sample(text, "chipwatch_items_stored_total") == stored + 1
    assert "chipwatch_fetch_latency_seconds_count" in text
