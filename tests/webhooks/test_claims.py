"""Delivery claims: leases, per-endpoint limits, concurrent workers and late outcomes."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from chipwatch.config import get_settings
from chipwatch.db import session_scope
from chipwatch.outbox.emit import emit
from chipwatch.webhooks import deliveries as delivery_log
from chipwatch.webhooks import outbox
from chipwatch.webhooks.models import Delivery
from tests.fixtures.webhooks import Reply, deliver, health_event, set_env, subscribe


def _fan_out() -> None:
    with session_scope() as session:
        outbox.fan_out(session=session)


def _claim(worker: str, *, lease_s: float = 30, limit: int = 100, per_endpoint: int = 100, in_flight=None):
    with session_scope() as session:
        return outbox.claim_due(
            session=session, worker_id=worker, lease_s=lease_s, limit=limit,
            per_endpoint_limit=per_endpoint, in_flight=in_flight,
        )


def test_a_claim_whose_holder_died_is_reclaimable_after_its_lease(db):
    subscribe("http://127.0.0.1:9/x")
    health_event()
    _fan_out()
    [first] = _claim("dead-worker", lease_s=0.5)
    assert _claim("other") == []
    time.sleep(0.6)
    [again] = _claim("other")
    assert again.delivery_id == first.delivery_id and again.msg_id == first.msg_id
    with session_scope(write=False) as session:
        row = session.get(Delivery, first.delivery_id)
        assert row.claimed_by == "other"


def test_claims_respect_the_per_endpoint_limit_and_what_is_in_flight(db):
    a = subscribe("http://127.0.0.1:9/a")
    b = subscribe("http://127.0.0.1:9/b", event_types=["signal.status_changed"])
    for _ in range(6):
        health_event()
    with session_scope() as session:
        for _ in range(3):
            emit(session, "signal.status_changed", {})
    _fan_out()
    got = _claim("w1", per_endpoint=2)
    assert sorted(c.endpoint_id for c in got) == sorted([a.id, a.id, b.id, b.id])
    # With a's slots half used and b's full, only a gets one more.
    got = _claim("w2", per_endpoint=2, in_flight={a.id: 1, b.id: 2})
    assert [c.endpoint_id for c in got] == [a.id]
    got = _claim("w3", per_endpoint=2, in_flight={a.id: 2, b.id: 1})
    assert [c.endpoint_id for c in got] == [b.id]  # b's third and last delivery
    assert _claim("w4", per_endpoint=2, in_flight={a.id: 2}) == []
    assert len(_claim("w5", per_endpoint=5, limit=1)) == 1


def test_concurrent_workers_never_claim_the_same_delivery(db):
    for i in range(8):
        subscribe(f"http://127.0.0.1:9/{i}")
    for _ in range(25):
        health_event()
    _fan_out()
    claimed: dict[str, list[int]] = {}
    errors: list[BaseException] = []

    def work(worker: str) -> None:
        mine = claimed.setdefault(worker, [])
        try:
            while True:
                got = _claim(worker, limit=7)
                if not got:
                    return
                mine.extend(c.delivery_id for c in got)
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(f"w{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    everything = [d for ids in claimed.values() for d in ids]
    assert len(everything) == 200 and len(set(everything)) == 200


def test_a_late_failure_from_a_lapsed_claim_is_only_logged(db):
    hook = subscribe("http://127.0.0.1:9/late")
    health_event()
    _fan_out()
    [stale] = _claim("slow-worker", lease_s=0.1)
    time.sleep(0.2)
    [fresh] = _claim("new-worker")
    now = datetime.now(UTC)
    late = outbox.AttemptOutcome(
        delivery_id=stale.delivery_id, endpoint_id=hook.id, worker_id="slow-worker",
        attempted_at=now, latency_ms=5.0, status_code=500,
    )
    with session_scope() as session:
        outbox.record_attempts(session=session, outcomes=[late], settings=get_settings())
    with session_scope(write=False) as session:
        row = session.get(Delivery, fresh.delivery_id)
        assert row.claimed_by == "new-worker" and row.attempts == 0 and row.status == "pending"
    ok = outbox.AttemptOutcome(
        delivery_id=fresh.delivery_id, endpoint_id=hook.id, worker_id="new-worker",
        attempted_at=now + timedelta(seconds=1), latency_ms=5.0, status_code=200,
    )
    with session_scope() as session:
        outbox.record_attempts(session=session, outcomes=[ok], settings=get_settings())
    with session_scope(write=False) as session:
        row = session.get(Delivery, fresh.delivery_id)
        assert row.status == "succeeded" and row.attempts == 1 and row.claimed_by is None
    [delivery] = service_deliveries(hook.id)
    assert [a["status_code"] for a in delivery["attempt_log"]] == [500, 200]


def service_deliveries(endpoint_id: str):
    with session_scope(write=False) as session:
        return delivery_log.list_deliveries(session=session, endpoint_id=endpoint_id, status=None, limit=10,
                                            cursor=None)[0]


def test_retry_schedule_arithmetic():
    schedule = [0, 5, 300]
    assert outbox.retry_delay_s(1, schedule, None) == 5
    assert outbox.retry_delay_s(2, schedule, 30) == 300
    assert outbox.retry_delay_s(1, schedule, 30) == 30
    assert outbox.retry_delay_s(3, schedule, None) is None


def test_a_claim_is_renewed_while_its_attempt_is_on_the_wire(db, receiver, monkeypatch):
    """An attempt longer than the lease keeps its claim (the dispatcher's heartbeat renews it): a second
    worker claiming meanwhile gets nothing, and the receiver gets the event once."""
    set_env(monkeypatch, webhook_timeout_s=10)
    hook = subscribe(receiver.url("/long"))
    receiver.script("/long", [Reply(204, hang_s=3.0)])
    health_event()
    stats: list = []
    holder = threading.Thread(target=lambda: stats.append(deliver(worker_id="holder", lease_s=0.9)))
    holder.start()
    stolen, leases = [], []
    deadline = time.monotonic() + 2.7
    while time.monotonic() < deadline:
        with session_scope(write=False) as session:
            row = session.scalars(select(Delivery).where(Delivery.webhook_id == hook.id)).first()
        if row is not None and row.claimed_by == "holder":
            leases.append(row.claimed_until)
            stolen += _claim("thief", lease_s=0.9)
        time.sleep(0.1)
    holder.join(timeout=30)
    assert leases, "the dispatcher never claimed the delivery"
    assert stolen == []
    assert max(leases) > min(leases) + timedelta(seconds=1), "the claim was not renewed"
    assert stats[0].succeeded == 1
    assert len(receiver.at("/long")) == 1
    with session_scope(write=False) as session:
        row = session.scalars(select(Delivery).where(Delivery.webhook_id == hook.id)).one()
        assert (row.status, row.claimed_by, row.claimed_until) == ("succeeded", None, None)
