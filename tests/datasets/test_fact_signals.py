"""Signals over knowledge-base facts, evaluated when a dataset is imported as when items arrive: a
deployment of a chip at a power and status, an MLPerf closed result for a chip on a model, a chip's
TDP that changed."""

from __future__ import annotations

import json

import jsonschema
from sqlalchemy import select

from chipwatch.db import session_scope
from chipwatch.knowledge.models import Deployment
from chipwatch.outbox.models import Event
from chipwatch.paths import SCHEMA_DIR
from chipwatch.signals.evaluation import evaluate_facts
from tests.fixtures.corpus import requires_corpus
from tests.fixtures.imports import CLUSTERS, EPOCH_NEW, EPOCH_OLD, MLPERF_V51, import_corpus

pytestmark = requires_corpus


def _signal(client, headers, signal_id: str, subjects: list[str], condition: dict) -> None:
    body = {
        "id": signal_id,
        "question": f"{signal_id}?",
        "opened_on": "2026-01-01",
        "review": "auto",
        "subjects": subjects,
        "yes_when": [condition],
    }
    r = client.post("/v1/signals", json=body, headers=headers)
    assert r.status_code == 201, r.text
    assert r.json()["status"] == "open"


def _events(event_type: str, signal_id: str) -> list[dict]:
    with session_scope(write=False) as session:
        stmt = select(Event).where(Event.type == event_type, Event.signal_id == signal_id).order_by(Event.id)
        return [event.data for event in session.scalars(stmt)]


def _validator(event_type: str) -> jsonschema.Draft202012Validator:
    schema = json.loads((SCHEMA_DIR / "events" / f"{event_type}.schema.json").read_text())
    return jsonschema.Draft202012Validator(schema)


def _state(client, signal_id: str) -> tuple[str, str | None, list[dict]]:
    body = client.get(f"/v1/signals/{signal_id}").json()
    return body["status"], body["outcome"], body["evidence"]


def test_a_deployment_of_a_chip_at_power_and_status_resolves_on_import(client, admin_headers):
    import_corpus("epoch-ml-hardware", EPOCH_NEW)
    condition = {
        "deployment": {"chip": "nvidia-h100-sxm5-80gb", "capacity_mw_gte": 100, "status": "operational"}
    }
    _signal(client, admin_headers, "h100-100mw-operational", ["nvidia-h100-sxm5-80gb"], condition)
    import_corpus("epoch-gpu-clusters", CLUSTERS)
    status, outcome, evidence = _state(client, "h100-100mw-operational")
    assert (status, outcome) == ("resolved", "yes")
    assert evidence and all(e["ref_kind"] == "deployment" for e in evidence)
    reasons = " ".join(e["reason"] for e in evidence)
    assert "status operational" in reasons and "capacity 150 MW >= 100 MW" in reasons  # Colossus Phase 1


def test_a_planned_deployment_does_not_satisfy_operational(client, admin_headers):
    import_corpus("epoch-ml-hardware", EPOCH_NEW)
    # Epoch's only GB200 clusters over 1 GW are planned (Colossus 2 Phase 2: 1409 MW)
    condition = {"deployment": {"chip": "gb200", "capacity_mw_gte": 1000, "status": "operational"}}
    _signal(client, admin_headers, "gb200-gw-operational", ["gb200"], condition)
    import_corpus("epoch-gpu-clusters", CLUSTERS)
    assert _state(client, "gb200-gw-operational")[:2] == ("open", None)


