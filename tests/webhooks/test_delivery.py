"""Delivery against real receivers on 127.0.0.1: signatures, retries, 410, 3xx, Retry-After, concurrency."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime, timedelta

from standardwebhooks import Webhook as StandardWebhook
from standardwebhooks.webhooks import WebhookVerificationError

from chipwatch.config import get_settings
from chipwatch.db import session_scope
from chipwatch.kit.retry_after import parse_retry_after
from chipwatch.metrics import REGISTRY
from chipwatch.signals.models import Signal
from chipwatch.webhooks import endpoints
from chipwatch.webhooks.dispatcher import Dispatcher
from chipwatch.webhooks.models import Endpoint
from tests.fixtures.webhooks import (
    Reply,
    deliver,
    deliveries,
    emit_event,
    endpoint_row,
    health_event,
    set_env,
    subscribe,
)


def test_delivery_is_signed_and_verifies(db, receiver):
    hook = subscribe(receiver.url("/signed"))
    event = health_event()
    stats = deliver()
    assert (stats.events, stats.deliveries_created, stats.succeeded) == (1, 1, 1)
    got = receiver.wait_for(1, "/signed")[0]
    assert got.headers["webhook-id"] == event.msg_id
    assert got.headers["content-type"] == "application/json"
    assert abs(int(got.headers["webhook-timestamp"]) - time.time()) < 30
    payload = StandardWebhook(hook.secret).verify(got.body, got.headers)
    assert payload["type"] == "source.health_changed"
    assert payload["data"]["source_id"] == "example"
    assert payload["timestamp"].endswith("Z")
    tampered = got.body.replace(b"HTTP 500", b"HTTP 200")
    try:
        StandardWebhook(hook.secret).verify(tampered, got.headers)
    except WebhookVerificationError:
        pass
    else:
        raise AssertionError("a changed body must not verify")


def test_fails_twice_then_accepts_three_attempts_one_webhook_id(db, receiver, monkeypatch):
    set_env(monkeypatch, webhook_retry_schedule_s="0,0,0")
    hook = subscribe(receiver.url("/flaky"))
    receiver.script("/flaky", [Reply(500), Reply(502), Reply(200, body=b"ok")])
    event = health_event()
    stats = deliver()
    got = receiver.wait_for(3, "/flaky")
    assert len(got) == 3 and stats.succeeded == 1 and stats.retried == 2
    assert {r.headers["webhook-id"] for r in got} == {event.msg_id}
    assert all(r.body == got[0].body for r in got)  # the same event, byte for byte
    for r in got:  # each attempt carries its own timestamp and a signature valid for it
        StandardWebhook(hook.secret).verify(r.body, r.headers)
    [delivery] = deliveries(hook.id)
    assert delivery["status"] == "succeeded" and delivery["attempts"] == 3
    assert [a["status_code"] for a in delivery["attempt_log"]] == [500, 502, 200]
    assert [a["error"] for a in delivery["attempt_log"]] == ["HTTP 500", "HTTP 502", None]
    assert endpoint_row(hook.id).failing_since is None


def test_schedule_runs_out_then_failed(db, receiver, monkeypatch):
    set_env(monkeypatch, webhook_retry_schedule_s="0,0")
    hook = subscribe(receiver.url("/down"))
    receiver.script("/down", [Reply(500)])
    health_event()
    stats = deliver()
    assert len(receiver.wait_for(2, "/down")) == 2
    assert stats.failed == 1
    [delivery] = deliveries(hook.id)
    assert delivery["status"] == "failed" and delivery["next_attempt_at"] is None
    assert endpoint_row(hook.id).enabled  # one failed delivery is not five days of failures


def test_failure_schedules_the_next_attempt_from_the_schedule(db, receiver, monkeypatch):
    set_env(monkeypatch, webhook_retry_schedule_s="0,300,1800")
    hook = subscribe(receiver.url("/later"))
    receiver.script("/later", [Reply(500)])
    health_event()
    before = datetime.now(UTC)
    deliver()
    [delivery] = deliveries(hook.id)
    assert delivery["status"] == "pending" and delivery["attempts"] == 1
    wait = delivery["next_attempt_at"] - before
    assert timedelta(seconds=299) < wait < timedelta(seconds=310)
    assert endpoint_row(hook.id).failing_since is not None


def _counter(outcome: str) -> float:
    return REGISTRY.get_sample_value("chipwatch_webhook_deliveries_total", {"outcome": outcome}) or 0.0


def test_410_disables_the_endpoint_and_says_so(db, receiver):
    hook = subscribe(receiver.url("/gone"))
    receiver.script("/gone", [Reply(410)])
    before = _counter("disabled"), _counter("failed")
    health_event()
    stats = deliver()
    assert stats.disabled == 1
    assert (_counter("disabled"), _counter("failed")) == (before[0] + 1, before[1] + 1)
    row = endpoint_row(hook.id)
    assert row.enabled is False and "410" in row.disabled_reason
    [delivery] = deliveries(hook.id)
    assert delivery["status"] == "failed" and "410" in delivery["last_error"]
    # Nothing more goes to a disabled endpoint.
    health_event()
    deliver()
    assert len(receiver.at("/gone")) == 1


def test_redirect_is_a_failure_and_is_not_followed(db, receiver, monkeypatch):
    set_env(monkeypatch, webhook_retry_schedule_s="0,60")
    hook = subscribe(receiver.url("/moved"))
    receiver.script("/moved", [Reply(302, headers={"location": receiver.url("/elsewhere")})])
    health_event()
    deliver()
    assert len(receiver.wait_for(1, "/moved")) == 1
    time.sleep(0.2)
    assert receiver.at("/elsewhere") == []
    [delivery] = deliveries(hook.id)
    assert delivery["status"] == "pending" and delivery["last_status_code"] == 302
    assert "not followed" in delivery["last_error"] and "/elsewhere" in delivery["last_error"]


def test_429_retry_after_is_honoured(db, receiver, monkeypatch):
    set_env(monkeypatch, webhook_retry_schedule_s="0,5,5")
    hook = subscribe(receiver.url("/busy"))
    receiver.script("/busy", [Reply(429, headers={"retry-after": "120"})])
    health_event()
    before = datetime.now(UTC)
    deliver()
    [delivery] = deliveries(hook.id)
    assert delivery["status"] == "pending" and delivery["last_status_code"] == 429
    assert delivery["next_attempt_at"] - before >= timedelta(seconds=120)
    assert "Retry-After 120" in delivery["last_error"]


def test_503_short_retry_after_still_waits_the_schedule(db, receiver, monkeypatch):
    set_env(monkeypatch, webhook_retry_schedule_s="0,600")
    hook = subscribe(receiver.url("/maint"))
    receiver.script("/maint", [Reply(503, headers={"retry-after": "1"})])
    health_event()
    before = datetime.now(UTC)
    deliver()
    [delivery] = deliveries(hook.id)
    assert delivery["next_attempt_at"] - before >= timedelta(seconds=600)
    now = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
    assert parse_retry_after("Sun, 29 Nov 2026 12:02:00 GMT", now=now) == 120
    assert parse_retry_after("garbage", now=now) is None
    assert parse_retry_after("Sun, 29 Nov 2026 11:00:00 GMT", now=now) == 0


def test_hanging_receiver_does_not_delay_a_healthy_one(db, receiver, monkeypatch):
    set_env(monkeypatch, webhook_timeout_s="3", webhook_per_endpoint_concurrency="2", webhook_concurrency="8")
    subscribe(receiver.url("/hang"))
    subscribe(receiver.url("/fast"))
    receiver.script("/hang", [Reply(hang_s=30)])
    for _ in range(10):  # ten events each: the hanging endpoint's backlog is larger than all slots
        health_event()

    async def scenario() -> float:
        dispatcher = Dispatcher(get_settings(), poll_interval_s=0.2)
        started = time.monotonic()
        await dispatcher.start()
        try:
            await asyncio.to_thread(receiver.wait_for, 10, "/fast", 5.0)
            return time.monotonic() - started
        finally:
            receiver.release.set()
            await dispatcher.stop(grace_s=1)

    elapsed = asyncio.run(scenario())
    assert elapsed < 2.0, f"the healthy receiver waited {elapsed:.2f}s behind the hanging one"
    # The hanging endpoint never had more than its own two slots in flight.
    hung = [r for r in receiver.requests if r.path == "/hang"]
    fast_done = max(r.at for r in receiver.at("/fast"))
    assert len([r for r in hung if r.at <= fast_done]) <= 2


def test_timeout_is_logged_as_an_error(db, receiver, monkeypatch):
    set_env(monkeypatch, webhook_timeout_s="0.5", webhook_retry_schedule_s="0,60")
    hook = subscribe(receiver.url("/slow"))
    receiver.script("/slow", [Reply(hang_s=5)])
    health_event()
    deliver()
    [delivery] = deliveries(hook.id)
    attempt = delivery["attempt_log"][0]
    assert attempt["status_code"] is None and "timed out" in attempt["error"]
    assert 400 <= attempt["latency_ms"] < 3000


def test_rotation_signs_with_both_secrets_during_the_overlap(db, receiver):
    hook = subscribe(receiver.url("/rot"))
    old_secret = hook.secret
    with session_scope() as session:
        new_secret = endpoints.rotate_secret(session=session, endpoint_id=hook.id).secret
    health_event()
    deliver()
    got = receiver.wait_for(1, "/rot")[0]
    assert len(got.headers["webhook-signature"].split(" ")) == 2
    for secret in (new_secret, old_secret):
        StandardWebhook(secret).verify(got.body, got.headers)
    # After the overlap only the new secret signs.
    with session_scope() as session:
        row = session.get(Endpoint, hook.id)
        row.previous_secret_expires_at = datetime.now(UTC) - timedelta(seconds=1)
    health_event()
    deliver()
    later = receiver.wait_for(2, "/rot")[1]
    assert len(later.headers["webhook-signature"].split(" ")) == 1
    StandardWebhook(new_secret).verify(later.body, later.headers)
    try:
        StandardWebhook(old_secret).verify(later.body, later.headers)
    except WebhookVerificationError:
        pass
    else:
        raise AssertionError("the expired secret must no longer sign")


def test_send_time_ssrf_guard_refuses_internal_targets(db, receiver, monkeypatch):
    hook = subscribe(receiver.url("/internal"))  # allowed when subscribed (private networks on)
    set_env(monkeypatch, allow_private_networks="0", webhook_retry_schedule_s="0,60")
    health_event()
    deliver()
    time.sleep(0.2)
    assert receiver.at("/internal") == []
    [delivery] = deliveries(hook.id)
    assert delivery["attempts"] == 1 and delivery["last_status_code"] is None
    assert "SSRF" in delivery["last_error"] and "loopback" in delivery["last_error"]


def test_endpoint_failing_for_five_days_is_disabled(db, receiver, monkeypatch):
    set_env(monkeypatch, webhook_retry_schedule_s="0,60")
    hook = subscribe(receiver.url("/dead"))
    receiver.script("/dead", [Reply(500)])
    with session_scope() as session:
        row = session.get(Endpoint, hook.id)
        row.failing_since = datetime.now(UTC) - timedelta(days=5, minutes=1)
    health_event()
    stats = deliver()
    assert stats.disabled == 1
    row = endpoint_row(hook.id)
    assert row.enabled is False
    assert "5 days" in row.disabled_reason and "HTTP 500" in row.disabled_reason


def test_fan_out_follows_type_and_signal_filters(db, receiver):
    with session_scope() as session:
        for sid in ("wh-sig-a", "wh-sig-b"):
            session.add(Signal(id=sid, question=f"{sid}?", opened_on=datetime(2026, 1, 1).date()))
    all_types = subscribe(receiver.url("/all"))
    only_a = subscribe(receiver.url("/a"), signal_ids=["wh-sig-a"])
    only_health = subscribe(receiver.url("/health"), event_types=["source.health_changed"])
    disabled = subscribe(receiver.url("/off"))
    with session_scope() as session:
        session.get(Endpoint, disabled.id).enabled = False
    data = {"signal_id": "x"}
    emit_event("signal.evidence_added", data, signal_id="wh-sig-a")
    emit_event("signal.evidence_added", data, signal_id="wh-sig-b")
    health_event()
    stats = deliver()
    assert stats.events == 3
    assert {(r.path, json.loads(r.body)["type"]) for r in receiver.requests} == {
        ("/all", "signal.evidence_added"), ("/all", "source.health_changed"),
        ("/a", "signal.evidence_added"), ("/a", "source.health_changed"),
        ("/health", "source.health_changed"),
    }
    assert len(receiver.at("/all")) == 3 and len(receiver.at("/a")) == 2
    assert receiver.at("/off") == []
    assert [len(deliveries(h.id)) for h in (all_types, only_a, only_health, disabled)] == [3, 2, 1, 0]


def test_a_new_subscriber_does_not_get_the_backlog(db, receiver):
    health_event()
    deliver()  # nobody subscribed: the event is fanned out to no one
    subscribe(receiver.url("/late"))
    health_event()
    deliver()
    assert len(receiver.wait_for(1, "/late")) == 1
    time.sleep(0.1)
    assert len(receiver.at("/late")) == 1


def test_a_commit_wakes_the_running_dispatcher(db, receiver):
    subscribe(receiver.url("/wake"))

    async def scenario() -> float:
        dispatcher = Dispatcher(get_settings(), poll_interval_s=60)  # the timer alone would take a minute
        await dispatcher.start()
        try:
            await asyncio.sleep(0.3)  # let the first round find nothing and go to sleep
            started = time.monotonic()
            await asyncio.to_thread(health_event)
            await asyncio.to_thread(receiver.wait_for, 1, "/wake", 5.0)
            return time.monotonic() - started
        finally:
            await dispatcher.stop()

    assert asyncio.run(scenario()) < 1.5


def test_reenabling_resumes_pending_deliveries(db, receiver, client, admin_headers):
    hook = subscribe(receiver.url("/back"))
    with session_scope() as session:
        session.get(Endpoint, hook.id).enabled = False
    health_event()
    deliver()
    assert receiver.at("/back") == []
    r = client.patch(f"/v1/webhooks/{hook.id}", json={"enabled": True}, headers=admin_headers)
    assert r.status_code == 200
    health_event()
    deliver()
    # The event fanned out while disabled went nowhere; the new one arrives.
    assert len(receiver.wait_for(1, "/back")) == 1


def test_a_claim_queued_past_its_send_by_time_is_released_not_sent_late(db, receiver, monkeypatch):
    # One sending slot, a 2 s timeout and a 3 s lease: a claim must start within 1.5 s of being taken.
    set_env(monkeypatch, webhook_concurrency="1", webhook_timeout_s="2", webhook_retry_schedule_s="0,60")
    slow = subscribe(receiver.url("/slow"))
    other = subscribe(receiver.url("/other"))
    receiver.script("/slow", [Reply(hang_s=10)])
    health_event()
    stats = deliver(lease_s=3)
    assert len(receiver.at("/slow")) == 1 and len(receiver.wait_for(1, "/other")) == 1
    [late] = deliveries(other.id)
    # It waited behind the hanging attempt, went back unsent, and was sent after a fresh claim.
    assert late["status"] == "succeeded" and late["attempts"] == 1 and len(late["attempt_log"]) == 1
    assert stats.claimed == 3
    assert "timed out" in deliveries(slow.id)[0]["last_error"]
