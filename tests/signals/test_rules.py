"""The compiled matcher: mentions, terms, numbers, trust, dates, facts, and the seed signals."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from chipwatch.paths import SEED_DIR
from chipwatch.signals import rules
from chipwatch.signals.definition import (
    DefinitionError,
    SignalDefinition,
    validate_definition,
    validate_signals_document,
)
from chipwatch.signals.rules import CompiledRules, FactView, ItemView, Match, compile_signals
from chipwatch.text.entities import Entity, EntityMatcher, Mention
from chipwatch.text.normalize import normalize_text
from chipwatch.text.phrases import PhraseSet, canonical

# Names and aliases as SEED_FACTS.md gives them.
ENTITIES = [
    Entity("jalapeno", ["Jalapeño", "Jalapeno", "墨西哥辣椒"]),
    Entity("vera-rubin", ["Vera Rubin", "VeraRubin", "Rubin", "Rubin NVL72"]),
    Entity("groq-3-lpx", ["Groq 3 LPX"]),
    Entity("gb200", ["GB200"]),
    Entity("gb300", ["GB300", "GB300 NVL72"]),
    Entity("xiwang-s3", ["Xiwang S3", "曦望S3"]),
    Entity("openai", ["OpenAI"]),
    Entity("nvidia", ["NVIDIA", "英伟达"]),
    Entity("groq", ["Groq"]),
    Entity("xiwang", ["Xiwang", "曦望"]),
    Entity("semianalysis", ["SemiAnalysis"]),
    Entity("coreweave", ["CoreWeave"]),
    Entity("inferencex", ["InferenceX", "InferenceMAX"]),
    Entity("agentx", ["AgentX"]),
    Entity("artificial-analysis", ["Artificial Analysis"]),
    Entity("deepseek-v4-pro", ["DeepSeek V4 Pro"]),
    Entity("apple-m6", ["M6"]),
    Entity("gpt-oss-120b", ["GPT-OSS 120B"]),
]
ENTITY_IDS = {e.id for e in ENTITIES}
AFTER = datetime(2026, 9, 2, 8, 0, tzinfo=UTC)


def signal(
    sid: str = "sig", yes: list[dict] | None = None, no: list[dict] | None = None, **kw: Any
) -> SignalDefinition:
    data = {
        "id": sid,
        "question": "Does it happen?",
        "opened_on": "2026-08-25",
        "review": kw.pop("review", "auto"),
        "subjects": kw.pop("subjects", ["jalapeno"]),
        "yes_when": yes or [],
        "no_when": no or [],
        **kw,
    }
    return validate_definition(data, known_entities=ENTITY_IDS)


def item(
    text: str,
    *,
    title: str = "",
    trust: str = "press",
    source: str = "feed",
    published_at: datetime | None = AFTER,
    estimated: bool = False,
) -> ItemView:
    return ItemView(
        id="i1",
        source_id=source,
        source_trust=trust,
        title=title,
        text=text,
        published_at=published_at,
        published_is_estimated=estimated,
    )


def compiled(*conditions: dict, no: list[dict] | None = None) -> CompiledRules:
    return compile_signals([signal("sig", yes=list(conditions), no=no)], ENTITIES)


def sides(matches: list[Match]) -> list[tuple[str, str, int]]:
    return [(m.signal_id, m.side, m.condition_index) for m in matches]


# ---------------------------------------------------------------------------------------------------
# Entity mentions
# ---------------------------------------------------------------------------------------------------

MATCHER = EntityMatcher(ENTITIES)


def test_chinese_sentence_names_three_entities() -> None:
    assert MATCHER.entities_in("英伟达发布Vera Rubin的InferenceX成绩") == {
        "nvidia",
        "vera-rubin",
        "inferencex",
    }
    assert MATCHER.entities_in("OpenAI的墨西哥辣椒芯片部署达到100兆瓦") == {"openai", "jalapeno"}
    assert MATCHER.entities_in("曦望S3开始交付") == {"xiwang-s3", "xiwang"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Rubinstein reviewed the rack", set()),
        ("Rubin's rack ships", {"vera-rubin"}),
        ("the RUBIN NVL72 rack", {"vera-rubin"}),
        ("Apple's M60 is not a chip", set()),
        ("Apple's M6.", {"apple-m6"}),
        ("M6芯片", {"apple-m6"}),
        ("an AM6 socket", set()),
        ("GB2000 does not exist", set()),
        ("gb200-based racks", {"gb200"}),
        ("NVIDIA's GB300", {"nvidia", "gb300"}),
        ("OpenAIs", set()),
        ("Groq 3 LPX ships", {"groq-3-lpx", "groq"}),
        ("Groq3 LPX", set()),
        ("InferenceMAX v2", {"inferencex"}),
        ("SemiAnalysis/InferenceX", {"semianalysis", "inferencex"}),
        ("semianalysis_bot", set()),
    ],
)
def test_latin_aliases_match_on_word_boundaries(text: str, expected: set[str]) -> None:
    assert MATCHER.entities_in(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Jalapeño",
        "jalapeño",
        "JALAPEÑO",
        "Jalapen\u0303o",
        "jalapeno",
        "ｊａｌａｐｅｎｏ",
        "OpenAI's Jalapeño chip",
    ],
)
def test_accents_width_and_case_do_not_matter(text: str) -> None:
    only_accented = EntityMatcher([Entity("jalapeno", ["Jalapeño"])])
    only_plain = EntityMatcher([Entity("jalapeno", ["Jalapeno"])])
    assert only_accented.entities_in(text) == {"jalapeno"}
    assert only_plain.entities_in(text) == {"jalapeno"}


@pytest.mark.parametrize(
    "text", ["GPT-OSS 120B", "gpt-oss-120b", "GPT OSS 120B", "GPT\u2011OSS\u00a0120B", "gpt-oss -120b"]
)
def test_spaces_and_hyphens_inside_an_alias_are_interchangeable(text: str) -> None:
    assert MATCHER.entities_in(text) == {"gpt-oss-120b"}


def test_find_reports_spans_in_the_original_text() -> None:
    text = "Jalapen\u0303o vs Vera Rubin（英伟达）"
    mentions = MATCHER.find(text)
    assert mentions == [
        Mention("jalapeno", (0, 9), "Jalapen\u0303o"),
        Mention("vera-rubin", (13, 23), "Vera Rubin"),
        Mention("vera-rubin", (18, 23), "Rubin"),
        Mention("nvidia", (24, 27), "英伟达"),
    ]
    for m in mentions:
        assert text[m.span[0] : m.span[1]] == m.text


def test_an_entity_without_names_is_matched_by_its_id() -> None:
    assert EntityMatcher([Entity("deepseek-v4-pro", [])]).entities_in("DeepSeek V4 Pro on Rubin") == {
        "deepseek-v4-pro"
    }


def test_mentions_all_and_mentions_any() -> None:
    rules_ = compiled(
        {"item": {"mentions_all": ["vera-rubin", "inferencex"]}},
        {"item": {"mentions_any": ["groq", "agentx"]}},
    )
    assert sides(rules_.match_item(item("英伟达发布Vera Rubin的InferenceX成绩"))) == [("sig", "yes", 0)]
    assert sides(rules_.match_item(item("Vera Rubin alone"))) == []
    assert sides(rules_.match_item(item("AgentX data for Rubin"))) == [("sig", "yes", 1)]
    assert sides(rules_.match_item(item("Rubin on InferenceX and AgentX"))) == [
        ("sig", "yes", 0),
        ("sig", "yes", 1),
    ]


def test_title_counts_as_text() -> None:
    rules_ = compiled({"item": {"mentions_all": ["jalapeno"], "terms_any": ["AgentX"]}})
    assert rules_.match_item(item("no results yet", title="Jalapeño AgentX"))


# ---------------------------------------------------------------------------------------------------
# Terms
# ---------------------------------------------------------------------------------------------------


def test_terms_all_any_none() -> None:
    rules_ = compiled(
        {
            "item": {
                "terms_all": ["sell*", "compute"],
                "terms_any": ["customers", "cloud"],
                "terms_none": ["not yet"],
            }
        }
    )
    assert rules_.match_item(item("OpenAI sells compute to outside customers"))
    assert rules_.match_item(item("OpenAI is selling spare compute through a cloud"))
    assert not rules_.match_item(item("OpenAI sells compute"))  # no term of terms_any
    assert not rules_.match_item(item("OpenAI sells models to customers"))  # terms_all incomplete
    assert not rules_.match_item(item("OpenAI does not yet sell compute to customers"))  # terms_none
    assert not rules_.match_item(item("An upselling of compute to customers"))  # "sell*" starts a word


def test_cjk_terms_match_as_substrings() -> None:
    rules_ = compiled({"item": {"mentions_all": ["jalapeno"], "terms_any": ["部署"], "terms_none": ["计划"]}})
    assert rules_.match_item(item("OpenAI的墨西哥辣椒芯片部署达到100兆瓦"))
    assert not rules_.match_item(item("OpenAI计划年底部署墨西哥辣椒"))


def test_terms_with_non_word_characters() -> None:
    rules_ = compiled({"item": {"terms_any": ["tok/s", "C++"]}})
    assert rules_.match_item(item("1459 tok/s per user"))
    assert not rules_.match_item(item("1459 tok/sec"))
    assert rules_.match_item(item("kernels in C++ and CUDA"))


def test_typographic_apostrophes_match_ascii_terms() -> None:
    rules_ = compiled({"item": {"terms_any": ["reproduced"], "terms_none": ["couldn't"]}})
    assert not rules_.match_item(item("SemiAnalysis couldn’t say it reproduced anything"))
    assert rules_.match_item(item("SemiAnalysis reproduced it"))


TERMS = [
    "reproduced",
    "reproduc*",
    "independently reproduced",
    "independent",
    "Vera",
    "Vera Rubin",
    "M6",
    "M60",
    "复现",
    "独立复现",
]
TEXTS = [
    "SemiAnalysis independently reproduced the 104.3x figure",
    "a reproduction by an independent lab",
    "Vera Rubin NVL72 and the M60",
    "Vera-Rubin M6",
    "英伟达的结果被独立复现",
    "irreproducible",
    "",
]


@pytest.mark.parametrize("text", TEXTS)
def test_combined_scan_equals_searching_each_term_alone(text: str) -> None:
    """Phrases inside longer phrases are still found: one pattern, same answer as one search per term."""
    rules_ = compiled({"item": {"terms_any": TERMS}})
    found = rules_._terms.scan(normalize_text(text))
    combined = sorted({key for key in found}, key=str)
    alone = []
    for term in TERMS:
        written, key = rules._term_key(term)
        single = PhraseSet([(key[0], key[1], key)])
        if single.scan(normalize_text(text)):
            alone.append(key)
    assert combined == sorted(set(alone), key=str)


@settings(max_examples=150, deadline=None)
@given(
    phrases=st.lists(
        st.tuples(st.text(alphabet="abA1 -中ñ", min_size=1, max_size=5), st.booleans()), max_size=6
    ),
    text=st.text(alphabet="abA1 -中cñ.", max_size=24),
)
def test_combined_pattern_agrees_with_one_pattern_per_phrase(
    phrases: list[tuple[str, bool]], text: str
) -> None:
    """Same phrases found, at the same spans, as when every phrase is searched on its own."""
    items = [(p, wild, (canonical(p), wild)) for p, wild in phrases if canonical(p)]
    norm = normalize_text(text)
    combined = PhraseSet(items).scan(norm)
    alone: dict = {}
    for entry in items:
        alone.update(PhraseSet([entry]).scan(norm))
    assert combined == alone


def test_nested_terms_are_all_found() -> None:
    rules_ = compiled({"item": {"terms_any": TERMS}})
    found = rules_._terms.scan(normalize_text("SemiAnalysis independently reproduced it"))
    assert set(found) == {("independently reproduced", False), ("reproduced", False), ("reproduc", True)}


# ---------------------------------------------------------------------------------------------------
# Numbers
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Jalapeño deployment reaches 100 MW", True),
        ("Jalapeño deployment reaches 100MW", True),
        ("OpenAI的墨西哥辣椒芯片部署达到100兆瓦", True),
        ("Jalapeño deployment reaches 0.1 GW", True),
        ("墨西哥辣椒部署达到0.1吉瓦", True),
        ("Jalapeño deployment reaches 120,000 kW", True),
        ("Jalapeño deployment reaches 99 MW", False),
        ("Jalapeño deployment uses 100 MWh a day", False),
        ("Jalapeño deployment: 100 units", False),
    ],
)
def test_number_condition_converts_power_units(text: str, expected: bool) -> None:
    rules_ = compiled({"item": {"mentions_all": ["jalapeno"], "number": {"unit": "MW", "gte": 100}}})
    assert bool(rules_.match_item(item(text))) is expected


def test_number_reason_shows_the_figure() -> None:
    rules_ = compiled({"item": {"mentions_all": ["jalapeno"], "number": {"unit": "MW", "gte": 100}}})
    [match] = rules_.match_item(item("墨西哥辣椒部署达到0.1吉瓦"))
    assert '"0.1吉瓦" (0.1 GW) is >= 100 MW' in match.reason
    assert 'jalapeno ("墨西哥辣椒")' in match.reason


def test_ratio_and_money_numbers() -> None:
    rules_ = compiled(
        {"item": {"terms_any": ["reproduced", "复现"], "number": {"unit": "x", "gte": 100, "lte": 110}}},
        {"item": {"mentions_any": ["nvidia"], "number": {"unit": "USD", "gte": 1e10}}},
    )
    assert sides(rules_.match_item(item("SemiAnalysis independently reproduced the 104.3x figure"))) == [
        ("sig", "yes", 0)
    ]
    assert sides(rules_.match_item(item("104.3倍的结果已被复现"))) == [("sig", "yes", 0)]
    assert sides(rules_.match_item(item("SemiAnalysis reproduced a 53.7x gain"))) == []
    assert sides(rules_.match_item(item("英伟达以200亿美元收购Groq"))) == [("sig", "yes", 1)]
    assert sides(rules_.match_item(item("英伟达估值200亿元人民币"))) == []  # CNY is not USD


# ---------------------------------------------------------------------------------------------------
# Trust, sources, publication dates
# ---------------------------------------------------------------------------------------------------

INDEPENDENT_ONLY = {
    "item": {
        "terms_any": ["reproduc*"],
        "number": {"unit": "x", "eq": 104.3},
        "source_trust": ["independent"],
    }
}


@pytest.mark.parametrize(
    ("trust", "expected"), [("vendor", False), ("press", False), ("analyst", False), ("independent", True)]
)
def test_vendor_words_never_satisfy_independent_trust(trust: str, expected: bool) -> None:
    rules_ = compiled(INDEPENDENT_ONLY)
    text = "SemiAnalysis independently reproduced the 104.3x figure"
    assert bool(rules_.match_item(item(text, trust=trust))) is expected


def test_sources_restrict_to_named_sources() -> None:
    rules_ = compiled({"item": {"terms_any": ["InferenceX"], "sources": ["semianalysis-feed"]}})
    assert rules_.match_item(item("InferenceX update", source="semianalysis-feed"))
    assert not rules_.match_item(item("InferenceX update", source="36kr"))


@pytest.mark.parametrize(
    ("published_at", "estimated", "expected"),
    [
        (datetime(2026, 9, 1, 0, 0, tzinfo=UTC), False, True),  # the day itself counts
        (datetime(2026, 8, 31, 23, 59, tzinfo=UTC), False, False),
        (datetime(2026, 9, 5, tzinfo=UTC), True, False),  # estimated dates never count
        (None, False, False),
        # 20:00 on 31 August in UTC-5 is 1 September in UTC.
        (datetime(2026, 8, 31, 20, 0, tzinfo=timezone(timedelta(hours=-5))), False, True),
        (datetime(2026, 9, 1, 6, 0, tzinfo=timezone(timedelta(hours=8))), False, False),
        (datetime(2026, 9, 1, 6, 0), False, True),  # naive: read as UTC
    ],
)
def test_published_after(published_at: datetime | None, estimated: bool, expected: bool) -> None:
    rules_ = compiled({"item": {"terms_any": ["InferenceX"], "published_after": "2026-09-01"}})
    got = rules_.match_item(item("InferenceX update", published_at=published_at, estimated=estimated))
    assert bool(got) is expected


def test_estimated_dates_still_count_without_published_after() -> None:
    rules_ = compiled({"item": {"terms_any": ["InferenceX"]}})
    assert rules_.match_item(item("InferenceX update", published_at=None, estimated=True))


def test_no_when_matches_report_the_no_side() -> None:
    rules_ = compiled(
        {"item": {"mentions_all": ["xiwang-s3"], "terms_any": ["交付"]}},
        no=[
            {"item": {"mentions_all": ["xiwang-s3"], "terms_any": ["延期"]}},
            {"item": {"terms_any": ["召回"]}},
        ],
    )
    assert sides(rules_.match_item(item("曦望S3交付延期，部分召回"))) == [
        ("sig", "yes", 0),
        ("sig", "no", 0),
        ("sig", "no", 1),
    ]


# ---------------------------------------------------------------------------------------------------
# Facts
# ---------------------------------------------------------------------------------------------------

R9 = {
    "benchmark_id": "inferencex",
    "chip_ids": ["jalapeno"],
    "baseline_ids": ["gb200"],
    "metric": "throughput_per_kw_ratio",
    "value": 104.3,
    "verification": "witnessed",
    "reported_by": "openai",
    "witnessed_by": "semianalysis",
    "reproduced_by": None,
}
REPRODUCED = {
    "result": {
        "chip": "jalapeno",
        "baseline": "gb200",
        "verification": "independent",
        "reported_by_not": "openai",
        "value": {"eq": 104.3, "tolerance_pct": 10},
    }
}


def result(**changes: Any) -> FactView:
    return FactView("result", "r9", {**R9, **changes})


def test_witnessed_vendor_result_does_not_count_as_reproduced() -> None:
    assert compiled(REPRODUCED).match_fact(result()) == []


def test_independent_reproduction_counts() -> None:
    [match] = compiled(REPRODUCED).match_fact(
        result(verification="independent", reproduced_by="semianalysis", value=101)
    )
    assert (match.signal_id, match.side, match.condition_index) == ("sig", "yes", 0)
    assert "reported by semianalysis, not openai" in match.reason
    assert "value 101 within [93.87, 114.73]" in match.reason


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"verification": "independent", "reported_by": "semianalysis"}, True),
        ({"verification": "independent", "reported_by": "openai"}, False),  # the vendor, whatever the label
        ({"verification": "independent", "reported_by": None}, False),  # unknown reporter proves nothing
        ({"verification": "independent", "reported_by": "coreweave", "value": 80}, False),
        ({"verification": "independent", "reported_by": "coreweave", "value": 114.7}, True),
        ({"verification": "independent", "reported_by": "coreweave", "baseline_ids": ["gb300"]}, False),
        ({"verification": "independent", "reported_by": "coreweave", "chip_ids": ["vera-rubin"]}, False),
        ({"verification": "independent", "reported_by": "coreweave", "value": None}, False),
    ],
)
def test_result_constraints(changes: dict[str, Any], expected: bool) -> None:
    assert bool(compiled(REPRODUCED).match_fact(result(**changes))) is expected


def test_verification_is_one_of_a_list() -> None:
    rules_ = compiled({"result": {"benchmark": "agentx", "verification": ["witnessed", "independent"]}})
    agentx = {"benchmark_id": "agentx", "chip_ids": ["vera-rubin"], "reported_by": "nvidia"}
    assert not rules_.match_fact(FactView("result", "r13", {**agentx, "verification": "vendor_reported"}))
    assert rules_.match_fact(FactView("result", "r13", {**agentx, "verification": "witnessed"}))
    assert rules_.match_fact(FactView("result", "r13", {**agentx, "verification": "independent"}))


def test_value_ranges_overlap_the_accepted_interval() -> None:
    rules_ = compiled({"result": {"chip": "jalapeno", "model": "gpt-oss-120b", "value": {"gte": 1.8}}})
    r1 = {"chip_ids": ["jalapeno"], "model_ids": ["gpt-oss-120b", "deepseek-r1"], "value": 1.7}
    assert rules_.match_fact(FactView("result", "r1", {**r1, "value_min": 1.5, "value_max": 1.9}))
    assert not rules_.match_fact(FactView("result", "r1", {**r1, "value_min": 1.5, "value_max": 1.7}))
    assert not rules_.match_fact(FactView("result", "r1", r1))


def test_metric_and_model_must_match() -> None:
    rules_ = compiled({"result": {"model": "deepseek-v4-pro", "metric": "throughput_per_mw_ratio"}})
    base = {"chip_ids": ["vera-rubin", "groq-3-lpx"], "model_ids": ["deepseek-v4-pro"]}
    assert rules_.match_fact(FactView("result", "r13", {**base, "metric": "throughput_per_mw_ratio"}))
    assert not rules_.match_fact(
        FactView("result", "r14", {**base, "metric": "cost_per_token_reduction_ratio"})
    )


HUNDRED_MW = {"deployment": {"chip": "jalapeno", "capacity_mw_gte": 100, "by": "2026-12-31"}}


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"chip_id": "jalapeno", "capacity_mw": 100, "as_of": "2026-12-20"}, True),
        ({"chip_id": "jalapeno", "capacity_mw": 100, "as_of": date(2026, 12, 31)}, True),
        ({"chip_id": "jalapeno", "capacity_mw": 150, "as_of": "2027-01-02"}, False),  # too late
        ({"chip_id": "jalapeno", "capacity_mw": 60, "as_of": "2026-12-01"}, False),
        # A target is a plan, not capacity reached.
        (
            {"chip_id": "jalapeno", "capacity_mw_target": 100, "status": "planned", "as_of": "2026-08-26"},
            False,
        ),
        ({"chip_id": "gb300", "capacity_mw": 500, "as_of": "2026-10-01"}, False),
        ({"chip_id": "jalapeno", "capacity_mw": 100, "published_on": "2026-11-30"}, True),  # as_of unknown
        ({"chip_id": "jalapeno", "capacity_mw": 100}, False),  # no date: cannot show "by"
        (
            {"chip_ids": ["jalapeno"], "capacity_mw": 100, "as_of": datetime(2026, 12, 31, 12, tzinfo=UTC)},
            True,
        ),
    ],
)
def test_deployment_capacity_by_date(fields: dict[str, Any], expected: bool) -> None:
    assert bool(compiled(HUNDRED_MW).match_fact(FactView("deployment", "d1", fields))) is expected


def test_deployment_status_and_operator() -> None:
    rules_ = compiled({"deployment": {"chip": "xiwang-s3", "operator": "xiwang", "status": "volume"}})
    fields = {"chip_id": "xiwang-s3", "operator_id": "xiwang", "status": "volume"}
    assert rules_.match_fact(FactView("deployment", "d", fields))
    assert not rules_.match_fact(FactView("deployment", "d", {**fields, "status": "pilot"}))
    assert not rules_.match_fact(FactView("deployment", "d", {**fields, "operator_id": "openai"}))


def test_facts_only_meet_conditions_of_their_kind() -> None:
    rules_ = compiled(REPRODUCED, HUNDRED_MW, {"item": {"mentions_all": ["jalapeno"]}})
    deployment = FactView(
        "deployment", "d1", {"chip_id": "jalapeno", "capacity_mw": 120, "as_of": "2026-12-01"}
    )
    assert sides(rules_.match_fact(deployment)) == [("sig", "yes", 1)]
    assert rules_.match_item(item("Jalapeño ships")) == [
        Match("sig", "yes", 2, 'item i1: mentions jalapeno ("Jalapeño")')
    ]


# ---------------------------------------------------------------------------------------------------
# Compilation
# ---------------------------------------------------------------------------------------------------


def many_signals(n: int) -> list[SignalDefinition]:
    ids = sorted(ENTITY_IDS)
    return [
        signal(
            f"sig-{i:02d}",
            yes=[
                {"item": {"mentions_all": [ids[i % len(ids)]], "terms_any": [f"term{i}", "复现"]}},
                {"item": {"mentions_any": [ids[(i + 1) % len(ids)]], "number": {"unit": "MW", "gte": i}}},
            ],
            no=[{"item": {"terms_all": [f"veto{i}"]}}],
            subjects=[ids[i % len(ids)]],
        )
        for i in range(n)
    ]


class CountingPattern:
    """Stands in for a compiled pattern and counts the scans made with it."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.scans = 0

    def finditer(self, text: str):
        self.scans += 1
        return self.pattern.finditer(text)


