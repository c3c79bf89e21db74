"""End to end over HTTP on loopback: two feed servers carry the same funding story; the service, itself
served by uvicorn, checks both sources through its API, proposes one candidate with both items, and
accepting it adds the funding round with both items as provenance, which the funding-rounds API and the
race board then show with both sources."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest
from pytest_httpserver import HTTPServer

from tests.fixtures.database import ADMIN_TOKEN
from tests.fixtures.server import serving
from tests.fixtures.sources import Entry, rss

ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


@pytest.fixture
def feed_servers():
    """Two independent feed servers on 127.0.0.1, as two outlets would be."""
    servers = [HTTPServer(host="127.0.0.1", port=0), HTTPServer(host="127.0.0.1", port=0)]
    for server in servers:
        server.start()
    yield servers
    for server in servers:
        server.clear()
        server.stop()


def _publish(server: HTTPServer, title: str, entries: list[Entry]) -> str:
    body = rss(entries, title=title)
    server.expect_request("/feed.xml").respond_with_data(body, content_type="application/rss+xml")
    return server.url_for("/feed.xml")


def test_two_sources_one_candidate_accepted_into_the_race(db, feed_servers):
    from chipwatch.app import create_app

    published = datetime(2026, 9, 2, 8, 30, tzinfo=UTC)
    press, analyst = feed_servers
    press_url = _publish(press, "Chip Press", [
        Entry("Etched raises $500M at a $5B valuation", guid="cp-1", link="https://chip-press.example/etched",
              body="The start-up builds transformer-only inference ASICs.", date=published),
        Entry("Cooling vendors struggle to keep up with AI racks", guid="cp-2",
              link="https://chip-press.example/cooling", body="Liquid cooling lead times stretch.",
              date=published),
    ])
    analyst_url = _publish(analyst, "Silicon Notes", [
        Entry("Etched closes $500 million round, valued at $5 billion", guid="sn-9",
              link="https://silicon-notes.example/etched-round",
              body="Stripes led the round, the company said.", date=published.replace(hour=11)),
    ])
    with serving(create_app(scheduler=False)) as base, httpx.Client(base_url=base, timeout=30) as api:
        feeds = (("chip-press", press_url, "press"), ("silicon-notes", analyst_url, "analyst"))
        for source_id, url, trust in feeds:
            r = api.post("/v1/sources", json={"id": source_id, "name": source_id, "url": url, "trust": trust},
                         headers=ADMIN)
            assert r.status_code == 201, r.text
            r = api.post(f"/v1/sources/{source_id}/check", headers=ADMIN)
            assert r.status_code == 200 and r.json()["status"] == "ok", r.text

        page = api.get("/v1/candidates", params={"status": "pending", "kind": "funding"}).json()
        etched = [c for c in page["items"] if c["fact"].get("vendor_name") == "Etched"]
        assert len(etched) == 1, page
        candidate = etched[0]
        assert candidate["fact"]["amount"] == 500_000_000 and candidate["fact"]["currency"] == "USD"
        assert candidate["fact"]["post_money_valuation"] == 5_000_000_000
        assert sorted(i["source_id"] for i in candidate["items"]) == ["chip-press", "silicon-notes"]
        assert {i["quote"] for i in candidate["items"]} == {
            "Etched raises $500M", "Etched closes $500 million"
        }
        assert candidate["independent_sources"] == 2 and candidate["verification"] == "witnessed"
        assert candidate["corroborates"] is None

        r = api.post(f"/v1/candidates/{candidate['id']}/accept", headers=ADMIN)
        assert r.status_code == 200, r.text
        accepted = r.json()
        assert accepted["status"] == "accepted" and accepted["fact_ref"]["kind"] == "funding-rounds"
        fact_id = accepted["fact_ref"]["id"]

        round_ = api.get(f"/v1/funding-rounds/{fact_id}").json()
        assert round_["vendor_id"] == "etched" and round_["amount"] == 500_000_000
        assert round_["post_money_valuation"] == 5_000_000_000 and round_["verification"] == "witnessed"
        provenance = round_["attributes"]["provenance_items"]
        assert sorted(p["source_id"] for p in provenance) == ["chip-press", "silicon-notes"]
        assert {p["url"] for p in provenance} == {
            "https://chip-press.example/etched", "https://silicon-notes.example/etched-round"
        }
        assert round_["source_id"] == "silicon-notes"  # the more trusted source
        assert round_["sources"] == ["silicon-notes", "chip-press"]
        listed = api.get("/v1/funding-rounds", params={"vendor": "etched"}).json()["items"]
        assert [(f["id"], f["sources"]) for f in listed] == [(fact_id, ["silicon-notes", "chip-press"])]
        history = api.get(f"/v1/funding-rounds/{fact_id}/history").json()["items"]
        assert [(h["action"], h["cause"], h["cause_ref"]) for h in history] == [
            ("created", "candidate", str(candidate["id"]))
        ]
        vendor = api.get("/v1/vendors/etched").json()
        assert vendor["name"] == "Etched"

        race = api.get("/v1/race").json()
        shown = [f for f in race["latest_funding"] if f["id"] == fact_id]
        assert shown and shown[0]["vendor"] == "etched" and shown[0]["amount"] == 500_000_000
        assert shown[0]["verification"] == "witnessed" and shown[0]["source"]["id"] == "silicon-notes"
        assert [(s["id"], s["url"]) for s in shown[0]["sources"]] == [
            ("silicon-notes", analyst_url), ("chip-press", press_url)
        ]

        # Checking again changes nothing: the items are the same, so is the candidate.
        for source_id in ("chip-press", "silicon-notes"):
            api.post(f"/v1/sources/{source_id}/check", headers=ADMIN)
        again = api.get(f"/v1/candidates/{candidate['id']}").json()
        assert again["status"] == "accepted" and len(again["items"]) == 2
        r = api.post(f"/v1/candidates/{candidate['id']}/accept", headers=ADMIN)
        assert r.status_code == 409 and r.headers["content-type"].startswith("application/problem+json")
