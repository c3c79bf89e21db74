"""Fact history: API edits recorded field by field with their cause, announced as ``fact.changed``."""

from __future__ import annotations

from datetime import date

from sqlalchemy import select

from chipwatch.db import session_scope
from chipwatch.knowledge.history import field_changes, list_history, record_change
from chipwatch.outbox.models import Event


def _fact_events() -> list[dict]:
    with session_scope(write=False) as session:
        stmt = select(Event).where(Event.type == "fact.changed").order_by(Event.id)
        return [e.data for e in session.scalars(stmt)]


def test_field_changes_compare_json_values():
    before = {"released_on": date(2025, 1, 2), "nominal_power_w": 700.0, "aliases": ["a"]}
    after = {"released_on": "2025-01-02", "nominal_power_w": 750.0, "aliases": ["a"], "memory_type": "HBM4"}
    assert field_changes(before, after) == {"nominal_power_w": (700.0, 750.0), "memory_type": (None, "HBM4")}


def test_patch_records_each_changed_field_and_one_event(client, admin_headers):
    body = {"nominal_power_w": 1450, "memory_type": "HBM3e", "notes": "Blackwell Ultra; GB300 NVL72 is its "
            "rack-scale system."}
    r = client.patch("/v1/chips/gb300", json=body, headers=admin_headers)
    assert r.status_code == 200, r.text
    page = client.get("/v1/chips/gb300/history").json()
    changes = [(h["action"], h["field"], h["old_value"], h["new_value"], h["cause"], h["actor"])
               for h in page["items"]]
    # notes was sent unchanged, so it is not history; fields come in the table's order
    assert changes == [
        ("updated", "memory_type", None, "HBM3e", "api", "admin"),
        ("updated", "nominal_power_w", 1400.0, 1450.0, "api", "admin"),
    ]
    (event,) = _fact_events()
    assert event["kind"] == "chips" and event["fact_id"] == "gb300" and event["action"] == "updated"
    assert event["changes"] == [
        {"field": "memory_type", "old": None, "new": "HBM3e"},
        {"field": "nominal_power_w", "old": 1400.0, "new": 1450.0},
    ]
    assert event["history_ids"] == [h["id"] for h in page["items"]]


def test_patch_that_changes_nothing_records_nothing(client, admin_headers):
    r = client.patch("/v1/chips/gb300", json={"nominal_power_w": 1400}, headers=admin_headers)
    assert r.status_code == 200
    assert client.get("/v1/chips/gb300/history").json()["items"] == []
    assert _fact_events() == []


def test_create_is_history_but_not_an_event(client, admin_headers):
    body = {"id": "test-vendor", "name": "Test Vendor"}
    assert client.post("/v1/vendors", json=body, headers=admin_headers).status_code == 201
    (entry,) = client.get("/v1/vendors/test-vendor/history").json()["items"]
    assert (entry["action"], entry["field"], entry["cause"]) == ("created", None, "api")
    assert _fact_events() == []


def test_history_pages_and_unknown_ids(client, admin_headers):
    for watts in (1401, 1402, 1403):
        client.patch("/v1/chips/gb300", json={"nominal_power_w": watts}, headers=admin_headers)
    first = client.get("/v1/chips/gb300/history", params={"limit": 2}).json()
    assert [h["new_value"] for h in first["items"]] == [1401.0, 1402.0]
    rest = client.get("/v1/chips/gb300/history", params={"cursor": first["next_cursor"]}).json()
    assert [h["new_value"] for h in rest["items"]] == [1403.0] and rest["next_cursor"] is None
    r = client.get("/v1/chips/no-such-chip/history")
    assert r.status_code == 404 and r.headers["content-type"].startswith("application/problem+json")
    assert r.json()["detail"] == "no chip or system with id 'no-such-chip'"  # as GET /v1/chips/{id} says
    # a seeded fact without changes has an empty history, not a 404
    assert client.get("/v1/deployments/" + _any_deployment(client) + "/history").json()["items"] == []


def _any_deployment(client) -> str:
    return client.get("/v1/deployments", params={"limit": 1}).json()["items"][0]["id"]


def test_retired_fact_keeps_history_and_announces(db):
    with session_scope() as session:
        record_change(session=session, kind="deployments", fact_id="some-cluster", action="retired",
                      cause="import", cause_ref="7", actor="import")
    with session_scope(write=False) as session:
        page = list_history(session=session, kind="deployments", fact_id="some-cluster", cursor=None,
                            limit=10)
    (entry,) = page["items"]
    assert (entry.action, entry.cause, entry.cause_ref) == ("retired", "import", "7")
    (event,) = _fact_events()
    assert event["action"] == "retired" and event["changes"] == [] and event["cause_ref"] == "7"