class CountingAutomaton:
    """Stands in for an Aho-Corasick automaton and counts the scans made with it."""

    def __init__(self, automaton) -> None:
        self.automaton = automaton
        self.scans = 0

    def iter(self, text: str):
        self.scans += 1
        return self.automaton.iter(text)


def test_pattern_count_does_not_grow_with_signals() -> None:
    one = compile_signals(many_signals(1), ENTITIES)
    fifty = compile_signals(many_signals(50), ENTITIES)
    assert set(one.patterns) == set(fifty.patterns) == {"mentions", "terms"}
    assert all(isinstance(p, re.Pattern) for p in fifty.patterns.values())
    assert len(fifty.signal_ids) == 50


def test_matching_scans_the_text_once_for_fifty_signals(monkeypatch: pytest.MonkeyPatch) -> None:
    fifty = compile_signals(many_signals(50), ENTITIES)
    mentions = CountingPattern(fifty._entities._phrases.pattern)
    terms = CountingPattern(fifty._terms.pattern)
    combined = CountingAutomaton(fifty._phrases._base_automaton)
    monkeypatch.setattr(fifty._entities._phrases, "pattern", mentions)
    monkeypatch.setattr(fifty._terms, "pattern", terms)
    monkeypatch.setattr(fifty._phrases, "_base_automaton", combined)
    compiles: list[str] = []
    real_compile = re.compile
    monkeypatch.setattr(re, "compile", lambda *a, **k: compiles.append(a[0]) or real_compile(*a, **k))

    matches = fifty.match_item(item("OpenAI的墨西哥辣椒芯片部署达到100兆瓦, term7 and veto9 on Vera Rubin"))

    # Aliases and terms are read together by one automaton; the separate patterns serve other callers.
    assert (combined.scans, mentions.scans, terms.scans) == (1, 0, 0)
    assert compiles == []
    # The text names openai (index 13 of the sorted ids), jalapeno (11) and vera-rubin (15): condition 1
    # of signal i names ids[(i + 1) % 18] and needs at least i MW; "veto9" vetoes signal 9.
    expected = [("sig-09", "no", 0)] + [(f"sig-{i:02d}", "yes", 1) for i in (10, 12, 14, 28, 30, 32, 46, 48)]
    assert sides(matches) == expected


