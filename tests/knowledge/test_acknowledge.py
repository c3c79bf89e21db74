"""A write is acknowledged only after it is durable: the commit happens before the response starts."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import text

from chipwatch.db import session_scope
from tests.fixtures.database import ADMIN_TOKEN

HEADERS = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def _country_elsewhere(vendor_id: str) -> str | None:
    """The vendor's country as a separate transaction (another request or process) reads it now;
    ``"absent"`` when that transaction sees no such row."""
    with session_scope(write=False) as session:
        row = session.execute(text("SELECT country FROM vendors WHERE id = :id"), {"id": vendor_id}).first()
    return "absent" if row is None else row[0]


def test_the_write_is_committed_when_the_response_starts(db):
    from chipwatch.app import create_app

    app = create_app(scheduler=False)
    seen_at_start: list[str | None] = []

    async def watching(scope, receive, send):
        async def send_and_look(message):
            if message["type"] == "http.response.start" and scope["method"] in ("POST", "PATCH"):
                seen_at_start.append(_country_elsewhere("acked-vendor"))
            await send(message)

        await app(scope, receive, send_and_look)

    with TestClient(watching) as client:
        created = client.post("/v1/vendors", json={"id": "acked-vendor", "name": "Acked"}, headers=HEADERS)
        assert created.status_code == 201, created.text
        patched = client.patch("/v1/vendors/acked-vendor", json={"country": "US"}, headers=HEADERS)
        assert patched.status_code == 200, patched.text
    # Created (no country yet), then changed: each visible to others before its answer went out.
    assert seen_at_start == [None, "US"]
