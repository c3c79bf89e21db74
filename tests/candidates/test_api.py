"""Candidates through the API, from items stored by real feed checks (feeds served on 127.0.0.1): one
candidate per fact, sources' independence and the verification it allows, corroboration of a known
fact, rejection for good, acceptance of every kind with edits, the candidate.created event."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import jsonschema
import pytest
from sqlalchemy import select

from chipwatch.candidates.models import Candidate, CandidateItem
from chipwatch.db import session_scope
from chipwatch.knowledge.models import Chip, FactChange, FundingRound
from chipwatch.outbox.models import Event
from tests.fixtures.sources import Entry, add_source, rss, run_check

SCHEMA = Path(__file__).resolve().parents[2] / "schema" / "events" / "candidate.created.schema.json"
WHEN = datetime(2026, 9, 3, 7, tzinfo=UTC)


@pytest.fixture
def httpserver(httpserver_ipv4):
    return httpserver_ipv4


@pytest.fixture
def feeds(db, httpserver):
    """``publish(source_id, trust, entries, publisher_id=None)`` serves a feed and checks it."""
    made: set[str] = set()

    def publish(source_id: str, trust: str, entries: list[Entry], publisher_id: str | None = None) -> None:
        path = f"/{source_id}.xml"
        httpserver.expect_request(path).respond_with_data(rss(entries), content_type="application/rss+xml")
        if source_id not in made:
            add_source(source_id, httpserver.url_for(path), trust=trust, publisher_id=publisher_id)
            made.add(source_id)
        outcome = run_check(source_id)
        assert outcome.status == "ok", outcome

    from chipwatch.wiring import wire

    wire()
    return publish


def story(guid: str, title: str, body: str = "") -> Entry:
    return Entry(title, guid=guid, link=f"https://news.example/{guid}", body=body, date=WHEN)


def candidates(client, **params) -> list[dict]:
    r = client.get("/v1/candidates", params=params)
    assert r.status_code == 200, r.text
    return r.json()["items"]


def only(client, **params) -> dict:
    found = candidates(client, **params)
    assert len(found) == 1, found
    return found[0]


def test_the_companys_own_feed_never_counts_as_independent(client, feeds):
    feeds(
        "xiwang-newsroom", "vendor", [story("x1", "曦望完成新一轮融资，估值近200亿元")], publisher_id="xiwang"
    )
    first = only(client, kind="funding")
    assert first["fact"]["vendor_id"] == "xiwang" and first["fact"]["post_money_valuation"] == 2e10
    assert [i["independent"] for i in first["items"]] == [False]
    assert (first["independent_sources"], first["verification"]) == (0, "vendor_reported")

    # A press outlet published by the subject itself is not independent either.
    feeds("xiwang-weekly", "press", [story("w1", "曦望完成新一轮融资，估值近200亿元")], publisher_id="xiwang")
    feeds(
        "cn-tech",
        "press",
        [story("c1", "曦望完成新一轮融资，估值近200亿元", "估值在今年4月首次突破100亿元。")],
    )
    one = only(client, kind="funding")
    assert (one["independent_sources"], one["verification"]) == (1, "vendor_reported")
    feeds("cn-analyst", "analyst", [story("a1", "曦望完成新一轮融资，估值近200亿元")])
    two = only(client, kind="funding")
    assert (two["independent_sources"], two["verification"]) == (2, "witnessed")
    assert two["confidence"] > one["confidence"] >= first["confidence"]
    assert sorted(i["source_id"] for i in two["items"]) == [
        "cn-analyst",
        "cn-tech",
        "xiwang-newsroom",
        "xiwang-weekly",
    ]
    # one candidate.created event, however many items
    with session_scope(write=False) as session:
        created = list(session.scalars(select(Event).where(Event.type == "candidate.created")))
    assert [e.data["candidate_id"] for e in created] == [two["id"]]


def test_candidate_created_event_validates_and_names_the_words(client, feeds):
    feeds("chip-press", "press", [story("e1", "Etched raises $500M at a $5B valuation")])
    with session_scope(write=False) as session:
        event = session.scalars(select(Event).where(Event.type == "candidate.created")).one()
    payload = {"type": event.type, "timestamp": "2026-09-03T07:00:00Z", "data": event.data}
    schema = json.loads(SCHEMA.read_text())
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(payload)) == []
    assert event.data["items"][0]["quote"] == "Etched raises $500M"
    assert event.data["fact"]["amount"] == 5e8 and event.data["status"] == "pending"


def test_a_known_fact_is_corroborated_not_duplicated(client, feeds, admin_headers):
    feeds(
        "zh-news", "press", [story("g1", "英伟达以200亿美元收购Groq", "Groq的LPU技术将用于Vera Rubin平台。")]
    )
    deal = only(client, kind="acquisition")
    assert deal["corroborates"] == {"kind": "funding-rounds", "id": "groq-acquisition-nvidia"}
    r = client.post(
        f"/v1/candidates/{deal['id']}/accept", json={"fact": {"amount": 1}}, headers=admin_headers
    )
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "fact"
    r = client.post(f"/v1/candidates/{deal['id']}/accept", headers=admin_headers)
    assert r.status_code == 200, r.text
    assert r.json()["fact_ref"] == {"kind": "funding-rounds", "id": "groq-acquisition-nvidia"}
    with session_scope(write=False) as session:
        known = session.get(FundingRound, "groq-acquisition-nvidia")
        assert [p["source_id"] for p in known.attributes["provenance_items"]] == ["zh-news"]
        assert known.source_id == "zhihu" and known.verification == "vendor_reported"  # one source: unchanged
        changes = session.scalars(
            select(FactChange).where(
                FactChange.fact_id == "groq-acquisition-nvidia", FactChange.cause == "candidate"
            )
        ).all()
        assert [(c.action, c.field, c.cause_ref) for c in changes] == [
            ("updated", "attributes.provenance_items", str(deal["id"]))
        ]
        assert (
            session.scalar(
                select(FundingRound)
                .where(FundingRound.vendor_id == "groq")
                .where(FundingRound.id != "groq-acquisition-nvidia")
            )
            is None
        )


def test_rejected_stays_rejected(client, feeds, admin_headers):
    feeds("tabloid", "press", [story("t1", "SambaNova raises $350 million, led by Vista Equity Partners")])
    cand = only(client, kind="funding")
    r = client.post(
        f"/v1/candidates/{cand['id']}/reject",
        json={"note": "duplicate of an old round"},
        headers=admin_headers,
    )
    assert r.status_code == 200 and r.json()["status"] == "rejected" and r.json()["note"]
    feeds("wire", "press", [story("w9", "SambaNova raises $350 million, led by Vista Equity Partners")])
    again = only(client, kind="funding")
    assert again["id"] == cand["id"] and again["status"] == "rejected" and len(again["items"]) == 2
    assert candidates(client, status="pending") == []
    for action in ("accept", "reject"):
        r = client.post(f"/v1/candidates/{cand['id']}/{action}", headers=admin_headers)
        assert r.status_code == 409 and r.headers["content-type"].startswith("application/problem+json")
    with session_scope(write=False) as session:
        assert session.scalar(select(Event.id).where(Event.type == "candidate.created").offset(1)) is None


def test_list_filters_pages_and_refusals(client, feeds, admin_headers):
    feeds(
        "mixed",
        "press",
        [
            story("m1", "Etched raises $500M at a $5B valuation"),
            story("m2", "Qualcomm announces AI200 and AI250 accelerators for data center inference"),
            story(
                "m3",
                "Cerebras opens 150 MW inference data center in Oklahoma City",
                "The facility houses more than 300 CS-3 systems.",
            ),
            story("m4", "Etched says Sohu is 20x faster than H100 on Llama 70B"),
        ],
    )
    everything = candidates(client)
    assert sorted(c["kind"] for c in everything) == ["benchmark", "deployment", "funding", "launch", "launch"]
    assert [c["id"] for c in everything] == sorted((c["id"] for c in everything), reverse=True)
    assert [c["kind"] for c in candidates(client, kind="launch")] == ["launch", "launch"]
    page = client.get("/v1/candidates", params={"limit": 2}).json()
    rest = client.get("/v1/candidates", params={"limit": 10, "cursor": page["next_cursor"]}).json()
    assert [c["id"] for c in page["items"] + rest["items"]] == [c["id"] for c in everything]
    assert client.get("/v1/candidates", params={"status": "maybe"}).status_code == 422
    assert client.get("/v1/candidates", params={"kind": "rumour"}).status_code == 422
    assert client.get("/v1/candidates/999999").status_code == 404
    deployment = only(client, kind="deployment")
    assert deployment["fact"]["units"] == 300 and deployment["fact"]["power_mw"] == 150
    assert deployment["items"][0]["part"] == "title" and deployment["items"][0]["span"] == [0, 21]
    assert deployment["items"][0]["quote"] == "Cerebras opens 150 MW"
    r = client.post(f"/v1/candidates/{deployment['id']}/accept", headers={})
    assert r.status_code == 401
    r = client.post(
        f"/v1/candidates/{deployment['id']}/accept", json={"fact": {"colour": "red"}}, headers=admin_headers
    )
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "fact.colour"
    r = client.post(
        f"/v1/candidates/{deployment['id']}/accept", json={"verification": "witnessed"}, headers=admin_headers
    )
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "verification"
    r = client.post(
        f"/v1/candidates/{deployment['id']}/accept", json={"alias_of": "gb200"}, headers=admin_headers
    )
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "alias_of"
    assert only(client, kind="deployment")["status"] == "pending"  # nothing was written by the refusals


def test_every_bad_edit_of_an_acceptance_is_named_in_one_answer(client, feeds, admin_headers):
    feeds("dc-news", "press", [story("d1", "Cerebras opens 150 MW inference data center in Oklahoma City")])
    deployment = only(client, kind="deployment")
    body = {"fact": {"colour": "red", "size": 3}, "verification": "independent", "alias_of": "gb200"}
    r = client.post(f"/v1/candidates/{deployment['id']}/accept", json=body, headers=admin_headers)
    assert r.status_code == 422
    fields = [e["field"] for e in r.json()["errors"]]
    assert fields == ["fact.colour", "fact.size", "verification", "alias_of"]
    assert only(client, kind="deployment")["status"] == "pending"


def test_an_edit_of_the_wrong_type_or_sign_is_refused_not_stored(client, feeds, admin_headers):
    feeds("dc-news", "press", [story("d1", "Cerebras opens 150 MW inference data center in Oklahoma City")])
    deployment = only(client, kind="deployment")
    body = {"fact": {"power_mw": -3, "units": "many", "status": 5, "operator_name": "", "colour": "red"}}
    r = client.post(f"/v1/candidates/{deployment['id']}/accept", json=body, headers=admin_headers)
    assert r.status_code == 422
    errors = {e["field"]: e["message"] for e in r.json()["errors"]}
    assert list(errors) == ["fact.colour", "fact.operator_name", "fact.power_mw", "fact.status", "fact.units"]
    assert "greater than or equal to 0" in errors["fact.power_mw"]
    assert "valid integer" in errors["fact.units"] and "valid string" in errors["fact.status"]
    assert only(client, kind="deployment")["status"] == "pending"
    r = client.post(
        f"/v1/candidates/{deployment['id']}/accept", json={"fact": {"power_mw": 120, "units": 250}},
        headers=admin_headers,
    )
    assert r.status_code == 200, r.text
    dep = client.get(f"/v1/deployments/{r.json()['fact_ref']['id']}")
    assert dep.status_code == 200 and (dep.json()["capacity_mw"], dep.json()["units_min"]) == (120, 250)


def test_a_malformed_fact_id_does_not_hide_the_edits_problems(client, feeds, admin_headers):
    feeds("dc-news", "press", [story("d1", "Cerebras opens 150 MW inference data center in Oklahoma City")])
    deployment = only(client, kind="deployment")
    body = {"fact_id": "Bad Id", "fact": {"units": "many", "colour": "red"}, "verification": "independent"}
    r = client.post(f"/v1/candidates/{deployment['id']}/accept", json=body, headers=admin_headers)
    assert r.status_code == 422
    fields = sorted(e["field"] for e in r.json()["errors"])
    assert fields == ["fact.colour", "fact.units", "fact_id", "verification"]
    assert only(client, kind="deployment")["status"] == "pending"


def test_accepting_each_kind_writes_its_fact(client, feeds, admin_headers):
    feeds(
        "mixed",
        "press",
        [
            story("m1", "Inference start-up Baseten nabs $150M Series D at a $2.15B valuation"),
            story("m2", "Qualcomm announces AI200 and AI250 accelerators for data center inference"),
            story(
                "m3",
                "Cerebras opens 150 MW inference data center in Oklahoma City",
                "The facility houses more than 300 CS-3 systems.",
            ),
            story("m4", "Etched says Sohu is 20x faster than H100 on Llama 70B"),
        ],
    )
    by_kind: dict[str, list[dict]] = {}
    for c in candidates(client):
        by_kind.setdefault(c["kind"], []).append(c)

    funding = by_kind["funding"][0]
    r = client.post(
        f"/v1/candidates/{funding['id']}/accept",
        json={"fact": {"round_type": "series_d"}, "fact_id": "baseten-series-d", "note": "checked"},
        headers=admin_headers,
    )
    assert r.status_code == 200, r.text
    round_ = client.get("/v1/funding-rounds/baseten-series-d").json()
    assert (round_["vendor_id"], round_["round_type"], round_["amount"]) == ("baseten", "series_d", 1.5e8)
    assert round_["post_money_valuation"] == 2.15e9 and round_["announced_on"] == "2026-09-03"

    deployment = by_kind["deployment"][0]
    r = client.post(f"/v1/candidates/{deployment['id']}/accept", headers=admin_headers)
    ref = r.json()["fact_ref"]
    dep = client.get(f"/v1/deployments/{ref['id']}").json()
    assert dep["operator_id"] == "cerebras" and dep["status"] == "operational" and dep["capacity_mw"] == 150
    assert (
        dep["units_min"] == 300
        and dep["system_label"] == "CS-3"
        and dep["attributes"]["place"] == "Oklahoma City"
    )

    claim = by_kind["benchmark"][0]
    r = client.post(f"/v1/candidates/{claim['id']}/accept", headers=admin_headers)
    result = client.get(f"/v1/results/{r.json()['fact_ref']['id']}").json()
    assert result["chip_ids"] == ["sohu"] and result["baseline_label"] == "H100"
    assert (result["metric"], result["value"], result["unit"]) == ("performance", 20, "x")
    assert client.get("/v1/chips/sohu").json()["name"] == "Sohu"

    launches = sorted(by_kind["launch"], key=lambda c: c["fact"]["chip_name"])
    assert [c["fact"]["new"] for c in launches] == [True, True]
    r = client.post(f"/v1/candidates/{launches[0]['id']}/accept", headers=admin_headers)
    chip = client.get(f"/v1/chips/{r.json()['fact_ref']['id']}").json()
    assert (chip["id"], chip["name"], chip["vendor_id"], chip["status"]) == (
        "ai200",
        "AI200",
        "qualcomm",
        "announced",
    )
    # the other name is another name of a known chip: it becomes an alias
    r = client.post(
        f"/v1/candidates/{launches[1]['id']}/accept", json={"alias_of": "ai200"}, headers=admin_headers
    )
    assert r.json()["fact_ref"] == {"kind": "chips", "id": "ai200"}
    assert client.get("/v1/chips/ai200").json()["aliases"] == ["AI250"]

    history = client.get("/v1/chips/ai200/history").json()["items"]
    assert [(h["action"], h["cause"]) for h in history] == [
        ("created", "candidate"),
        ("updated", "candidate"),
    ]
    assert all(c["status"] == "accepted" for c in candidates(client))
    with session_scope(write=False) as session:
        assert session.get(Chip, "ai200").attributes["provenance_items"][0]["source_id"] == "mixed"
        links = session.scalars(select(CandidateItem)).all()
        assert {link.source_id for link in links} == {"mixed"}
        assert session.scalar(select(Candidate).where(Candidate.status != "accepted")) is None


def test_a_second_source_after_acceptance_raises_the_fact(client, feeds, admin_headers):
    feeds(
        "first-press",
        "press",
        [story("f1", "Lightmatter raises $400M Series D, valuing photonic chip start-up at $4.4B")],
    )
    cand = only(client, kind="funding")
    accepted = client.post(f"/v1/candidates/{cand['id']}/accept", headers=admin_headers).json()
    fact_id = accepted["fact_ref"]["id"]
    assert client.get(f"/v1/funding-rounds/{fact_id}").json()["verification"] == "vendor_reported"

    feeds(
        "second-press",
        "analyst",
        [story("s1", "Lightmatter raises $400 million in Series D at $4.4 billion valuation")],
    )
    again = client.get(f"/v1/candidates/{cand['id']}").json()
    assert (again["status"], again["verification"], len(again["items"])) == ("accepted", "witnessed", 2)
    round_ = client.get(f"/v1/funding-rounds/{fact_id}").json()
    assert round_["verification"] == "witnessed"
    assert [p["source_id"] for p in round_["attributes"]["provenance_items"]] == [
        "first-press",
        "second-press",
    ]
    history = client.get(f"/v1/funding-rounds/{fact_id}/history").json()["items"]
    assert [(h["action"], h["field"], h["actor"]) for h in history] == [
        ("created", None, "admin"),
        ("updated", "attributes.provenance_items", "news"),
        ("updated", "verification", "news"),
    ]