def test_unknown_mention_entity_is_refused_at_compile_time() -> None:
    defn = signal("sig", yes=[{"item": {"mentions_all": ["jalapeno"]}}])
    with pytest.raises(DefinitionError) as info:
        compile_signals([defn], [e for e in ENTITIES if e.id != "jalapeno"])
    assert info.value.field == "yes_when.0.item.mentions_all.0"
    assert "'sig'" in info.value.message and "'jalapeno'" in info.value.message


def test_entities_in_and_signals_touching() -> None:
    rules_ = compile_signals(
        [
            signal(
                "sig-a", yes=[{"item": {"mentions_all": ["vera-rubin"]}}], subjects=["vera-rubin", "nvidia"]
            ),
            signal(
                "sig-b", yes=[{"result": {"chip": "jalapeno", "baseline": "gb200"}}], subjects=["jalapeno"]
            ),
        ],
        ENTITIES,
    )
    # Only the entities the signals name are compiled in.
    assert rules_.entities_in("英伟达 Vera Rubin vs Jalapeño vs GB300") == {
        "nvidia",
        "vera-rubin",
        "jalapeno",
    }
    assert rules_.signals_touching(["gb200"]) == {"sig-b"}
    assert rules_.signals_touching(["nvidia", "jalapeno"]) == {"sig-a", "sig-b"}
    assert rules_.signals_touching(["xiwang"]) == set()


