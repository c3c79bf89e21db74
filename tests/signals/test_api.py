"""The signals API: definitions (create, change, refusals), the manual flow, history and versions, the
board's filters and cache, the Atom feed read by a feed reader, and the ``chipwatch signals`` table."""

from __future__ import annotations

from datetime import UTC, datetime

import feedparser
import pytest
from typer.testing import CliRunner

from tests.fixtures.signals import AFTER, definition, events, publish, state

PROBLEM = "application/problem+json"


def post(client, headers, body):
    return client.post("/v1/signals", json=body, headers=headers)


# ---------------------------------------------------------------------------------------------------
# Create and change


def test_create_needs_the_admin_token(client):
    assert post(client, {}, definition("new-one")).status_code == 401


def test_create_stores_evaluates_and_shows_on_the_board(client, admin_headers):
    before = client.get("/v1/signals?limit=500").json()["items"]
    r = post(client, admin_headers, definition("new-one", deadline="2030-01-01"))
    assert r.status_code == 201, r.text
    assert r.headers["location"] == "/v1/signals/new-one"
    body = r.json()
    assert (body["status"], body["outcome"], body["version"], body["evidence"]) == ("open", None, 0, [])
    assert body["deadline"] == "2030-01-01" and body["watch_health"] in ("ok", "degraded", "blind")
    after = client.get("/v1/signals?limit=500").json()["items"]
    assert len(after) == len(before) + 1 and "new-one" in {s["id"] for s in after}
    assert client.get("/v1/signals/new-one").json()["yes_when"] == definition()["yes_when"]


def test_create_resolves_on_stored_items(client, admin_headers, feeds):
    publish("Jalapeño shipped to the first customers", published_at=AFTER)
    body = post(client, admin_headers, definition("shipped")).json()
    assert (body["status"], body["outcome"], body["version"]) == ("resolved", "yes", 1)
    assert body["known_at"] == "2026-09-03T08:30:00+00:00"
    assert body["evidence"][0]["ref_kind"] == "item"
    assert client.get("/v1/signals?status=resolved&outcome=yes").json()["items"][0]["id"] == "shipped"


def test_create_after_the_deadline_resolves_to_on_deadline(client, admin_headers):
    body = post(
        client, admin_headers, definition("lapsed", deadline="2026-08-30", on_deadline="annulled")
    ).json()
    assert (body["status"], body["outcome"]) == ("resolved", "annulled")
    [h] = client.get("/v1/signals/lapsed/history").json()["items"]
    assert h["cause"] == "deadline"


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"id": "Bad Id"}, "id", "must be a slug"),
        ({"question": ""}, "question", ""),
        ({"review": "sometimes"}, "review", "must be one of"),
        ({"on_deadline": False}, "on_deadline", 'write "no" with quotes'),
        ({"deadline": "2026-02-30"}, "deadline", "not a valid calendar date"),
        ({"deadline": "2026-08-01"}, "deadline", "must not be before opened_on"),
        ({"yes_when": []}, "yes_when", "at least one condition"),
        (
            {"yes_when": [{"item": {"mentions_all": ["jalapeno"]}, "result": {"chip": "jalapeno"}}]},
            "yes_when.0",
            "",
        ),
        (
            {"yes_when": [{"item": {"number": {"unit": "furlongs", "gte": 1}}}]},
            "yes_when.0.item.number.unit",
            "",
        ),
        (
            {"yes_when": [{"item": {"number": {"unit": "MW", "gte": 5, "lte": 1}}}]},
            "yes_when.0.item.number",
            "",
        ),
        (
            {"yes_when": [{"item": {"mention_all": ["jalapeno"]}}]},
            "yes_when.0.item.mention_all",
            "did you mean",
        ),
        ({"no_when": [{"result": {"verification": "trusted"}}]}, "no_when.0.result.verification", ""),
        ({"colour": "red"}, "colour", "unknown key"),
    ],
)
def test_bad_definitions_are_refused_naming_the_field(client, admin_headers, change, field, words):
    r = post(client, admin_headers, {**definition("refused"), **change})
    assert r.status_code == 422, r.text
    assert r.headers["content-type"].startswith(PROBLEM)
    problem = r.json()
    assert problem["status"] == 422 and problem["errors"][0]["field"] == field
    assert words in problem["errors"][0]["message"]
    assert problem["detail"].startswith(f"{field}: ")
    assert client.get("/v1/signals/refused").status_code == 404


