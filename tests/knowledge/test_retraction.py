"""Retracting a knowledge-base fact: kept, hidden from lists, in its history with a fact.changed event,
undone in the signals it decided; and undoing the retraction."""

from __future__ import annotations

from sqlalchemy import select

from chipwatch.db import session_scope
from chipwatch.outbox.models import Event
from chipwatch.seeds import load_seeds
from chipwatch.signals.models import Evidence, SignalHistory

RESULT = "r01-jalapeno-perf-per-watt"


def _events(type_: str) -> list[dict]:
    with session_scope(write=False) as session:
        return [e.data for e in session.scalars(select(Event).where(Event.type == type_).order_by(Event.id))]


def _ids(client, path: str, **params) -> list[str]:
    return [row["id"] for row in client.get(path, params={"limit": 500, **params}).json()["items"]]


def test_delete_retracts_the_fact_and_keeps_it(client, admin_headers):
    assert RESULT in _ids(client, "/v1/results")
    resp = client.delete(f"/v1/results/{RESULT}", params={"reason": "figure misread from the slide"},
                         headers=admin_headers)
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert body["id"] == RESULT and body["retracted_at"]
    assert body["retraction_reason"] == "figure misread from the slide"

    assert RESULT not in _ids(client, "/v1/results")
    assert RESULT not in _ids(client, "/v1/results", chip="jalapeno")
    assert _ids(client, "/v1/results", retracted="true") == [RESULT]
    shown = client.get(f"/v1/results/{RESULT}").json()
    assert shown["retracted_at"] == body["retracted_at"] and shown["metric"] == body["metric"]

    (entry,) = client.get(f"/v1/results/{RESULT}/history").json()["items"][-1:]
    what = (entry["action"], entry["cause"], entry["actor"], entry["field"])
    assert what == ("retracted", "api", "admin", None)
    assert entry["new_value"] == {"reason": "figure misread from the slide"}
    (event,) = _events("fact.changed")
    assert (event["kind"], event["fact_id"], event["action"], event["cause"]) == (
        "results", RESULT, "retracted", "api")
    assert event["history_ids"] == [entry["id"]]

    again = client.delete(f"/v1/results/{RESULT}", headers=admin_headers)
    assert again.status_code == 409 and "was retracted at" in again.json()["detail"]
    patch = client.patch(f"/v1/results/{RESULT}", json={"value": 2.0}, headers=admin_headers)
    assert patch.status_code == 409 and "restore it first" in patch.json()["detail"]
    assert client.get("/v1/race").json()["headline_results"] is not None
    assert RESULT not in {r["id"] for r in client.get("/v1/race").json()["headline_results"]}


def test_restore_puts_the_fact_back_with_history(client, admin_headers):
    client.delete(f"/v1/results/{RESULT}", headers=admin_headers)
    resp = client.post(f"/v1/results/{RESULT}/restore", headers=admin_headers)
    assert resp.status_code == 200 and resp.json()["retracted_at"] is None
    assert RESULT in _ids(client, "/v1/results")
    actions = [h["action"] for h in client.get(f"/v1/results/{RESULT}/history").json()["items"]]
    assert actions[-2:] == ["retracted", "restored"]
    assert [e["action"] for e in _events("fact.changed")] == ["retracted", "restored"]
    assert client.post(f"/v1/results/{RESULT}/restore", headers=admin_headers).status_code == 409
    assert client.delete("/v1/results/no-such-result", headers=admin_headers).status_code == 404
    assert client.delete(f"/v1/results/{RESULT}").status_code == 401


def test_a_seed_load_does_not_bring_a_retracted_fact_back(client, admin_headers):
    client.delete(f"/v1/results/{RESULT}", headers=admin_headers)
    with session_scope() as session:
        load_seeds(session=session)
    assert client.get(f"/v1/results/{RESULT}").json()["retracted_at"] is not None
    assert RESULT not in _ids(client, "/v1/results")


def test_an_entity_still_named_cannot_be_retracted_and_a_retracted_one_cannot_be_named(client, admin_headers):
    refused = client.delete("/v1/chips/jalapeno", headers=admin_headers)
    assert refused.status_code == 409
    detail = refused.json()["detail"]
    assert f"results/{RESULT}" in detail and "signals/" in detail
    assert detail.endswith("retract or change those first")

    ghost = {"id": "ghost-chip", "name": "Ghost"}
    assert client.post("/v1/chips", json=ghost, headers=admin_headers).status_code == 201
    assert client.delete("/v1/chips/ghost-chip", headers=admin_headers).status_code == 200
    assert "ghost-chip" not in _ids(client, "/v1/chips")
    body = {"id": "ghost-result", "metric": "throughput", "chip_ids": ["ghost-chip"]}
    resp = client.post("/v1/results", json=body, headers=admin_headers)
    assert resp.status_code == 422
    assert resp.json()["errors"] == [{"field": "chip_ids.0", "message": "chip 'ghost-chip' was retracted"}]
    # A filter naming a retracted entity still answers (its facts may be listed with ?retracted=true).
    assert client.get("/v1/results", params={"chip": "ghost-chip"}).status_code == 200