# ---------------------------------------------------------------------------------------------------
# The seed signals
# ---------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def seed_rules() -> CompiledRules:
    raw = yaml.safe_load((SEED_DIR / "signals.yaml").read_text(encoding="utf-8"))
    defs = validate_signals_document(raw, known_entities=ENTITY_IDS)
    return compile_signals(defs, ENTITIES)


@pytest.mark.parametrize(
    ("text", "trust", "expected"),
    [
        ("英伟达发布Vera Rubin的InferenceX成绩", "press", [("vera-rubin-scorecard", "yes", 1)]),
        ("OpenAI的墨西哥辣椒芯片部署达到100兆瓦", "press", [("jalapeno-100mw-2026", "yes", 1)]),
        (
            "SemiAnalysis independently reproduced the 104.3x figure",
            "independent",
            [("jalapeno-104x-reproduced", "yes", 1)],
        ),
        (
            "SemiAnalysis independently reproduced Jalapeño's 104.3x figure",
            "independent",
            [("jalapeno-104x-reproduced", "yes", 1), ("jalapeno-104x-reproduced", "yes", 2)],
        ),
        ("SemiAnalysis independently reproduced the 104.3x figure", "vendor", []),
        (
            "An independent lab reproduced NVIDIA's 30x per-MW figure for Vera Rubin with Groq 3 LPX",
            "independent",
            [("nvidia-30x-reproduced", "yes", 1)],
        ),
        ("NVIDIA says Vera Rubin with Groq 3 LPX reproduced its 30x gain", "vendor", []),
        ("曦望S3开始大规模交付", "press", [("xiwang-s3-large-scale-delivery", "yes", 1)]),
        ("曦望S3交付延期", "press", [("xiwang-s3-large-scale-delivery", "no", 0)]),
        ("Jalapeño posts AgentX results", "press", [("jalapeno-agentx-results", "yes", 1)]),
        (
            "OpenAI discloses Jalapeño pricing: cost per token falls",
            "press",
            [("jalapeno-price-disclosed", "yes", 1)],
        ),
        (
            "OpenAI will sell inference compute to outside customers",
            "press",
            [("openai-sells-inference-compute", "yes", 0)],
        ),
    ],
)
def test_seed_signals_on_news(seed_rules: CompiledRules, text: str, trust: str, expected: list) -> None:
    assert sides(seed_rules.match_item(item(text, trust=trust))) == expected


