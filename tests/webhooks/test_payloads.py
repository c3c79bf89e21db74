"""Real payloads, built by the producers' functions from table rows and delivered over HTTP, validate
against schema/events/<type>.schema.json."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import jsonschema
import pytest
from standardwebhooks import Webhook as StandardWebhook

from chipwatch.candidates.events import candidate_created_data
from chipwatch.candidates.models import Candidate, CandidateItem
from chipwatch.db import session_scope
from chipwatch.knowledge.history import record_change
from chipwatch.outbox.emit import emit
from chipwatch.outbox.models import EVENT_TYPES
from chipwatch.signals.events import deadline_approaching_data, evidence_added_data, status_changed_data
from chipwatch.signals.models import Evidence, Signal, SignalHistory
from chipwatch.sources.events import health_event_data
from chipwatch.sources.models import Source
from chipwatch.webhooks import endpoints
from tests.fixtures.webhooks import deliver, subscribe

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "schema" / "events"
FORMATS = jsonschema.FormatChecker()


@FORMATS.checks("date-time", raises=ValueError)
def _date_time(value: object) -> bool:
    # RFC 3339 needs an offset; fromisoformat accepts the rest of the grammar in 3.11.
    return not isinstance(value, str) or datetime.fromisoformat(value).tzinfo is not None


def validator(event_type: str) -> jsonschema.Draft202012Validator:
    schema = json.loads((SCHEMA_DIR / f"{event_type}.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema, format_checker=FORMATS)


def test_there_is_one_schema_per_event_type():
    assert sorted(p.name for p in SCHEMA_DIR.glob("*.schema.json")) == sorted(
        f"{t}.schema.json" for t in EVENT_TYPES
    )
    for t in EVENT_TYPES:
        schema = json.loads((SCHEMA_DIR / f"{t}.schema.json").read_text())
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["properties"]["type"] == {"const": t, "description": "event type"}


@pytest.fixture
def signal_change(db):
    """A resolved signal with its history row and two pieces of deciding evidence, committed."""
    now = datetime.now(UTC)
    with session_scope() as session:
        source = Source(id="wh-press", name="Example Press", url="https://example.com/feed", trust="press")
        signal = Signal(
            id="wh-jalapeno-repro",
            question="Has an independent party reproduced the 104.3x figure?",
            opened_on=date(2026, 8, 25),
            deadline=now.date() + timedelta(days=10),
            status="resolved",
            outcome="yes",
            version=1,
            resolved_at=now,
            known_at=now - timedelta(days=1),
        )
        session.add_all([source, signal])
        session.flush()
        ev1 = Evidence(signal_id=signal.id, ref_kind="item", ref_id="4711", side="yes", condition_index=0,
                       reason="mentions jalapeno and InferenceX", trust="press", source_id=source.id,
                       title="Lab reproduces 104x", url="https://example.com/a",
                       published_at=now - timedelta(days=1))
        ev2 = Evidence(signal_id=signal.id, ref_kind="result", ref_id="jalapeno-inferencex-1", side="yes",
                       condition_index=1, reason=None, trust=None, source_id=None, title=None, url=None,
                       published_at=None)
        session.add_all([ev1, ev2])
        session.flush()
        history = SignalHistory(signal_id=signal.id, version=1, from_status="open", to_status="resolved",
                                from_outcome=None, to_outcome="yes", cause="rule:0", note=None,
                                evidence_ids=[ev1.id, ev2.id], known_at=now - timedelta(days=1))
        session.add(history)
        session.flush()
    return signal, history, [ev1, ev2], source


def _produce_every_event(signal, history, evidence, source, webhook_id):
    """Emit one event of each type, with data from the producers' builder functions."""
    with session_scope() as session:
        emit(session, "signal.status_changed", status_changed_data(signal, history, evidence),
             signal_id=signal.id)
        emit(session, "signal.evidence_added", evidence_added_data(signal, evidence[0]),
             signal_id=signal.id)
        emit(session, "signal.deadline_approaching",
             deadline_approaching_data(signal, today=datetime.now(UTC).date()), signal_id=signal.id)
        source.last_error, source.consecutive_failures = "HTTP 503", 4
        source.last_checked_at = datetime.now(UTC)
        emit(session, "source.health_changed", health_event_data(source),
             source_id=source.id)
        record_change(session=session, kind="chips", fact_id="gb300", action="updated", cause="api",
                      changes={"nominal_power_w": (1400.0, 1450.0)}, actor="admin")
        endpoints.send_test(session=session, endpoint_id=webhook_id, message="hello")
        candidate = Candidate(id=7, kind="funding", fact_key="k" * 64, status="pending",
                              fact={"vendor_name": "Etched", "amount": 5e8, "currency": "USD"},
                              confidence=0.8, verification="witnessed", independent_sources=2,
                              created_at=datetime.now(UTC))
        quote = CandidateItem(item_id=41, source_id=source.id, trust="press", quote="Etched raises $500M")
        emit(session, "candidate.created", candidate_created_data(candidate, [quote]))