@pytest.mark.parametrize(
    ("change", "field", "named"),
    [
        ({"subjects": ["jalapeno", "jalapeno-2"]}, "subjects.1", "'jalapeno-2'"),
        (
            {"yes_when": [{"item": {"mentions_any": ["gb3000"]}}]},
            "yes_when.0.item.mentions_any.0",
            "'gb3000'",
        ),
        (
            {"yes_when": [{"result": {"chip": "vera-rubin", "benchmark": "mlperf-x"}}]},
            "yes_when.0.result.benchmark",
            "'mlperf-x'",
        ),
        ({"yes_when": [{"deployment": {"operator": "acme"}}]}, "yes_when.0.deployment.operator", "'acme'"),
        (
            {"yes_when": [{"item": {"mentions_any": ["jalapeno"], "sources": ["no-such-feed"]}}]},
            "yes_when.0.item.sources.0",
            "'no-such-feed'",
        ),
    ],
)
def test_unknown_ids_are_refused_naming_the_id(client, admin_headers, change, field, named):
    r = post(client, admin_headers, {**definition("refused"), **change})
    assert r.status_code == 422
    err = r.json()["errors"][0]
    assert err["field"] == field and named in err["message"] and "unknown" in err["message"]


def test_a_body_that_is_not_an_object_is_refused(client, admin_headers):
    r = client.post("/v1/signals", json=["not", "a", "definition"], headers=admin_headers)
    assert r.status_code == 422 and r.headers["content-type"].startswith(PROBLEM)


def test_a_taken_id_is_a_conflict(client, admin_headers):
    r = post(client, admin_headers, definition("vera-rubin-scorecard"))
    assert r.status_code == 409 and r.headers["content-type"].startswith(PROBLEM)
    assert "vera-rubin-scorecard" in r.json()["detail"]


def test_patch_changes_definition_fields_and_keeps_state(client, admin_headers):
    post(client, admin_headers, definition("editable"))
    r = client.patch(
        "/v1/signals/editable",
        json={"question": "Does it ship?", "tags": ["shipping"]},
        headers=admin_headers,
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["question"] == "Does it ship?" and body["tags"] == ["shipping"] and body["version"] == 0
    assert (
        client.patch("/v1/signals/editable", json={"deadline": None}, headers=admin_headers).json()[
            "deadline"
        ]
        is None
    )


def test_patch_refusals(client, admin_headers):
    assert client.patch("/v1/signals/nope", json={"question": "x?"}, headers=admin_headers).status_code == 404
    assert client.patch("/v1/signals/vera-rubin-scorecard", json={"question": "x?"}).status_code == 401
    r = client.patch("/v1/signals/vera-rubin-scorecard", json={"id": "other"}, headers=admin_headers)
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "id"
    r = client.patch("/v1/signals/vera-rubin-scorecard", json={"subjects": ["nobody"]}, headers=admin_headers)
    assert r.status_code == 422 and "'nobody'" in r.json()["errors"][0]["message"]
    assert client.get("/v1/signals/vera-rubin-scorecard").json()["subjects"][0] == "vera-rubin"


def test_patch_conditions_evaluates_again(client, admin_headers, feeds):
    post(client, admin_headers, definition("retuned"))
    publish("Jalapeño enters volume production")
    assert state("retuned") == ("open", None, 0)
    change = {"yes_when": [{"item": {"mentions_all": ["jalapeno"], "terms_any": ["volume production"]}}]}
    body = client.patch("/v1/signals/retuned", json=change, headers=admin_headers).json()
    assert (body["status"], body["outcome"], body["version"]) == ("resolved", "yes", 1)


# ---------------------------------------------------------------------------------------------------
# The manual flow, history and versions


def _move(client, headers, sid, action, **body):
    return client.post(f"/v1/signals/{sid}/{action}", json=body, headers=headers)


def test_manual_flow_with_history_versions_and_events(client, admin_headers, feeds):
    post(client, admin_headers, definition("manual", review="manual"))
    publish("Jalapeño shipped", published_at=datetime(2026, 9, 4, tzinfo=UTC))
    assert state("manual") == ("pending_review", None, 1)

    r = _move(client, admin_headers, "manual", "resolve", outcome="yes", note="confirmed with the vendor")
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["status"], body["outcome"], body["version"]) == ("resolved", "yes", 2)
    assert body["known_at"] == "2026-09-04T00:00:00+00:00" and body["resolved_at"]

    conflict = _move(client, admin_headers, "manual", "resolve", outcome="no")
    assert conflict.status_code == 409 and conflict.headers["content-type"].startswith(PROBLEM)
    assert "resolved" in conflict.json()["detail"]
    assert _move(client, admin_headers, "manual", "reject").status_code == 409

    body = _move(client, admin_headers, "manual", "reopen", note="the shipment was a demo").json()
    assert (body["status"], body["outcome"], body["version"], body["resolved_at"], body["known_at"]) == (
        "open",
        None,
        3,
        None,
        None,
    )
    assert _move(client, admin_headers, "manual", "reopen").status_code == 409

    publish("Jalapeño shipped for real")
    assert state("manual") == ("pending_review", None, 4)
    body = _move(client, admin_headers, "manual", "reject", note="still a demo").json()
    assert (body["status"], body["version"]) == ("open", 5)
    assert _move(client, admin_headers, "manual", "reject").status_code == 409

    body = _move(
        client, admin_headers, "manual", "resolve", outcome="annulled", note="question withdrawn"
    ).json()
    assert (body["status"], body["outcome"], body["version"]) == ("resolved", "annulled", 6)

    items = client.get("/v1/signals/manual/history").json()["items"]
    assert [(h["version"], h["from_status"], h["to_status"], h["to_outcome"], h["cause"]) for h in items] == [
        (1, "open", "pending_review", None, "rule:0"),
        (2, "pending_review", "resolved", "yes", "manual"),
        (3, "resolved", "open", None, "manual"),
        (4, "open", "pending_review", None, "rule:0"),
        (5, "pending_review", "open", None, "manual"),
        (6, "open", "resolved", "annulled", "manual"),
    ]
    assert (
        items[1]["note"] == "confirmed with the vendor"
        and items[1]["evidence_ids"] == items[0]["evidence_ids"]
    )
    assert items[2]["note"] == "the shipment was a demo"
    assert items[0]["known_at"] == "2026-09-04T00:00:00+00:00"
    changed = [e.data for e in events("manual", "signal.status_changed")]
    assert [c["version"] for c in changed] == [1, 2, 3, 4, 5, 6]
    assert [c["cause"] for c in changed] == ["rule:0", "manual", "manual", "rule:0", "manual", "manual"]
    assert len(events("manual", "signal.evidence_added")) == 2