@pytest.mark.parametrize(
    "text",
    [
        # The founding articles' own statements must leave every signal open.
        "SemiAnalysis witnessed the runs but did not independently reproduce the 104.3x figure",
        "104.3x: SemiAnalysis could not reproduce it yet",
        "OpenAI targets 100 MW of Jalapeño deployment by the end of 2026",
        "OpenAI计划到2026年底部署100兆瓦墨西哥辣椒芯片",
        "Jalapeño has not run AgentX; its results are single-turn",
        "墨西哥辣椒尚未公布AgentX成绩",
        "Jalapeño's price and cost per token are not disclosed",
        "Vera Rubin hasn't published InferenceX results yet",
        "NVIDIA: Vera Rubin NVL72 plus Groq 3 LPX delivers 30x the throughput per MW of GB300 NVL72 "
        "on AgentX",
    ],
)
def test_seed_signals_ignore_restated_claims(seed_rules: CompiledRules, text: str) -> None:
    for trust in ("vendor", "press", "independent"):
        assert seed_rules.match_item(item(text, trust=trust)) == []


def test_seed_signals_ignore_the_founding_days(seed_rules: CompiledRules) -> None:
    text = "英伟达发布Vera Rubin的InferenceX成绩"
    assert seed_rules.match_item(item(text, published_at=datetime(2026, 8, 27, tzinfo=UTC))) == []


