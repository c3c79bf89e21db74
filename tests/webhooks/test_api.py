"""The webhooks API: subscriptions, secrets shown once, rotation, test sends, the delivery log, errors."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from standardwebhooks import Webhook as StandardWebhook

from chipwatch.db import session_scope
from chipwatch.outbox.models import EVENT_TYPES
from chipwatch.signals.models import Signal
from tests.fixtures.webhooks import Reply, deliver, health_event, set_env

PROBLEM = "application/problem+json"


def _create(client, headers, url, **body):
    r = client.post("/v1/webhooks", json={"url": url, **body}, headers=headers)
    assert r.status_code == 201, r.text
    return r.json()


def _problem(r, status: int) -> dict:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith(PROBLEM)
    body = r.json()
    assert body["status"] == status
    return body


def test_create_shows_the_secret_once(client, admin_headers, receiver):
    created = _create(client, admin_headers, receiver.url(), description="ops channel")
    assert created["secret"].startswith("whsec_")
    assert created["id"].startswith("wh_") and created["enabled"] is True
    # By default an endpoint gets every event type but webhook.test (sent only when asked for).
    assert created["event_types"] == [t for t in EVENT_TYPES if t != "webhook.test"]
    assert {"signal.status_changed", "source.health_changed", "fact.changed"} <= set(created["event_types"])
    shown = client.get(f"/v1/webhooks/{created['id']}", headers=admin_headers).json()
    assert "secret" not in shown and shown["description"] == "ops channel"
    assert shown["created_at"].endswith("Z") or shown["created_at"].endswith("+00:00")
    listed = client.get("/v1/webhooks", headers=admin_headers).json()
    assert [w["id"] for w in listed["items"]] == [created["id"]]
    assert all("secret" not in w for w in listed["items"])
    assert created["secret"] not in client.get("/v1/webhooks", headers=admin_headers).text


def test_list_is_paginated_in_creation_order(client, admin_headers, receiver):
    ids = [_create(client, admin_headers, receiver.url(f"/{i}"))["id"] for i in range(5)]
    seen, cursor = [], None
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = client.get("/v1/webhooks", params=params, headers=admin_headers).json()
        seen += [w["id"] for w in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == ids


def test_patch_and_delete(client, admin_headers, receiver):
    hook = _create(client, admin_headers, receiver.url())
    r = client.patch(
        f"/v1/webhooks/{hook['id']}",
        json={"event_types": ["source.health_changed"], "description": None, "enabled": False},
        headers=admin_headers,
    )
    assert r.status_code == 200, r.text
    assert r.json()["event_types"] == ["source.health_changed"]
    assert r.json()["enabled"] is False and r.json()["disabled_reason"]
    r = client.patch(f"/v1/webhooks/{hook['id']}", json={"enabled": True}, headers=admin_headers)
    assert r.json()["enabled"] is True and r.json()["disabled_reason"] is None
    # nulls for fields an endpoint cannot be without are refused, each named, with a bad event type too
    nulls = {"url": None, "event_types": None, "enabled": None}
    r = client.patch(f"/v1/webhooks/{hook['id']}", json=nulls, headers=admin_headers)
    assert r.status_code == 422
    assert {e["field"]: e["message"] for e in r.json()["errors"]} == dict.fromkeys(nulls, "must not be null")
    r = client.patch(f"/v1/webhooks/{hook['id']}", json={"url": None, "signal_ids": ["no-such-signal"]},
                     headers=admin_headers)
    assert sorted(e["field"] for e in r.json()["errors"]) == ["signal_ids.0", "url"]
    kept = client.get(f"/v1/webhooks/{hook['id']}", headers=admin_headers).json()
    assert (kept["url"], kept["event_types"], kept["enabled"]) == (
        receiver.url(), ["source.health_changed"], True)
    assert client.delete(f"/v1/webhooks/{hook['id']}", headers=admin_headers).status_code == 204
    _problem(client.get(f"/v1/webhooks/{hook['id']}", headers=admin_headers), 404)
    _problem(client.delete(f"/v1/webhooks/{hook['id']}", headers=admin_headers), 404)


def test_every_route_needs_the_admin_token(client, admin_headers, receiver):
    hook = _create(client, admin_headers, receiver.url())
    wid = hook["id"]
    calls = [
        ("post", "/v1/webhooks", {"url": receiver.url()}),
        ("get", "/v1/webhooks", None),
        ("get", f"/v1/webhooks/{wid}", None),
        ("patch", f"/v1/webhooks/{wid}", {"description": "x"}),
        ("delete", f"/v1/webhooks/{wid}", None),
        ("post", f"/v1/webhooks/{wid}/rotate-secret", None),
        ("post", f"/v1/webhooks/{wid}/test", None),
        ("get", f"/v1/webhooks/{wid}/deliveries", None),
        ("post", f"/v1/webhooks/{wid}/deliveries/1/retry", None),
    ]
    for method, path, body in calls:
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            kwargs = {"headers": headers, **({"json": body} if body is not None else {})}
            r = getattr(client, method)(path, **kwargs)
            _problem(r, 401)
            assert r.headers["www-authenticate"] == "Bearer"
    assert client.get(f"/v1/webhooks/{wid}", headers=admin_headers).status_code == 200


@pytest.mark.parametrize(
    "method,path",
    [
        ("get", "/v1/webhooks/wh_missing"),
        ("patch", "/v1/webhooks/wh_missing"),
        ("delete", "/v1/webhooks/wh_missing"),
        ("post", "/v1/webhooks/wh_missing/rotate-secret"),
        ("post", "/v1/webhooks/wh_missing/test"),
        ("get", "/v1/webhooks/wh_missing/deliveries"),
        ("post", "/v1/webhooks/wh_missing/deliveries/1/retry"),
    ],
)
def test_unknown_webhook_is_problem_404(client, admin_headers, method, path):
    kwargs = {"json": {}} if method == "patch" else {}
    body = _problem(getattr(client, method)(path, headers=admin_headers, **kwargs), 404)
    assert "wh_missing" in body["detail"]


def test_unknown_delivery_is_problem_404(client, admin_headers, receiver):
    hook = _create(client, admin_headers, receiver.url())
    r = client.post(f"/v1/webhooks/{hook['id']}/deliveries/999/retry", headers=admin_headers)
    body = _problem(r, 404)
    assert "999" in body["detail"]


@pytest.mark.parametrize(
    "body,field",
    [
        ({"event_types": ["signal.exploded"]}, "event_types"),
        ({"event_types": []}, "event_types"),
        ({"signal_ids": ["no-such-signal"]}, "signal_ids"),
        ({"url": "ftp://example.com/hook"}, "url"),
        ({"url": "not a url"}, "url"),
        ({"url": "http://no-such-host.invalid/hook"}, "url"),
        ({"colour": "blue"}, "colour"),
    ],
)
def test_invalid_subscription_is_problem_422_naming_the_field(client, admin_headers, receiver, body, field):
    r = client.post("/v1/webhooks", json={"url": receiver.url(), **body}, headers=admin_headers)
    problem = _problem(r, 422)
    assert field in [e["field"] for e in problem["errors"]] or problem["detail"].startswith(field)


def test_signal_ids_must_exist(client, admin_headers, receiver):
    with session_scope() as session:
        session.add(Signal(id="wh-api-signal", question="Q?", opened_on=datetime(2026, 1, 1).date()))
    hook = _create(client, admin_headers, receiver.url(), signal_ids=["wh-api-signal"])
    assert hook["signal_ids"] == ["wh-api-signal"]
    r = client.post(
        "/v1/webhooks",
        json={"url": receiver.url(), "signal_ids": ["wh-api-signal", "nope"]},
        headers=admin_headers,
    )
    assert "nope" in _problem(r, 422)["detail"]


def test_an_event_type_or_signal_id_given_twice_is_refused_naming_its_place(client, admin_headers, receiver):
    with session_scope() as session:
        session.add(Signal(id="wh-twice-signal", question="Q?", opened_on=datetime(2026, 1, 1).date()))
    twice = {
        "event_types": ["signal.status_changed", "signal.evidence_added", "signal.status_changed"],
        "signal_ids": ["wh-twice-signal", " wh-twice-signal"],
    }
    r = client.post("/v1/webhooks", json={"url": receiver.url(), **twice}, headers=admin_headers)
    assert _problem(r, 422)["errors"] == [
        {"field": "event_types.2", "message": "given twice (first at event_types.0)"},
        {"field": "signal_ids.1", "message": "given twice (first at signal_ids.0)"},
    ]
    assert client.get("/v1/webhooks", headers=admin_headers).json()["items"] == []

    hook = _create(client, admin_headers, receiver.url(), event_types=["signal.status_changed"])
    path = f"/v1/webhooks/{hook['id']}"
    r = client.patch(path, json={"event_types": ["signal.status_changed"] * 2}, headers=admin_headers)
    assert _problem(r, 422)["errors"] == [
        {"field": "event_types.1", "message": "given twice (first at event_types.0)"}
    ]
    r = client.patch(path, json={"signal_ids": ["wh-twice-signal", "wh-twice-signal"]}, headers=admin_headers)
    assert _problem(r, 422)["errors"] == [
        {"field": "signal_ids.1", "message": "given twice (first at signal_ids.0)"}
    ]
    # A repeat beside a field the request layer refuses is named in the same answer.
    both = {"event_types": ["signal.status_changed"] * 2, "url": 5}
    r = client.patch(path, json=both, headers=admin_headers)
    assert {e["field"] for e in _problem(r, 422)["errors"]} == {"url", "event_types.1"}
    stored = client.get(path, headers=admin_headers).json()
    assert (stored["event_types"], stored["signal_ids"]) == (["signal.status_changed"], [])


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/hook",
        "http://[::1]/hook",
        "http://[::ffff:127.0.0.1]/hook",
        "http://2130706433/hook",
        "http://10.0.0.1/hook",
        "http://169.254.169.254/latest/meta-data/",
        "http://0x7f.1/hook",
        "http://localhost:8080/hook",
    ],
)
def test_internal_targets_are_refused_at_subscription(client, admin_headers, monkeypatch, url):
    set_env(monkeypatch, allow_private_networks="0")
    problem = _problem(client.post("/v1/webhooks", json={"url": url}, headers=admin_headers), 422)
    assert problem["errors"][0]["field"] == "url"
    assert "refusing" in problem["detail"]
    # The same guard applies when a subscription's URL is changed.
    set_env(monkeypatch, allow_private_networks="1")
    hook = _create(client, admin_headers, "http://127.0.0.1:9/hook")
    set_env(monkeypatch, allow_private_networks="0")
    r = client.patch(f"/v1/webhooks/{hook['id']}", json={"url": url}, headers=admin_headers)
    _problem(r, 422)


def test_rotate_secret_returns_the_new_secret_once(client, admin_headers, receiver):
    hook = _create(client, admin_headers, receiver.url())
    r = client.post(f"/v1/webhooks/{hook['id']}/rotate-secret", headers=admin_headers)
    assert r.status_code == 200, r.text
    rotated = r.json()
    assert rotated["secret"].startswith("whsec_") and rotated["secret"] != hook["secret"]
    expires = datetime.fromisoformat(rotated["previous_secret_expires_at"])
    assert timedelta(hours=23, minutes=59) < expires - datetime.now(UTC) <= timedelta(hours=24)
    shown = client.get(f"/v1/webhooks/{hook['id']}", headers=admin_headers)
    assert rotated["secret"] not in shown.text and hook["secret"] not in shown.text


def test_test_send_reaches_only_that_endpoint_and_is_logged(client, admin_headers, receiver):
    one = _create(client, admin_headers, receiver.url("/one"))
    types = ["webhook.test", "source.health_changed"]
    _create(client, admin_headers, receiver.url("/two"), event_types=types)
    r = client.post(f"/v1/webhooks/{one['id']}/test", json={"message": "ping"}, headers=admin_headers)
    assert r.status_code == 202, r.text
    queued = r.json()
    deliver()
    got = receiver.wait_for(1, "/one")
    assert receiver.at("/two") == []
    assert got[0].headers["webhook-id"] == queued["msg_id"]
    payload = StandardWebhook(one["secret"]).verify(got[0].body, got[0].headers)
    assert payload["type"] == "webhook.test"
    assert payload["data"] == {"webhook_id": one["id"], "message": "ping"}
    log = client.get(f"/v1/webhooks/{one['id']}/deliveries", headers=admin_headers).json()
    assert [d["id"] for d in log["items"]] == [queued["delivery_id"]]
    entry = log["items"][0]
    assert entry["status"] == "succeeded" and entry["msg_id"] == queued["msg_id"]
    attempt = entry["attempt_log"][0]
    assert attempt["status_code"] == 204 and attempt["latency_ms"] > 0 and attempt["error"] is None
    assert attempt["attempted_at"]


def test_test_send_to_a_disabled_endpoint_is_409(client, admin_headers, receiver):
    hook = _create(client, admin_headers, receiver.url())
    client.patch(f"/v1/webhooks/{hook['id']}", json={"enabled": False}, headers=admin_headers)
    _problem(client.post(f"/v1/webhooks/{hook['id']}/test", headers=admin_headers), 409)


def test_delivery_log_pages_newest_first_and_filters_by_status(client, admin_headers, receiver):
    hook = _create(client, admin_headers, receiver.url("/log"))
    receiver.script("/log", [Reply(204), Reply(500), Reply(204), Reply(500), Reply(204)])
    queued = [client.post(f"/v1/webhooks/{hook['id']}/test", headers=admin_headers).json() for _ in range(5)]
    deliver(worker_id="t", lease_s=30)
    assert len(receiver.wait_for(5, "/log")) == 5
    seen, cursor = [], None
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        r = client.get(f"/v1/webhooks/{hook['id']}/deliveries", params=params, headers=admin_headers)
        page = r.json()
        seen += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert [d["id"] for d in seen] == sorted((q["delivery_id"] for q in queued), reverse=True)
    pending = client.get(
        f"/v1/webhooks/{hook['id']}/deliveries", params={"status": "pending"}, headers=admin_headers
    ).json()["items"]
    assert len(pending) == 2 and all(d["attempt_log"][0]["error"] == "HTTP 500" for d in pending)
    r = client.get(f"/v1/webhooks/{hook['id']}/deliveries", params={"status": "lost"}, headers=admin_headers)
    _problem(r, 422)
    r = client.get(f"/v1/webhooks/{hook['id']}/deliveries", params={"cursor": "%%%"}, headers=admin_headers)
    _problem(r, 422)


def test_manual_retry_requeues_and_replays(client, admin_headers, receiver):
    hook = _create(client, admin_headers, receiver.url("/r"), event_types=["source.health_changed"])
    health_event()
    deliver()
    first = receiver.wait_for(1, "/r")[0]
    delivery = client.get(f"/v1/webhooks/{hook['id']}/deliveries", headers=admin_headers).json()["items"][0]
    assert delivery["status"] == "succeeded"
    r = client.post(f"/v1/webhooks/{hook['id']}/deliveries/{delivery['id']}/retry", headers=admin_headers)
    assert r.status_code == 202, r.text
    assert r.json()["status"] == "pending" and r.json()["id"] == delivery["id"]
    deliver()
    again = receiver.wait_for(2, "/r")[1]
    assert again.headers["webhook-id"] == first.headers["webhook-id"]
    after = client.get(f"/v1/webhooks/{hook['id']}/deliveries", headers=admin_headers).json()["items"][0]
    assert after["status"] == "succeeded" and after["attempts"] == 2 and len(after["attempt_log"]) == 2


def test_webhooks_are_in_the_openapi_document(client):
    paths = client.get("/openapi.json").json()["paths"]
    for path in ("/v1/webhooks", "/v1/webhooks/{webhook_id}", "/v1/webhooks/{webhook_id}/rotate-secret",
                 "/v1/webhooks/{webhook_id}/test", "/v1/webhooks/{webhook_id}/deliveries",
                 "/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry"):
        assert path in paths
        for op in paths[path].values():
            assert op.get("description") or op.get("summary")