SIGNAL = {
    "id": "retraction-watch",
    "question": "Has a retraction-test figure been published for Jalapeño?",
    "opened_on": "2026-11-01",
    "review": "auto",
    "subjects": ["jalapeno"],
    "yes_when": [{"result": {"chip": "jalapeno", "metric": "retraction_test_metric"}}],
}


def _result(id_: str) -> dict:
    return {"id": id_, "metric": "retraction_test_metric", "chip_ids": ["jalapeno"], "value": 1.0,
            "published_on": "2026-11-10"}


def _signal(client) -> dict:
    return client.get(f"/v1/signals/{SIGNAL['id']}").json()


def _history(signal_id: str) -> list[SignalHistory]:
    with session_scope(write=False) as session:
        stmt = select(SignalHistory).where(SignalHistory.signal_id == signal_id)
        return list(session.scalars(stmt.order_by(SignalHistory.version)))


def _evidence_refs(signal_id: str) -> list[str]:
    with session_scope(write=False) as session:
        stmt = select(Evidence.ref_id).where(Evidence.signal_id == signal_id).order_by(Evidence.id)
        return list(session.scalars(stmt))


def test_a_signal_decided_by_a_retracted_result_is_reopened(client, admin_headers):
    assert client.post("/v1/signals", json=SIGNAL, headers=admin_headers).status_code == 201
    assert client.post("/v1/results", json=_result("rt-a"), headers=admin_headers).status_code == 201
    assert (_signal(client)["status"], _signal(client)["outcome"]) == ("resolved", "yes")

    assert client.delete("/v1/results/rt-a", headers=admin_headers).status_code == 200
    signal = _signal(client)
    assert (signal["status"], signal["outcome"]) == ("open", None)
    last = _history(SIGNAL["id"])[-1]
    assert (last.from_status, last.to_status, last.cause) == ("resolved", "open", "retraction")
    assert last.note == "result rt-a retracted: the evidence that decided the last move is withdrawn"
    assert _evidence_refs(SIGNAL["id"]) == ["rt-a"]  # the move that cites it keeps it
    moved = [e for e in _events("signal.status_changed") if e["signal_id"] == SIGNAL["id"]]
    assert moved[-1]["cause"] == "retraction" and moved[-1]["current"]["status"] == "open"
    # Once retracted, the fact decides nothing again: a re-evaluation of the signal finds no match.
    assert client.patch(f"/v1/signals/{SIGNAL['id']}", json={"question": SIGNAL["question"] + " (2)"},
                        headers=admin_headers).status_code == 200
    assert _signal(client)["status"] == "open"


def test_other_standing_evidence_decides_again_at_once(client, admin_headers):
    client.post("/v1/signals", json=SIGNAL, headers=admin_headers)
    client.post("/v1/results", json=_result("rt-a"), headers=admin_headers)
    client.post("/v1/results", json=_result("rt-b"), headers=admin_headers)  # accrues on the resolved signal
    assert _evidence_refs(SIGNAL["id"]) == ["rt-a", "rt-b"]

    client.delete("/v1/results/rt-a", headers=admin_headers)
    signal = _signal(client)
    assert (signal["status"], signal["outcome"]) == ("resolved", "yes")
    reopened, resolved = _history(SIGNAL["id"])[-2:]
    assert reopened.cause == "retraction" and resolved.cause == "rule:0"
    with session_scope(write=False) as session:
        (b_id,) = session.scalars(select(Evidence.id).where(Evidence.ref_id == "rt-b")).all()
    assert resolved.evidence_ids == [b_id]


def test_retracting_evidence_no_move_used_only_drops_it(client, admin_headers):
    client.post("/v1/signals", json=SIGNAL, headers=admin_headers)
    client.post("/v1/results", json=_result("rt-a"), headers=admin_headers)
    client.post("/v1/results", json=_result("rt-b"), headers=admin_headers)
    versions = len(_history(SIGNAL["id"]))
    client.delete("/v1/results/rt-b", headers=admin_headers)
    assert _evidence_refs(SIGNAL["id"]) == ["rt-a"]
    assert len(_history(SIGNAL["id"])) == versions and _signal(client)["status"] == "resolved"