def test_delivered_payloads_validate_against_their_schemas(signal_change, receiver):
    signal, history, evidence, source = signal_change
    hook = subscribe(receiver.url("/schema"), event_types=list(EVENT_TYPES))
    _produce_every_event(signal, history, evidence, source, hook.id)
    deliver()
    got = receiver.wait_for(len(EVENT_TYPES), "/schema")
    payloads = {}
    for request in got:
        payload = StandardWebhook(hook.secret).verify(request.body, request.headers)
        errors = [e.message for e in validator(payload["type"]).iter_errors(payload)]
        assert errors == [], (payload["type"], errors)
        payloads[payload["type"]] = payload
    assert sorted(payloads) == sorted(EVENT_TYPES)

    changed = payloads["signal.status_changed"]["data"]
    assert changed["signal_id"] == signal.id and changed["version"] == 1
    assert changed["previous"] == {"status": "open", "outcome": None}
    assert changed["current"] == {"status": "resolved", "outcome": "yes"}
    assert changed["cause"] == "rule:0" and changed["resolved_at"] and changed["known_at"]
    assert [e["ref_id"] for e in changed["evidence"]] == ["4711", "jalapeno-inferencex-1"]
    assert payloads["signal.deadline_approaching"]["data"]["days_left"] == 10
    assert payloads["source.health_changed"]["data"]["healthy"] is False
    fact = payloads["fact.changed"]["data"]
    assert (fact["kind"], fact["fact_id"], fact["action"]) == ("chips", "gb300", "updated")
    assert fact["cause"] == "api"
    assert fact["changes"] == [{"field": "nominal_power_w", "old": 1400.0, "new": 1450.0}]
    assert payloads["webhook.test"]["data"] == {"webhook_id": hook.id, "message": "hello"}
    proposed = payloads["candidate.created"]["data"]
    assert (proposed["candidate_id"], proposed["kind"]) == (7, "funding")
    assert proposed["verification"] == "witnessed"
    assert proposed["items"] == [{"item_id": 41, "source_id": "wh-press", "trust": "press",
                                  "quote": "Etched raises $500M"}]


def test_reopened_signal_has_no_resolved_at(signal_change):
    signal, history, evidence, _ = signal_change
    history.from_status, history.to_status = "resolved", "open"
    history.from_outcome, history.to_outcome, history.cause, history.version = "yes", None, "manual", 2
    data = status_changed_data(signal, history, [])
    payload = {"type": "signal.status_changed", "timestamp": "2026-11-29T12:00:00Z", "data": data}
    assert list(validator("signal.status_changed").iter_errors(payload)) == []
    assert data["resolved_at"] is None and data["current"] == {"status": "open", "outcome": None}


@pytest.mark.parametrize(
    "event_type,breakage",
    [
        ("signal.status_changed", lambda d: d.pop("version")),
        ("signal.status_changed", lambda d: d["current"].update(status="closed")),
        ("signal.status_changed", lambda d: d.update(cause="because")),
        ("signal.status_changed", lambda d: d.update(known_at="yesterday")),
        ("signal.evidence_added", lambda d: d["evidence"].pop("side")),
        ("source.health_changed", lambda d: d.update(healthy="no")),
        ("webhook.test", lambda d: d.update(extra=1)),
    ],
)
def test_schemas_reject_broken_payloads(signal_change, event_type, breakage):
    signal, history, evidence, source = signal_change
    source.last_checked_at = None
    data = {
        "signal.status_changed": lambda: status_changed_data(signal, history, evidence),
        "signal.evidence_added": lambda: evidence_added_data(signal, evidence[0]),
        "source.health_changed": lambda: health_event_data(source),
        "webhook.test": lambda: endpoints.webhook_test_data(webhook_id="wh_1", message="m"),
    }[event_type]()
    payload = {"type": event_type, "timestamp": "2026-11-29T12:00:00Z", "data": data}
    assert list(validator(event_type).iter_errors(payload)) == []
    breakage(data)
    assert list(validator(event_type).iter_errors(payload)) != []
