"""A boolean field of a JSON body takes true or false only: "yes", "1", 1, "on" and "true" are refused
with a 422 naming the field, on every write route with one; query parameters keep reading text."""

from __future__ import annotations

import pytest

from chipwatch.kit.json_body import NOT_BOOLEAN, bool_problems
from chipwatch.sources.schemas import SourceCreate
from chipwatch.webhooks.schemas import WebhookUpdate
from tests.fixtures.signals import definition
from tests.fixtures.webhooks import Receiver

LAX_TRUE = ["yes", "1", 1, "on", "true", "True", 1.0]


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


def _errors(resp) -> list[dict[str, str]]:
    assert resp.status_code == 422, resp.text
    assert resp.headers["content-type"].startswith("application/problem+json")
    return resp.json()["errors"]


def test_bool_problems_walks_the_model_and_leaves_null_to_it():
    assert bool_problems(SourceCreate, {"url": "x", "name": "n", "enabled": True}) == []
    assert bool_problems(SourceCreate, {"url": "x", "name": "n", "enabled": "no"}) == [
        {"field": "enabled", "message": NOT_BOOLEAN}
    ]
    assert bool_problems(WebhookUpdate, {"enabled": None}) == []
    assert bool_problems(WebhookUpdate, {"enabled": 0}) == [{"field": "enabled", "message": NOT_BOOLEAN}]
    assert bool_problems(dict, {"enabled": "yes"}) == []  # not a model: its route judges it


@pytest.mark.parametrize("value", LAX_TRUE)
def test_a_source_refuses_a_boolean_given_as_anything_else(client, admin_headers, value):
    body = {"url": "http://127.0.0.1:9/feed.xml", "name": "Lax feed", "id": "lax-feed", "enabled": value}
    errors = _errors(client.post("/v1/sources", json=body, headers=admin_headers))
    assert {"field": "enabled", "message": NOT_BOOLEAN} in errors
    assert client.get("/v1/sources/lax-feed", headers=admin_headers).status_code == 404

    body["enabled"] = False
    r = client.post("/v1/sources", json=body, headers=admin_headers)
    assert r.status_code == 201, r.text
    assert r.json()["enabled"] is False
    errors = _errors(client.patch("/v1/sources/lax-feed", json={"enabled": value}, headers=admin_headers))
    assert errors == [{"field": "enabled", "message": NOT_BOOLEAN}]
    assert client.get("/v1/sources/lax-feed", headers=admin_headers).json()["enabled"] is False
    r = client.patch("/v1/sources/lax-feed", json={"enabled": True}, headers=admin_headers)
    assert r.status_code == 200 and r.json()["enabled"] is True


@pytest.mark.parametrize("value", ["yes", "false", 0, "off"])
def test_a_webhook_refuses_a_boolean_given_as_anything_else(client, admin_headers, receiver, value):
    hook = client.post("/v1/webhooks", json={"url": receiver.url()}, headers=admin_headers).json()
    path = f"/v1/webhooks/{hook['id']}"
    errors = _errors(client.patch(path, json={"enabled": value}, headers=admin_headers))
    assert errors == [{"field": "enabled", "message": NOT_BOOLEAN}]
    assert client.get(path, headers=admin_headers).json()["enabled"] is True
    r = client.patch(path, json={"enabled": False}, headers=admin_headers)
    assert r.status_code == 200 and r.json()["enabled"] is False


def test_other_problems_of_the_body_are_named_in_the_same_answer(client, admin_headers):
    body = {"url": "http://127.0.0.1:9/feed.xml", "name": "", "enabled": "yes"}
    fields = {e["field"] for e in _errors(client.post("/v1/sources", json=body, headers=admin_headers))}
    assert fields == {"enabled", "name"}


@pytest.mark.parametrize("value", ["yes", 1, "true"])
def test_a_signal_definition_refuses_require_fact_given_as_text_or_number(client, admin_headers, value):
    body = definition("lax-signal", require_fact=value)
    errors = _errors(client.post("/v1/signals", json=body, headers=admin_headers))
    assert [e["field"] for e in errors] == ["require_fact"]
    assert client.get("/v1/signals/lax-signal").status_code == 404


def test_query_parameters_still_read_true_and_false(client, admin_headers):
    body = {"url": "http://127.0.0.1:9/feed.xml", "name": "Gone feed", "id": "gone-feed"}
    assert client.post("/v1/sources", json=body, headers=admin_headers).status_code == 201
    assert client.delete("/v1/sources/gone-feed", headers=admin_headers).status_code == 200
    removed = client.get("/v1/sources?removed=true&limit=500", headers=admin_headers)
    kept = client.get("/v1/sources?removed=false&limit=500", headers=admin_headers)
    assert removed.status_code == kept.status_code == 200
    assert [s["id"] for s in removed.json()["items"]] == ["gone-feed"]
    assert "gone-feed" not in {s["id"] for s in kept.json()["items"]}