def test_seed_signals_on_facts(seed_rules: CompiledRules) -> None:
    reproduced = FactView(
        "result",
        "r9-repro",
        {**R9, "verification": "independent", "reported_by": "semianalysis", "value": 98.0},
    )
    assert sides(seed_rules.match_fact(reproduced)) == [("jalapeno-104x-reproduced", "yes", 0)]
    deployed = FactView(
        "deployment", "d", {"chip_id": "jalapeno", "capacity_mw": 0.1 * 1000, "as_of": "2026-12-15"}
    )
    assert sides(seed_rules.match_fact(deployed)) == [("jalapeno-100mw-2026", "yes", 0)]
    volume = FactView("deployment", "d2", {"chip_id": "jalapeno", "status": "volume", "as_of": "2027-06-01"})
    assert sides(seed_rules.match_fact(volume)) == [("jalapeno-volume-2027", "yes", 0)]


def _seed_rows(name: str, key: str) -> list[dict[str, Any]]:
    path = SEED_DIR / f"{name}.yaml"
    if not path.exists():
        pytest.skip(f"seed_data/{name}.yaml is not there")
    return yaml.safe_load(path.read_text(encoding="utf-8"))[key]


def test_seed_knowledge_base_leaves_every_signal_open() -> None:
    """The founding facts (vendor-reported or witnessed, targets not capacity) resolve nothing."""
    entities = [
        Entity(row["id"], [row["name"], *row.get("aliases", [])])
        for name in ("vendors", "chips", "models", "benchmarks")
        for row in _seed_rows(name, name)
    ]
    raw = yaml.safe_load((SEED_DIR / "signals.yaml").read_text(encoding="utf-8"))
    defs = validate_signals_document(raw, known_entities={e.id for e in entities})
    seed = compile_signals(defs, entities)
    for row in _seed_rows("results", "results"):
        assert seed.match_fact(FactView("result", row["id"], row)) == [], row["id"]
    for row in _seed_rows("deployments", "deployments"):
        assert seed.match_fact(FactView("deployment", row["id"], row)) == [], row["id"]
