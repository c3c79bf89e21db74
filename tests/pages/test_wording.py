"""Signal conditions in plain words."""

from __future__ import annotations

from chipwatch.pages.wording import condition_ids, describe_condition

NAMES = {"jalapeno": "Jalape\u00f1o", "gb200": "GB200", "openai": "OpenAI", "inferencex": "InferenceX"}


def test_an_item_condition_reads_as_a_sentence():
    cond = {
        "item": {
            "mentions_all": ["jalapeno"],
            "terms_any": ["deployed", "\u90e8\u7f72"],
            "terms_none": ["plan"],
            "number": {"unit": "MW", "gte": 100},
            "source_trust": ["independent", "press"],
            "published_after": "2026-08-29",
        }
    }
    assert describe_condition(cond, NAMES) == (
        "A news item that names Jalape\u00f1o, contains \u201cdeployed\u201d or \u201c\u90e8\u7f72\u201d, "
        "does not contain \u201cplan\u201d, gives a figure of at least 100 MW, comes from an independent "
        "party or the press and was published on or after 2026-08-29."
    )


def test_result_and_deployment_conditions_name_entities_and_bounds():
    result = {
        "result": {
            "chip": "jalapeno",
            "baseline": "gb200",
            "benchmark": "inferencex",
            "metric": "throughput_per_kw_ratio",
            "verification": ["independent"],
            "value": {"gte": 100, "tolerance_pct": 5},
        }
    }
    assert describe_condition(result, NAMES) == (
        "A benchmark result for Jalape\u00f1o against GB200 in InferenceX, measuring throughput per kw "
        "ratio, with a value of at least 100 (give or take 5%), reproduced independently is in the knowledge "
        "base."
    )
    deployment = {"deployment": {"chip": "jalapeno", "capacity_mw_gte": 100, "by": "2026-12-31"}}
    assert describe_condition(deployment, NAMES) == (
        "A deployment of Jalape\u00f1o that has reached at least 100 MW (reached, not targeted), as of "
        "2026-12-31 or earlier is in the knowledge base."
    )


def test_a_change_condition_names_the_fact_and_fields():
    cond = {"change": {"kind": "chips", "fact": "jalapeno", "fields": ["nominal_power_w"], "cause": "import"}}
    assert describe_condition(cond, NAMES) == (
        "A recorded change of the chip Jalape\u00f1o in nominal power w, caused by import."
    )
    assert describe_condition({"change": {"kind": "funding-rounds", "action": ["retired", "retracted"]}}) == (
        "A recorded change of any of the funding rounds that was retired or retracted."
    )


def test_unknown_keys_and_kinds_are_shown_not_hidden():
    cond = {"result": {"chip": "gb200", "division": "closed", "round": "v5.1"}}
    assert describe_condition(cond, NAMES) == (
        "A benchmark result for GB200, in the closed division, round: v5.1 is in the knowledge base."
    )
    assert describe_condition({"rumour": {"about": "jalapeno"}}) == "A rumour fact: about jalapeno."


def test_condition_ids_lists_the_entities_to_name():
    assert condition_ids({"item": {"mentions_all": ["jalapeno"], "mentions_any": ["openai"]}}) == {
        "jalapeno",
        "openai",
    }
    assert condition_ids({"result": {"chip": "jalapeno", "baseline": "gb200", "metric": "x"}}) == {
        "jalapeno",
        "gb200",
    }
