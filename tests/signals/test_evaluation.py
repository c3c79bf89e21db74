"""Evaluation against the database: every condition kind end to end, English and Chinese text, units,
trust levels, facts written through the API, known_at, evidence after resolution, events, the rules
cache, and the rule that vendor words never resolve an independence signal."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import jsonschema
import pytest

from chipwatch.db import session_scope
from chipwatch.signals import rules_cache, service
from tests.fixtures.signals import (
    add_item,
    create,
    evaluate,
    events,
    evidence,
    history,
    publish,
    signal,
    state,
)

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "schema" / "events"
OPEN0 = ("open", None, 0)
YES1 = ("resolved", "yes", 1)


# ---------------------------------------------------------------------------------------------------
# Item conditions, one kind at a time


ITEM_CASES = [
    # (condition, title, text, publish options, resolves?)
    ({"mentions_all": ["jalapeno", "gb200"]}, "Jalapeño beats GB200", "", {}, True),
    ({"mentions_all": ["jalapeno", "gb200"]}, "Jalapeño alone", "no baseline named", {}, False),
    ({"mentions_any": ["jalapeno", "xiwang-s3"]}, "曦望S3开始交付", "国产推理芯片", {}, True),
    ({"mentions_any": ["jalapeno"]}, "墨西哥辣椒芯片亮相", "OpenAI自研推理芯片", {}, True),
    ({"mentions_any": ["jalapeno"]}, "Jalapenos on pizza", "a pepper, plural", {}, False),
    (
        {"mentions_all": ["jalapeno"], "terms_all": ["deployed", "data center"]},
        "Jalapeno deployed",
        "in its first data-center",
        {},
        True,
    ),
    (
        {"mentions_all": ["jalapeno"], "terms_all": ["deployed", "data center"]},
        "Jalapeno deployed",
        "",
        {},
        False,
    ),
    (
        {"mentions_all": ["jalapeno"], "terms_any": ["reproduc*", "复现"]},
        "第三方复现了墨西哥辣椒的成绩",
        "",
        {},
        True,
    ),
    ({"mentions_all": ["jalapeno"], "terms_any": ["reproduc*"]}, "Lab reproduces Jalapeño", "", {}, True),
    (
        {"mentions_all": ["jalapeno"], "terms_any": ["reproduc*"], "terms_none": ["not reproduced"]},
        "Jalapeño figure not reproduced",
        "",
        {},
        False,
    ),
    (
        {"mentions_any": ["jalapeno"], "number": {"unit": "MW", "gte": 100}},
        "Jalapeno fleet at 120 MW",
        "",
        {},
        True,
    ),
    (
        {"mentions_any": ["jalapeno"], "number": {"unit": "MW", "gte": 100}},
        "Jalapeno fleet at 80MW",
        "",
        {},
        False,
    ),
    (
        {"mentions_any": ["jalapeno"], "number": {"unit": "MW", "gte": 100}},
        "墨西哥辣椒部署达到100兆瓦",
        "",
        {},
        True,
    ),
    (
        {"mentions_any": ["jalapeno"], "number": {"unit": "MW", "gte": 100}},
        "Jalapeno capacity 0.2 GW",
        "",
        {},
        True,
    ),
    (
        {"mentions_any": ["jalapeno"], "number": {"unit": "MW", "gte": 100}},
        "墨西哥辣椒容量达0.2吉瓦",
        "",
        {},
        True,
    ),
    ({"mentions_any": ["jalapeno"], "number": {"unit": "GW", "gte": 1}}, "Jalapeno at 900 MW", "", {}, False),
    (
        {"mentions_any": ["jalapeno"], "number": {"unit": "W", "lte": 1000}},
        "Jalapeno board draws 750 W",
        "",
        {},
        True,
    ),
    (
        {"mentions_any": ["jalapeno"], "number": {"unit": "tok/s", "gte": 1000}},
        "Jalapeno serves 1,459 tok/s",
        "",
        {},
        True,
    ),
    (
        {"mentions_any": ["jalapeno"], "number": {"unit": "ms", "lte": 50}},
        "Jalapeno latency",
        "首token 35毫秒",
        {},
        True,
    ),
    (
        {"mentions_any": ["jalapeno"], "number": {"unit": "ms", "lte": 50}},
        "Jalapeno latency 80 ms",
        "",
        {},
        False,
    ),
    (
        {"mentions_any": ["jalapeno"], "number": {"unit": "x", "gte": 100}},
        "墨西哥辣椒能效提升104.3倍",
        "",
        {},
        True,
    ),
    (
        {"mentions_any": ["jalapeno"], "number": {"unit": "x", "gte": 100}},
        "Jalapeno 104.3x per kW",
        "",
        {},
        True,
    ),
    ({"mentions_any": ["xiwang"], "number": {"unit": "CNY", "gte": 1e9}}, "曦望完成20亿元融资", "", {}, True),
    (
        {"mentions_any": ["xiwang"], "number": {"unit": "CNY", "gte": 1e9}},
        "曦望完成5000万元融资",
        "",
        {},
        False,
    ),
    (
        {"mentions_any": ["openai"], "number": {"unit": "USD", "gte": 1e10}},
        "OpenAI raises $20 billion",
        "",
        {},
        True,
    ),
    (
        {"mentions_any": ["openai"], "number": {"unit": "USD", "gte": 1e10}},
        "OpenAI 融资200亿美元",
        "",
        {},
        True,
    ),
    (
        {"mentions_any": ["jalapeno"], "sources": ["lab-feed"]},
        "Jalapeno",
        "",
        {"source": "press-feed"},
        False,
    ),
    ({"mentions_any": ["jalapeno"], "sources": ["lab-feed"]}, "Jalapeno", "", {"source": "lab-feed"}, True),
    (
        {"mentions_any": ["jalapeno"], "source_trust": ["independent", "analyst"]},
        "Jalapeno",
        "",
        {"source": "vendor-feed"},
        False,
    ),
    (
        {"mentions_any": ["jalapeno"], "source_trust": ["independent", "analyst"]},
        "Jalapeno",
        "",
        {"source": "press-feed"},
        False,
    ),
    (
        {"mentions_any": ["jalapeno"], "source_trust": ["independent", "analyst"]},
        "Jalapeno",
        "",
        {"source": "analyst-feed"},
        True,
    ),
    ({"mentions_any": ["jalapeno"], "published_after": "2026-09-01"}, "Jalapeno", "", {}, True),
    (
        {"mentions_any": ["jalapeno"], "published_after": "2026-09-01"},
        "Jalapeno",
        "",
        {"published_at": datetime(2026, 8, 31, 23, 59, tzinfo=UTC)},
        False,
    ),
    # A first-seen time stands in for a missing date and proves nothing about when it was published.
    (
        {"mentions_any": ["jalapeno"], "published_after": "2026-09-01"},
        "Jalapeno",
        "",
        {"estimated": True},
        False,
    ),
]


@pytest.mark.parametrize(("condition", "title", "text", "options", "resolves"), ITEM_CASES)
def test_item_condition_end_to_end(feeds, condition, title, text, options, resolves):
    create("cond", yes=[{"item": condition}], subjects=["jalapeno"])
    report = publish(title, text, **options)
    assert state("cond") == (YES1 if resolves else OPEN0)
    assert bool([e for e in evidence("cond")]) is resolves
    assert [t.signal_id for t in report.transitions if t.signal_id == "cond"] == (
        ["cond"] if resolves else []
    )


def test_no_when_resolves_no_and_evidence_records_trust_and_publication(feeds):
    create(
        "ship",
        yes=[{"item": {"mentions_all": ["xiwang-s3"], "terms_any": ["大规模交付", "shipped in volume"]}}],
        no=[{"item": {"mentions_all": ["xiwang-s3"], "terms_any": ["推迟", "delay*"]}}],
        subjects=["xiwang-s3"],
    )
    published = datetime(2026, 9, 5, 3, 0, tzinfo=UTC)
    publish("曦望S3交付推迟至明年", "受产能影响", source="analyst-feed", published_at=published)
    assert state("ship") == ("resolved", "no", 1)
    [ev] = evidence("ship")
    assert (ev.ref_kind, ev.side, ev.condition_index, ev.trust, ev.source_id) == (
        "item",
        "no",
        0,
        "analyst",
        "analyst-feed",
    )
    assert (
        ev.published_at == published and ev.title == "曦望S3交付推迟至明年" and ev.url.startswith("https://")
    )
    assert "曦望S3" in ev.reason and '"推迟"' in ev.reason
    [h] = history("ship")
    assert (h.from_status, h.to_status, h.to_outcome, h.cause, h.version) == (
        "open",
        "resolved",
        "no",
        "rule:0",
        1,
    )
    assert h.evidence_ids == [ev.id] and h.known_at == published
    assert h.note.startswith("no_when[0] matched")


def test_known_at_is_the_earliest_publication_of_the_deciding_evidence(feeds):
    create("kk", yes=[{"item": {"mentions_any": ["jalapeno"], "terms_any": ["shipped"]}}])
    later = add_item("Jalapeno shipped", published_at=datetime(2026, 9, 10, tzinfo=UTC))
    earlier = add_item("Jalapeño shipped, a report says", published_at=datetime(2026, 9, 8, tzinfo=UTC))
    undated = add_item("Jalapeno shipped!", estimated=True, first_seen_at=datetime(2026, 9, 7, tzinfo=UTC))
    before = datetime.now(UTC)
    evaluate(later, earlier, undated)
    row = signal("kk")
    assert (row.status, row.outcome) == ("resolved", "yes")
    assert row.known_at == datetime(2026, 9, 8, tzinfo=UTC)  # the estimated date never counts as news
    assert row.resolved_at >= before
    [h] = history("kk")
    assert sorted(h.evidence_ids) == sorted(e.id for e in evidence("kk")) and len(h.evidence_ids) == 3
    assert [e.published_at for e in evidence("kk") if e.ref_id == str(undated)] == [None]


def test_known_at_stays_unknown_when_only_estimated_dates(feeds):
    create("kk", yes=[{"item": {"mentions_any": ["jalapeno"], "terms_any": ["shipped"]}}])
    publish("Jalapeno shipped", estimated=True)
    row = signal("kk")
    assert row.status == "resolved" and row.known_at is None and row.resolved_at is not None


def test_evidence_keeps_accruing_after_resolution_without_moving(feeds):
    create("acc", yes=[{"item": {"mentions_any": ["jalapeno"], "terms_any": ["shipped"]}}])
    publish("Jalapeno shipped")
    assert state("acc") == YES1
    publish("墨西哥辣椒 shipped again", source="lab-feed")
    publish("Jalapeno shipped, third report", source="vendor-feed")
    assert state("acc") == YES1
    assert len(evidence("acc")) == 3 and len(history("acc")) == 1
    added = [e.data for e in events("acc", "signal.evidence_added")]
    assert [(d["status"], d["outcome"], d["version"]) for d in added] == [
        ("open", None, 0),
        ("resolved", "yes", 1),
        ("resolved", "yes", 1),
    ]
    assert len(events("acc", "signal.status_changed")) == 1


def test_evaluating_the_same_items_again_changes_nothing(feeds):
    create("again", yes=[{"item": {"mentions_any": ["jalapeno"], "terms_any": ["shipped"]}}])
    item = add_item("Jalapeno shipped")
    first = evaluate(item)
    second = evaluate(item)
    assert len(first.evidence_ids) == 1 and first.transitions
    assert second.matches == 1 and second.evidence_ids == [] and second.transitions == []
    assert len(events("again")) == 2  # one evidence_added, one status_changed


def _validator(event_type: str) -> jsonschema.Draft202012Validator:
    schema = json.loads((SCHEMA_DIR / f"{event_type}.schema.json").read_text())
    return jsonschema.Draft202012Validator(schema)


def test_event_rows_for_each_move_validate_against_their_schemas(feeds):
    create("ev", yes=[{"item": {"mentions_any": ["jalapeno"], "terms_any": ["shipped"]}}])
    publish("Jalapeno shipped", published_at=datetime(2026, 9, 4, 12, 0, tzinfo=UTC))
    rows = events("ev")
    assert [e.type for e in rows] == ["signal.evidence_added", "signal.status_changed"]
    for row in rows:
        payload = {"type": row.type, "timestamp": row.created_at.isoformat(), "data": row.data}
        assert list(_validator(row.type).iter_errors(payload)) == []
    changed = rows[1].data
    assert changed["previous"] == {"status": "open", "outcome": None}
    assert changed["current"] == {"status": "resolved", "outcome": "yes"}
    assert changed["version"] == 1 and changed["cause"] == "rule:0"
    assert changed["known_at"] == "2026-09-04T12:00:00Z"
    assert [e["id"] for e in changed["evidence"]] == [evidence("ev")[0].id]


# ---------------------------------------------------------------------------------------------------
# Fact conditions, written through the API


def _result(**fields) -> dict:
    body = {
        "id": "r-test",
        "benchmark_id": "inferencex",
        "chip_ids": ["jalapeno"],
        "baseline_ids": ["gb200"],
        "metric": "throughput_per_kw_ratio",
        "value": 104.3,
        "unit": "x",
        "reported_by": "openai",
        "verification": "vendor_reported",
        "source_id": "36kr",
        "published_on": "2026-09-12",
    }
    body.update(fields)
    return body


def test_result_condition_resolves_on_a_matching_fact(client, admin_headers):
    assert state("jalapeno-agentx-results") == OPEN0
    body = _result(id="r-agentx", benchmark_id="agentx", metric="output_tokens_per_second", value=900)
    assert client.post("/v1/results", json=body, headers=admin_headers).status_code == 201
    assert state("jalapeno-agentx-results") == YES1
    [ev] = evidence("jalapeno-agentx-results")
    assert (ev.ref_kind, ev.ref_id, ev.trust, ev.source_id) == (
        "result",
        "r-agentx",
        "vendor_reported",
        "36kr",
    )
    assert ev.published_at == datetime(2026, 9, 12, tzinfo=UTC)
    assert signal("jalapeno-agentx-results").known_at == datetime(2026, 9, 12, tzinfo=UTC)
    detail = client.get("/v1/signals/jalapeno-agentx-results").json()
    assert detail["status"] == "resolved" and detail["evidence"][0]["ref_id"] == "r-agentx"


@pytest.mark.parametrize(
    ("fields", "resolves"),
    [
        ({"verification": "vendor_reported"}, False),
        ({"verification": "witnessed", "witnessed_by": "semianalysis"}, False),
        # Independent in name, but the figure is still OpenAI's own: vendor words never resolve it.
        ({"verification": "independent"}, False),
        ({"verification": "independent", "reproduced_by": "semianalysis", "value": 80}, False),
        ({"verification": "independent", "reproduced_by": "semianalysis", "value": 99}, True),
        ({"verification": "independent", "reproduced_by": "semianalysis", "baseline_ids": ["gb300"]}, False),
    ],
)
def test_result_verification_tolerance_and_independence(client, admin_headers, fields, resolves):
    sid = "jalapeno-104x-reproduced"
    assert client.post("/v1/results", json=_result(**fields), headers=admin_headers).status_code == 201
    assert state(sid) == (YES1 if resolves else OPEN0)


@pytest.mark.parametrize(
    ("fields", "resolves"),
    [
        ({"capacity_mw": 120, "as_of": "2026-12-01"}, True),
        ({"capacity_mw": 100, "as_of": "2026-12-31"}, True),
        ({"capacity_mw": 60, "as_of": "2026-12-01"}, False),
        # A target is a plan, not evidence; a capacity reached after the date is too late.
        ({"capacity_mw_target": 150, "as_of": "2026-12-01"}, False),
        ({"capacity_mw": 150, "as_of": "2027-01-05"}, False),
    ],
)
def test_deployment_condition_capacity_and_date(client, admin_headers, fields, resolves):
    body = {"id": "d-test", "chip_id": "jalapeno", "operator_id": "openai", "status": "pilot", **fields}
    assert client.post("/v1/deployments", json=body, headers=admin_headers).status_code == 201
    assert state("jalapeno-100mw-2026") == (YES1 if resolves else OPEN0)
    if resolves:
        [ev] = evidence("jalapeno-100mw-2026")
        assert ev.ref_kind == "deployment" and "MW" in ev.reason


def test_a_changed_fact_is_evaluated_again(client, admin_headers):
    body = {
        "id": "d-test",
        "chip_id": "jalapeno",
        "status": "pilot",
        "capacity_mw": 20,
        "as_of": "2026-10-01",
    }
    client.post("/v1/deployments", json=body, headers=admin_headers)
    assert state("jalapeno-100mw-2026") == OPEN0
    r = client.patch("/v1/deployments/d-test", json={"capacity_mw": 110}, headers=admin_headers)
    assert r.status_code == 200
    assert state("jalapeno-100mw-2026") == YES1


# ---------------------------------------------------------------------------------------------------
# Independence: vendor words never resolve a signal that asks for independent reproduction

VENDOR_WORDS = [
    (
        "OpenAI: Jalapeño's 104.3x figure independently verified",
        "Our 104.3x result was reproduced by partners.",
    ),
    ("OpenAI says Jalapeno 104.3x reproduced", "The 104.3x throughput-per-kW figure has been replicated."),
    ("OpenAI：墨西哥辣椒104.3倍能效已获独立验证", "第三方复现了104.3倍的成绩。"),
    ("NVIDIA: Vera Rubin NVL72 with Groq 3 LPX 30x reproduced", "Our 30x AgentX figure was reproduced."),
    ("英伟达：Vera Rubin 搭配 Groq 3 LPX 的30倍成绩已被复现", "AgentX 30倍，独立测试确认。"),
]
INDEPENDENCE_SIGNALS = ("jalapeno-104x-reproduced", "nvidia-30x-reproduced")


@pytest.mark.parametrize("source", ["vendor-feed", "press-feed", "analyst-feed"])
def test_vendor_words_never_resolve_an_independence_signal(feeds, source):
    for title, text in VENDOR_WORDS:
        publish(title, text, source=source)
    for sid in INDEPENDENCE_SIGNALS:
        assert state(sid) == OPEN0
        assert evidence(sid) == []


def test_an_independent_lab_does_resolve_them(feeds):
    publish(
        "Lab reproduces Jalapeño's 104.3x figure",
        "We reproduced 104.3x throughput per kW.",
        source="lab-feed",
    )
    publish("Vera Rubin 30x over GB300 reproduced", "Our lab reproduced 30x on AgentX.", source="lab-feed")
    assert state("jalapeno-104x-reproduced") == YES1
    assert state("nvidia-30x-reproduced") == YES1
    assert all(e.trust == "independent" for sid in INDEPENDENCE_SIGNALS for e in evidence(sid))


def test_hedged_independent_words_do_not_resolve(feeds):
    publish("Jalapeño's 104.3x figure has not been reproduced yet", "Labs are trying.", source="lab-feed")
    publish("墨西哥辣椒104.3倍成绩尚未被独立复现", "", source="lab-feed")
    assert state("jalapeno-104x-reproduced") == OPEN0


# ---------------------------------------------------------------------------------------------------
# Creation and changes check stored items and facts


def test_a_new_signal_is_evaluated_against_stored_items(feeds):
    old = add_item("Jalapeno shipped early", published_at=datetime(2026, 8, 1, tzinfo=UTC))
    new = add_item("Jalapeno shipped", published_at=datetime(2026, 9, 2, tzinfo=UTC))
    report = create(
        "late",
        yes=[
            {
                "item": {
                    "mentions_any": ["jalapeno"],
                    "terms_any": ["shipped"],
                    "published_after": "2026-09-01",
                }
            }
        ],
    )
    assert state("late") == YES1
    assert [e.ref_id for e in evidence("late")] == [str(new)]
    assert report.items == 1  # the SQL narrowing left out the item published too early
    assert old != new


def test_a_new_signal_is_evaluated_against_stored_facts(client, admin_headers):
    body = {
        "id": "d-big",
        "chip_id": "xiwang-s3",
        "status": "volume",
        "capacity_mw": 5,
        "as_of": "2026-10-01",
    }
    client.post("/v1/deployments", json=body, headers=admin_headers)
    create(
        "s3-volume", yes=[{"deployment": {"chip": "xiwang-s3", "status": "volume"}}], subjects=["xiwang-s3"]
    )
    assert state("s3-volume") == YES1
    assert [(e.ref_kind, e.ref_id) for e in evidence("s3-volume")] == [("deployment", "d-big")]


def test_changing_conditions_drops_unused_evidence_and_evaluates_again(feeds):
    create("chg", yes=[{"item": {"mentions_any": ["jalapeno"], "terms_any": ["shipped"]}}], review="manual")
    publish("Jalapeno shipped")
    assert state("chg") == ("pending_review", None, 1)
    publish("Jalapeno shipped twice")  # accrues while pending; no move used it
    cited, unused = evidence("chg")
    assert history("chg")[0].evidence_ids == [cited.id]
    deployed = add_item("Jalapeno deployed")
    with session_scope() as session:
        service.update_signal(
            session=session,
            signal_id="chg",
            changes={"yes_when": [{"item": {"mentions_any": ["jalapeno"], "terms_any": ["deployed"]}}]},
        )
    # Evidence a move cited stays with the history; what only the old conditions matched is gone; the
    # stored items were checked against the new conditions.
    remaining = evidence("chg")
    assert [e.ref_id for e in remaining] == [cited.ref_id, str(deployed)]
    assert remaining[0].id == cited.id and unused.ref_id not in {e.ref_id for e in remaining}
    assert state("chg") == ("pending_review", None, 1)
    assert signal("chg").yes_when == [{"item": {"mentions_any": ["jalapeno"], "terms_any": ["deployed"]}}]


def test_evidence_the_changed_conditions_still_match_is_kept_and_not_announced_again(feeds):
    create("keep", yes=[{"item": {"mentions_any": ["jalapeno"], "terms_any": ["shipped"]}}], review="manual")
    publish("Jalapeno shipped")
    publish("Jalapeno shipped twice")  # accrues while pending
    before = [(e.id, e.ref_id) for e in evidence("keep")]
    announced = len(events("keep", "signal.evidence_added"))
    with session_scope() as session:
        service.update_signal(
            session=session,
            signal_id="keep",
            changes={"no_when": [{"item": {"mentions_any": ["jalapeno"], "terms_any": ["cancelled"]}}]},
        )
    assert [(e.id, e.ref_id) for e in evidence("keep")] == before
    assert len(events("keep", "signal.evidence_added")) == announced
    assert state("keep") == ("pending_review", None, 1)


# ---------------------------------------------------------------------------------------------------
# The compiled rules are cached until definitions or names change


def test_rules_compile_once_and_again_when_names_change(client, admin_headers, feeds):
    rules_cache.clear_rules_cache()
    publish("nothing relevant")
    compiled = rules_cache.rules_compilations()
    for i in range(3):
        publish(f"still nothing {i}")
    assert rules_cache.rules_compilations() == compiled
    # A new alias of a named entity is a change of names: the next evaluation recompiles and uses it.
    r = client.patch(
        "/v1/chips/jalapeno", json={"aliases": ["Jalapeno", "墨西哥辣椒", "JLP-1"]}, headers=admin_headers
    )
    assert r.status_code == 200
    create("alias", yes=[{"item": {"mentions_any": ["jalapeno"], "terms_any": ["shipped"]}}])
    publish("JLP-1 shipped")
    assert rules_cache.rules_compilations() > compiled
    assert state("alias") == YES1


def test_a_definition_changed_by_a_clock_running_behind_is_still_noticed(feeds):
    create("clock", yes=[{"item": {"mentions_any": ["jalapeno"], "terms_any": ["shipped"]}}])
    publish("nothing relevant")  # the process has compiled the current definitions
    with session_scope() as session:
        service.update_signal(
            session=session,
            signal_id="clock",
            changes={"yes_when": [{"item": {"mentions_any": ["jalapeno"], "terms_any": ["deployed"]}}]},
            now=datetime(2001, 1, 1, tzinfo=UTC),
        )
    assert signal("clock").updated_at > datetime(2026, 1, 1, tzinfo=UTC)
    publish("Jalapeno deployed")
    assert state("clock") == YES1


def test_items_from_before_a_deadline_decide_and_those_after_only_accrue(feeds):
    create(
        "dl",
        yes=[{"item": {"mentions_any": ["jalapeno"], "terms_any": ["shipped"]}}],
        deadline="2026-09-30",
    )
    publish("Jalapeno shipped", published_at=datetime(2026, 10, 2, tzinfo=UTC))
    assert state("dl") == OPEN0 and len(evidence("dl")) == 1
    # Fetched late, but published by the deadline day: it decides.
    publish("Jalapeno shipped on the last day", published_at=datetime(2026, 9, 30, 23, 0, tzinfo=UTC))
    assert state("dl") == YES1
    assert signal("dl").known_at == datetime(2026, 9, 30, 23, 0, tzinfo=UTC)


def test_an_undated_item_counts_for_a_deadline_only_if_seen_in_time(feeds):
    create(
        "dl", yes=[{"item": {"mentions_any": ["jalapeno"], "terms_any": ["shipped"]}}], deadline="2026-09-30"
    )
    publish("Jalapeno shipped", estimated=True, first_seen_at=datetime(2026, 10, 3, tzinfo=UTC))
    assert state("dl") == OPEN0
    publish("Jalapeno shipped (undated)", estimated=True, first_seen_at=datetime(2026, 9, 20, tzinfo=UTC))
    assert state("dl") == YES1


def test_evaluate_items_ignores_unknown_ids_and_empty_input(feeds):
    assert evaluate().items == 0
    assert evaluate(10_000_000).items == 0


def test_report_counts(feeds):
    create("cnt", yes=[{"item": {"mentions_any": ["jalapeno"], "terms_any": ["shipped"]}}])
    ids = [add_item("Jalapeno shipped"), add_item("unrelated"), add_item("Jalapeño shipped twice")]
    report = evaluate(*ids)
    assert report.items == 3 and report.matches == 2 and len(report.evidence_ids) == 2
    assert [(t.signal_id, t.version, t.to_status) for t in report.transitions] == [("cnt", 1, "resolved")]


def test_now_stamps_evidence_and_history(feeds):
    create("now", yes=[{"item": {"mentions_any": ["jalapeno"], "terms_any": ["shipped"]}}])
    at = datetime(2026, 9, 9, 9, 9, tzinfo=UTC)
    evaluate(add_item("Jalapeno shipped"), now=at)
    assert history("now")[0].at == at and evidence("now")[0].recorded_at == at
    assert signal("now").resolved_at == at
    assert at - timedelta(days=1) < at  # stamps come from the caller, not the clock
    assert date(2026, 9, 9) == at.date()