def test_an_mlperf_closed_result_for_a_chip_on_a_model(client, admin_headers):
    import_corpus("epoch-ml-hardware", EPOCH_NEW)
    condition = {
        "result": {
            "chip": "amd-instinct-mi300x",
            "benchmark": "mlperf-inference",
            "division": "closed",
            "model_name": "llama2-70b-99",
        }
    }
    _signal(client, admin_headers, "mi300x-mlperf-closed-llama", ["amd-instinct-mi300x"], condition)
    open_only = {
        "result": {
            "chip": "amd-instinct-mi355x",
            "benchmark": "mlperf-inference",
            "division": "closed",
            "model_name": "llama2-70b-99",
        }
    }
    _signal(client, admin_headers, "mi355x-mlperf-closed-llama", ["amd-instinct-mi355x"], open_only)
    import_corpus("mlperf-inference-summary", MLPERF_V51)
    status, outcome, evidence = _state(client, "mi300x-mlperf-closed-llama")
    assert (status, outcome) == ("resolved", "yes")
    assert {e["ref_kind"] for e in evidence} == {"result"}
    assert "closed division" in evidence[0]["reason"] and "model llama2-70b-99" in evidence[0]["reason"]
    # The MI355X ran llama2-70b-99 in the open division only (5.1-0098): no closed result, still open.
    assert _state(client, "mi355x-mlperf-closed-llama")[:2] == ("open", None)


def test_a_chip_tdp_change_resolves_a_change_condition(client, admin_headers):
    import_corpus("epoch-ml-hardware", EPOCH_OLD)
    tdp = {"change": {"kind": "chips", "fact": "google-tpu-v7-ironwood", "fields": ["nominal_power_w"]}}
    _signal(client, admin_headers, "tpu-v7-tdp-changed", ["google-tpu"], tdp)
    b200 = {"change": {"kind": "chips", "fact": "nvidia-b200", "fields": ["nominal_power_w"]}}
    _signal(client, admin_headers, "b200-tdp-changed", ["gb200"], b200)
    import_corpus("epoch-ml-hardware", EPOCH_NEW)
    status, outcome, evidence = _state(client, "tpu-v7-tdp-changed")
    assert (status, outcome) == ("resolved", "yes")
    (piece,) = evidence
    assert piece["ref_kind"] == "change"
    assert piece["reason"] == "chips google-tpu-v7-ironwood nominal_power_w 980 -> 960 (import)"
    assert _state(client, "b200-tdp-changed")[:2] == ("open", None)  # its TDP is the same in both exports
    # the events announcing it carry the change as evidence and keep to their published schemas
    for event_type in ("signal.evidence_added", "signal.status_changed"):
        (data,) = _events(event_type, "tpu-v7-tdp-changed")
        evidence = data["evidence"] if event_type == "signal.evidence_added" else data["evidence"][0]
        assert (evidence["ref_kind"], evidence["ref_id"]) == ("change", piece["ref_id"])
        payload = {"type": event_type, "timestamp": "2026-11-30T10:00:00Z", "data": data}
        assert list(_validator(event_type).iter_errors(payload)) == []


def test_a_change_condition_is_refused_naming_the_field(client, admin_headers):
    body = {
        "id": "bad-change",
        "question": "?",
        "opened_on": "2026-01-01",
        "review": "auto",
        "subjects": ["gb200"],
        "yes_when": [{"change": {"kind": "gpus", "fields": ["nominal_power_w"]}}],
    }
    r = client.post("/v1/signals", json=body, headers=admin_headers)
    assert r.status_code == 422
    assert r.json()["errors"][0]["field"] == "yes_when.0.change.kind"


def test_facts_of_chips_no_rule_names_are_counted_but_not_matched(client, admin_headers):
    """Evaluating every imported deployment against a rule on one chip: all are counted, and the
    matches are exactly the deployments of that chip at >= 100 MW and operational (read from the rows
    themselves), whatever the rows of other chips say."""
    import_corpus("epoch-ml-hardware", EPOCH_NEW)
    chip = "nvidia-h100-sxm5-80gb"
    condition = {"deployment": {"chip": chip, "capacity_mw_gte": 100, "status": "operational"}}
    _signal(client, admin_headers, "h100-100mw-operational", [chip], condition)
    import_corpus("epoch-gpu-clusters", CLUSTERS)
    with session_scope() as session:
        rows = list(session.scalars(select(Deployment)))
        expected = [
            row.id
            for row in rows
            if row.chip_id == chip
            and (row.capacity_mw or 0) >= 100
            and row.status == "operational"
            and row.retired_at is None
        ]
        report = evaluate_facts(session=session, kind="deployments", rows=rows)
    assert report.facts == len(rows) > 700
    assert report.matches == len(expected) > 0
