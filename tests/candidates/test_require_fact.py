"""A signal may require an accepted fact: its item matches are evidence that never move it; the fact an
analyst accepts from the item's candidate does. Beside it, the same signal without the choice resolves
on the item at once."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.fixtures.sources import Entry, add_source, rss, run_check


@pytest.fixture
def httpserver(httpserver_ipv4):
    return httpserver_ipv4


def definition(signal_id: str, require_fact: bool) -> dict:
    return {
        "id": signal_id,
        "question": "Does Jalapeño reach 100 MW of running capacity?",
        "opened_on": "2026-08-25",
        "review": "auto",
        "require_fact": require_fact,
        "subjects": ["jalapeno"],
        "yes_when": [
            {"item": {"mentions_all": ["jalapeno"], "number": {"unit": "MW", "gte": 100}}},
            {"deployment": {"chip": "jalapeno", "capacity_mw_gte": 100}},
        ],
    }


def test_require_fact_waits_for_the_accepted_fact(client, httpserver, admin_headers):
    for sid, required in (("jalapeno-100mw-fact", True), ("jalapeno-100mw-news", False)):
        r = client.post("/v1/signals", json=definition(sid, required), headers=admin_headers)
        assert r.status_code == 201, r.text
    assert client.get("/v1/signals/jalapeno-100mw-fact").json()["require_fact"] is True

    body = rss(
        [
            Entry(
                "OpenAI's Jalapeño chips go live in first Texas cluster",
                guid="j1",
                link="https://press.example/j1",
                body="The deployment has reached 120 MW, OpenAI said.",
                date=datetime(2026, 12, 10, 9, tzinfo=UTC),
            )
        ]
    )
    httpserver.expect_request("/press.xml").respond_with_data(body, content_type="application/rss+xml")
    add_source("press", httpserver.url_for("/press.xml"), trust="press")
    assert run_check("press").status == "ok"

    news = client.get("/v1/signals/jalapeno-100mw-news").json()
    assert (news["status"], news["outcome"]) == ("resolved", "yes")
    waiting = client.get("/v1/signals/jalapeno-100mw-fact").json()
    assert (waiting["status"], waiting["outcome"]) == ("open", None)
    assert [(e["ref_kind"], e["side"]) for e in waiting["evidence"]] == [("item", "yes")]

    (candidate,) = client.get("/v1/candidates", params={"kind": "deployment"}).json()["items"]
    assert candidate["fact"]["chip_id"] == "jalapeno" and candidate["fact"]["power_mw"] == 120
    assert candidate["fact"]["status"] == "operational" and candidate["fact"]["operator_id"] == "openai"
    r = client.post(f"/v1/candidates/{candidate['id']}/accept", headers=admin_headers)
    assert r.status_code == 200, r.text
    fact_id = r.json()["fact_ref"]["id"]

    decided = client.get("/v1/signals/jalapeno-100mw-fact").json()
    assert (decided["status"], decided["outcome"]) == ("resolved", "yes")
    assert ("deployment", fact_id) in [(e["ref_kind"], e["ref_id"]) for e in decided["evidence"]]
    moves = client.get("/v1/signals/jalapeno-100mw-fact/history").json()["items"]
    assert [m["cause"] for m in moves] == ["rule:1"]

    # Retracting the fact withdraws the move it made; the item evidence left standing still cannot decide
    # the signal, so it stays open instead of resolving again on the news.
    r = client.delete(f"/v1/deployments/{fact_id}", headers=admin_headers)
    assert r.status_code == 200, r.text
    reopened = client.get("/v1/signals/jalapeno-100mw-fact").json()
    assert (reopened["status"], reopened["outcome"]) == ("open", None)
    moves = client.get("/v1/signals/jalapeno-100mw-fact/history").json()["items"]
    assert [m["cause"] for m in moves] == ["rule:1", "retraction"]