def test_resolve_from_open_and_refusals(client, admin_headers):
    sid = "vera-rubin-scorecard"
    assert _move(client, {}, sid, "resolve", outcome="no").status_code == 401
    assert _move(client, admin_headers, "nope", "resolve", outcome="no").status_code == 404
    r = _move(client, admin_headers, sid, "resolve", outcome="maybe")
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "outcome"
    body = _move(client, admin_headers, sid, "resolve", outcome="no", note="NVIDIA said it will not").json()
    assert (body["status"], body["outcome"], body["version"], body["known_at"]) == ("resolved", "no", 1, None)
    assert client.get("/v1/signals?status=resolved").json()["items"][0]["id"] == sid
    assert client.get("/v1/signals?outcome=no").json()["items"][0]["id"] == sid
    assert [s["id"] for s in client.get("/v1/signals?status=pending_review").json()["items"]] == []


def test_reject_and_reopen_accept_no_body(client, admin_headers):
    sid = "vera-rubin-scorecard"
    _move(client, admin_headers, sid, "resolve", outcome="yes")
    r = client.post(f"/v1/signals/{sid}/reopen", headers=admin_headers)
    assert r.status_code == 200 and r.json()["status"] == "open"


# ---------------------------------------------------------------------------------------------------
# The Atom feed


