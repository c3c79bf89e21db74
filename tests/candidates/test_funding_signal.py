"""Signals over funding rounds: the ``funding`` condition (vendor, round type, status, amount and
post-money valuation bounds in a currency, date), checked by the matcher on its own, refused when
malformed, and end to end: a signal that requires a fact resolves when an analyst accepts the funding
candidate two feeds carried."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

import pytest

from chipwatch.signals.definition import DefinitionError, validate_definition
from chipwatch.signals.rules import FactView, compile_signals
from chipwatch.text.entities import Entity
from tests.fixtures.sources import Entry, add_source, rss, run_check

ENTITIES = [Entity("biren", ["Biren"]), Entity("metax", ["MetaX"])]
KNOWN = {e.id for e in ENTITIES}


def definition(signal_id: str, *conditions: dict, require_fact: bool = False) -> dict:
    return {
        "id": signal_id,
        "question": "Does Biren close a round at a valuation of at least USD 5 billion?",
        "opened_on": "2026-08-25",
        "require_fact": require_fact,
        "subjects": ["biren"],
        "yes_when": list(conditions),
    }


def matches(condition: dict, fields: dict) -> list[str]:
    defn = validate_definition(definition("biren-5b", {"funding": condition}), known_entities=KNOWN)
    rules = compile_signals([defn], ENTITIES)
    return [m.reason for m in rules.match_fact(FactView("funding", "biren-series-c", fields))]


ROUND = {
    "vendor_id": "biren", "round_type": "series_c", "status": "closed", "amount": 700e6, "currency": "USD",
    "post_money_valuation": 6e9, "announced_on": date(2026, 12, 10),
}


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ({"vendor": "biren", "post_money_valuation_gte": 5e9, "currency": "USD"},
         "funding round biren-series-c: vendor biren; post-money valuation 6e+09 USD >= 5e+09 USD"),
        ({"vendor": "biren", "amount_gte": 700e6},
         "funding round biren-series-c: vendor biren; amount 7e+08 USD >= 7e+08 USD"),
        ({"round_type": ["series_b", "series_c"], "status": "closed"},
         "funding round biren-series-c: round series_c; status closed"),
        ({"round_type": "series_c", "by": "2026-12-31"},
         "funding round biren-series-c: round series_c; announced 2026-12-10 (by 2026-12-31)"),
        ({"vendor": "metax"}, None),
        ({"vendor": "biren", "post_money_valuation_gte": 6.5e9}, None),
        ({"vendor": "biren", "amount_gte": 1e9}, None),
        ({"vendor": "biren", "currency": "CNY"}, None),
        ({"vendor": "biren", "status": "in_discussion"}, None),
        ({"round_type": "seed"}, None),
        ({"vendor": "biren", "by": "2026-12-09"}, None),
    ],
)
def test_funding_condition_reads_the_round(condition, expected):
    assert matches(condition, ROUND) == ([expected] if expected else [])


def test_a_round_without_the_figure_or_retracted_satisfies_no_bound():
    assert matches({"post_money_valuation_gte": 1}, {**ROUND, "post_money_valuation": None}) == []
    assert matches({"vendor": "biren"}, {**ROUND, "retracted_at": datetime(2026, 12, 11, tzinfo=UTC)}) == []


@pytest.mark.parametrize(
    ("condition", "field", "words"),
    [
        ({}, "yes_when.0.funding", "at least one constraint"),
        ({"vendor": "etched"}, "yes_when.0.funding.vendor", "etched"),
        ({"vendor": "biren", "currency": "usd"}, "yes_when.0.funding.currency", ""),
        ({"vendor": "biren", "amount_gte": -1}, "yes_when.0.funding.amount_gte", ""),
        ({"vendor": "biren", "valuation_gte": 1}, "yes_when.0.funding.valuation_gte",
         "did you mean 'post_money_valuation_gte'"),
    ],
)
def test_a_bad_funding_condition_is_refused_naming_the_field(condition, field, words):
    with pytest.raises(DefinitionError) as caught:
        validate_definition(definition("bad", {"funding": condition}), known_entities=KNOWN)
    # a field path may write a list index as [0] or as .0
    problems = [(re.sub(r"\[(\d+)\]", r".\1", f), message) for f, message in caught.value.problems]
    assert any(f == field.replace("[0]", ".0") and words in message for f, message in problems), problems


@pytest.fixture
def httpserver(httpserver_ipv4):
    return httpserver_ipv4


def test_accepting_the_funding_candidate_resolves_the_signal(client, httpserver, admin_headers):
    conditions = (
        {"item": {"mentions_all": ["biren"], "terms_any": ["raises"]}},
        {"funding": {"vendor": "biren", "status": "closed", "post_money_valuation_gte": 5e9,
                     "currency": "USD"}},
    )
    r = client.post("/v1/signals", json=definition("biren-5b", *conditions, require_fact=True),
                    headers=admin_headers)
    assert r.status_code == 201, r.text
    story = "Biren Technology raises $700 million at a $6 billion valuation"
    for source_id in ("wire", "daily"):
        body = rss([Entry(story, guid=f"{source_id}-1", link=f"https://{source_id}.example/biren",
                          body="The Shanghai GPU maker closed its Series C round, the company said.",
                          date=datetime(2026, 12, 10, 9, tzinfo=UTC))])
        httpserver.expect_request(f"/{source_id}.xml").respond_with_data(
            body, content_type="application/rss+xml"
        )
        add_source(source_id, httpserver.url_for(f"/{source_id}.xml"), trust="press")
        assert run_check(source_id).status == "ok"

    waiting = client.get("/v1/signals/biren-5b").json()
    assert (waiting["status"], waiting["outcome"]) == ("open", None)
    assert {e["ref_kind"] for e in waiting["evidence"]} == {"item"}

    (candidate,) = client.get("/v1/candidates", params={"kind": "funding"}).json()["items"]
    assert candidate["fact"]["vendor_id"] == "biren" and candidate["fact"]["post_money_valuation"] == 6e9
    r = client.post(f"/v1/candidates/{candidate['id']}/accept", headers=admin_headers)
    assert r.status_code == 200, r.text
    fact_id = r.json()["fact_ref"]["id"]

    decided = client.get("/v1/signals/biren-5b").json()
    assert (decided["status"], decided["outcome"]) == ("resolved", "yes")
    funding = [e for e in decided["evidence"] if e["ref_kind"] == "funding"]
    assert [e["ref_id"] for e in funding] == [fact_id]
    assert "post-money valuation 6e+09 USD >= 5e+09 USD" in funding[0]["reason"]
    moves = client.get("/v1/signals/biren-5b/history").json()["items"]
    assert [m["cause"] for m in moves] == ["rule:1"]

    # Retracting the round withdraws the move it made; the item evidence cannot decide the signal alone.
    r = client.delete(f"/v1/funding-rounds/{fact_id}", headers=admin_headers)
    assert r.status_code == 200, r.text
    reopened = client.get("/v1/signals/biren-5b").json()
    assert (reopened["status"], reopened["outcome"]) == ("open", None)
    moves = client.get("/v1/signals/biren-5b/history").json()["items"]
    assert [(m["to_status"], m["cause"]) for m in moves] == [("resolved", "rule:1"), ("open", "retraction")]
