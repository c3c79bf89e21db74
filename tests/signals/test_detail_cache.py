"""``GET /v1/signals/{id}`` is served from the read cache like the board: an ETag and 304 for an unchanged
signal, and a write acknowledged by the API (or committed by any writer in this process) seen at once."""

from __future__ import annotations

from chipwatch.kit.httpcache import cache_key, read_cache
from tests.fixtures.signals import definition, publish


def test_unchanged_detail_answers_304_and_comes_from_the_cache(client, admin_headers):
    assert client.post("/v1/signals", json=definition("cached"), headers=admin_headers).status_code == 201
    first = client.get("/v1/signals/cached")
    assert first.status_code == 200 and first.headers["cache-control"] == "no-cache"
    etag = first.headers["etag"]
    assert read_cache.fresh(cache_key("/v1/signals/cached", "")) == (first.content, etag)
    again = client.get("/v1/signals/cached", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == etag
    assert client.get("/v1/signals/cached", headers={"If-None-Match": '"other"'}).content == first.content


def test_a_write_is_seen_by_the_next_read(client, admin_headers, feeds):
    client.post("/v1/signals", json=definition("ryw", review="manual"), headers=admin_headers)
    before = client.get("/v1/signals/ryw")
    assert (before.json()["status"], before.json()["evidence"]) == ("open", [])

    # A feed check's commit in this process (no API call): new evidence, pending review.
    publish("Jalapeño shipped to the first customers")
    seen = client.get("/v1/signals/ryw", headers={"If-None-Match": before.headers["etag"]})
    assert seen.status_code == 200 and seen.json()["status"] == "pending_review"
    assert len(seen.json()["evidence"]) == 1

    moved = client.post("/v1/signals/ryw/resolve", json={"outcome": "yes"}, headers=admin_headers)
    assert moved.status_code == 200
    after = client.get("/v1/signals/ryw", headers={"If-None-Match": seen.headers["etag"]})
    assert after.status_code == 200 and after.json() == moved.json()
    body = after.json()
    assert (body["status"], body["outcome"], body["version"]) == ("resolved", "yes", 2)

    changed = client.patch("/v1/signals/ryw", json={"question": "Shipped at last?"}, headers=admin_headers)
    assert changed.status_code == 200
    assert client.get("/v1/signals/ryw").json()["question"] == "Shipped at last?"


def test_unknown_signal_is_a_problem_and_not_cached(client, admin_headers):
    missing = client.get("/v1/signals/not-yet")
    assert missing.status_code == 404 and missing.headers["content-type"] == "application/problem+json"
    assert read_cache.fresh(cache_key("/v1/signals/not-yet", "")) is None
    client.post("/v1/signals", json=definition("not-yet"), headers=admin_headers)
    assert client.get("/v1/signals/not-yet").json()["id"] == "not-yet"


def test_the_detail_evidence_is_each_row_as_evidence_data_writes_it(client, admin_headers, feeds, db):
    from datetime import datetime

    from sqlalchemy import select

    from chipwatch.db import session_scope
    from chipwatch.signals.events import evidence_data
    from chipwatch.signals.models import Evidence
    from chipwatch.signals.schemas import EvidenceSource

    client.post("/v1/signals", json=definition("rows", review="manual"), headers=admin_headers)
    publish("Jalapeño shipped to the first customers")
    publish("Jalapeño shipped to a second customer")
    body = client.get("/v1/signals/rows").json()
    with session_scope(db, write=False) as session:
        stmt = select(Evidence).where(Evidence.signal_id == "rows").order_by(Evidence.id)
        rows = session.scalars(stmt).all()
        expected = [
            {**evidence_data(ev, moment=lambda m: m.isoformat() if isinstance(m, datetime) else m),
             "sources": [{f: c.get(f) for f in EvidenceSource.model_fields} for c in ev.sources or []]}
            for ev in rows
        ]
    assert len(expected) >= 2
    assert body["evidence"] == expected