def test_atom_feed_of_transitions_for_a_feed_reader(client, admin_headers, feeds):
    empty = client.get("/v1/signals.atom")
    assert empty.status_code == 200 and empty.headers["content-type"].startswith("application/atom+xml")
    parsed = feedparser.parse(empty.content)
    assert not parsed.bozo and parsed.version == "atom10" and parsed.entries == []

    _move(
        client,
        admin_headers,
        "vera-rubin-scorecard",
        "resolve",
        outcome="no",
        note="dropped <b>plans</b> & more",
    )
    publish("Lab reproduces Jalapeño's 104.3x figure", "We reproduced 104.3x per kW.", source="lab-feed")
    first = client.get("/v1/signals.atom")
    parsed = feedparser.parse(first.content)
    assert not parsed.bozo, parsed.bozo_exception
    assert parsed.feed.id == "tag:chipwatch,2026:signals" and parsed.feed.title
    assert [e.id for e in parsed.entries] == [
        "tag:chipwatch,2026:signal/jalapeno-104x-reproduced/v1",
        "tag:chipwatch,2026:signal/vera-rubin-scorecard/v1",
    ]
    newest = parsed.entries[0]
    assert newest.title == "jalapeno-104x-reproduced: resolved (yes) (v1)"
    assert newest.link == "http://testserver/v1/signals/jalapeno-104x-reproduced"
    assert "open -> resolved (yes)" in newest.summary and "cause: rule:" in newest.summary
    assert newest.updated_parsed is not None
    assert "dropped <b>plans</b> & more" in parsed.entries[1].summary  # text, escaped and read back as such
    assert parsed.feed.updated == newest.updated

    # Conditional polling: unchanged answers 304; a new transition adds one entry, old ids stay put.
    etag = first.headers["etag"]
    assert client.get("/v1/signals.atom", headers={"If-None-Match": etag}).status_code == 304
    _move(client, admin_headers, "vera-rubin-scorecard", "reopen", note="plans back on")
    second = feedparser.parse(client.get("/v1/signals.atom", headers={"If-None-Match": etag}).content)
    assert [e.id for e in second.entries][0] == "tag:chipwatch,2026:signal/vera-rubin-scorecard/v2"
    assert [e.id for e in second.entries][1:] == [e.id for e in parsed.entries]

    one = feedparser.parse(client.get("/v1/signals.atom?signal=vera-rubin-scorecard").content)
    assert [e.id.rsplit("/", 1)[1] for e in one.entries] == ["v2", "v1"]
    assert one.feed.id == "tag:chipwatch,2026:signal/vera-rubin-scorecard"
    assert client.get("/v1/signals.atom?signal=nope").status_code == 404
    assert len(feedparser.parse(client.get("/v1/signals.atom?limit=1").content).entries) == 1


def test_atom_feed_is_well_formed_atom(client, admin_headers):
    import xml.etree.ElementTree as ET

    _move(client, admin_headers, "vera-rubin-scorecard", "resolve", outcome="yes")
    root = ET.fromstring(client.get("/v1/signals.atom").content)
    ns = "{http://www.w3.org/2005/Atom}"
    assert root.tag == f"{ns}feed"
    for required in ("id", "title", "updated", "author"):
        assert root.find(f"{ns}{required}") is not None
    [entry] = root.findall(f"{ns}entry")
    for required in ("id", "title", "updated", "summary"):
        assert entry.find(f"{ns}{required}") is not None
    assert {link.get("rel") for link in entry.findall(f"{ns}link")} == {"alternate", "related"}
    assert root.find(f"{ns}link[@rel='self']") is not None


# ---------------------------------------------------------------------------------------------------
# The command line


def test_cli_signals_table(client, admin_headers):
    from chipwatch.cli import app

    _move(client, admin_headers, "vera-rubin-scorecard", "resolve", outcome="no")
    result = CliRunner().invoke(app, ["signals"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    lines = {line.split("│")[1].strip(): line for line in result.output.splitlines() if line.count("│") > 3}
    assert "resolved" in lines["vera-rubin-scorecard"] and " no " in lines["vera-rubin-scorecard"]
    assert "2026-12-31" in lines["jalapeno-100mw-2026"] and "open" in lines["jalapeno-100mw-2026"]
    assert len([k for k in lines if k != "id"]) == 10


def test_extreme_dates_do_not_break_evaluation(client, admin_headers):
    """The first and last representable dates reach the evaluator as facts and deadlines."""
    result = {
        "id": "r-edge",
        "benchmark_id": "agentx",
        "chip_ids": ["jalapeno"],
        "metric": "m",
        "value": 1e308,
    }
    result |= {"published_on": "9999-12-31", "as_of": "9999-12-31"}
    assert client.post("/v1/results", json=result, headers=admin_headers).status_code == 201
    deployment = {"id": "d-edge", "chip_id": "jalapeno", "capacity_mw": 1e308}
    deployment |= {"as_of": "0001-01-01", "published_on": "9999-12-31"}
    assert client.post("/v1/deployments", json=deployment, headers=admin_headers).status_code == 201
    edge = definition(
        "edge", deadline="9999-12-31", opened_on="0001-01-01", yes=[{"result": {"chip": "jalapeno"}}]
    )
    body = post(client, admin_headers, edge).json()
    assert (body["status"], body["outcome"]) == ("resolved", "yes")
    # The seeded Jalapeño results were published first; the far-future one is evidence too.
    assert body["known_at"] == "2026-08-26T00:00:00+00:00"
    assert "r-edge" in {e["ref_id"] for e in body["evidence"]}
