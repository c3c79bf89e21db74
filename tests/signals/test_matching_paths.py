"""The fast paths of matching give the answers of the plain ones: normalisation without offset lists,
lower-cased phrase scans, and rules checked only when something they need was found."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from chipwatch.signals import rules
from chipwatch.signals.definition import validate_definition
from chipwatch.signals.rules import CompiledRules, ItemView, compile_signals
from chipwatch.text import numbers
from chipwatch.text.entities import Entity
from chipwatch.text.normalize import _normalize_clusters, map_span, normalize_text, normalize_with_offsets
from chipwatch.text.phrases import PhraseSet

# Characters that exercise every branch: ASCII, accented Latin (composed and decomposed), fullwidth
# forms, compatibility signs that expand (㎿), typography, CJK, Hangul, Greek with its final sigma, a
# dotted capital I whose lower-casing grows, and a character outside the Basic Multilingual Plane.
ALPHABET = "aZ 09-.,jalpeñoJALAPEÑO\u0303\u0301ＧＢ３，：（）㎿’—墨西哥辣椒曦望한국ΣσςİĲﬁ\U0001f680"


def _expanded(norm: str, starts, ends):
    if starts is None:
        return norm, list(range(len(norm))), list(range(1, len(norm) + 1))
    return norm, starts, ends


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=40))
def test_fast_normalisation_equals_the_cluster_path(text: str) -> None:
    assert _expanded(*normalize_with_offsets(text)) == _expanded(*_normalize_clusters(text))


def test_common_chinese_text_takes_the_identity_path() -> None:
    norm, starts, ends = normalize_with_offsets("墨西哥辣椒部署达到１００兆瓦，正式投运（上线）")
    assert norm == "墨西哥辣椒部署达到100兆瓦,正式投运(上线)" and starts is ends is None


PHRASES = [
    "Jalapeño",
    "Jalapeno",
    "墨西哥辣椒",
    "Vera Rubin",
    "Rubin",
    "GB300 NVL72",
    "İnfer",
    "ΣIGMA",
    "ıgς",
]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="jalpeñoJALPEÑOvr ubinRUBIN-gb30nvl72墨西哥辣椒İıIiσςΣgmaGMA.", max_size=40))
def test_lower_cased_scan_equals_a_case_insensitive_one(text: str) -> None:
    phrase_set = PhraseSet([(p, False, p) for p in PHRASES])
    norm = normalize_text(text)
    found = phrase_set.scan(norm)
    # The reference: the same patterns, case-insensitive, over the text as it is.
    reference: dict = {}
    for pattern, groups in zip(phrase_set._patterns_ci, phrase_set._groups, strict=True):
        for label, span in phrase_set._read(norm, groups, pattern.finditer(norm)):
            if label not in reference or span[0] < reference[label][0]:
                reference[label] = span
    if len(norm.lower()) == len(norm):
        assert found == reference


def test_final_sigma_and_dotless_i_match_as_a_case_insensitive_regex_would() -> None:
    phrase_set = PhraseSet([("ΣΟΦΙΑ", False, "sofia"), ("Iris", False, "iris")])
    assert set(phrase_set.scan("η σοφιας")) == set()  # a longer word is not the name
    assert set(phrase_set.scan("Σοφιa ΣΟΦΊΑ σοφια")) >= {"sofia"}
    assert set(phrase_set.scan("ıris")) == {"iris"}
    assert set(PhraseSet([("ας", False, "x")]).scan("ΑΣ")) == {"x"}


ENTITIES = [
    Entity("jalapeno", ["Jalapeño", "墨西哥辣椒"]),
    Entity("gb200", ["GB200"]),
    Entity("openai", ["OpenAI"]),
    Entity("xiwang", ["Xiwang", "曦望"]),
]


def _definitions() -> list:
    conditions = [
        {"item": {"mentions_all": ["jalapeno", "gb200"]}},
        {"item": {"mentions_any": ["openai", "xiwang"], "terms_any": ["raise*", "融资"]}},
        {"item": {"terms_all": ["reproduced", "104.3x"]}},
        {"item": {"terms_any": ["复现", "replicat*"], "number": {"unit": "x", "gte": 100}}},
        {"item": {"number": {"unit": "MW", "gte": 100}}},
        {"item": {"number": {"unit": "CNY", "gte": 1e9}, "terms_none": ["计划"]}},
        {"item": {"mentions_any": ["jalapeno"], "number": {"unit": "GW", "lte": 1}}},
    ]
    known = {e.id for e in ENTITIES}
    out = []
    for i, cond in enumerate(conditions):
        out.append(
            validate_definition(
                {
                    "id": f"sig-{i}",
                    "question": "q?",
                    "opened_on": "2026-08-25",
                    "review": "auto",
                    "subjects": ["jalapeno"],
                    "yes_when": [cond],
                    "no_when": [conditions[(i + 3) % len(conditions)]],
                },
                known_entities=known,
            )
        )
    return out


def _every_rule(compiled: CompiledRules, item: ItemView) -> list:
    """The plain way: scan everything and check every rule."""
    text = f"{item.title}\n{item.text}"
    norm, starts, ends = normalize_with_offsets(text)
    mentioned = compiled._entities.scan_normalized(norm)
    found_terms = compiled._terms.scan(norm)
    quantities = numbers.extract_from_normalized(norm)

    def shown(span):
        a, b = map_span(span, starts, ends)
        return text[a:b]

    found = {**mentioned, **found_terms}  # entity ids and term keys side by side, as the matcher has them
    out = []
    for rule in compiled._item_rules:
        reason = compiled._check_item(rule, item, shown, found, lambda: quantities)
        if reason is not None:
            out.append(rules.Match(rule.signal_id, rule.side, rule.index, reason))
    return out


WORDS = [
    "Jalapeño", "墨西哥辣椒", "GB200", "OpenAI", "曦望", "raises", "融资", "reproduced", "104.3x", "复现",
    "replicated", "120 MW", "0.5 GW", "2 GW", "20亿元", "计划", "100兆瓦", "104.3倍", "the", "and", "，",
]  # fmt: skip


def test_triggered_rules_give_the_answers_of_checking_every_rule() -> None:
    compiled = compile_signals(_definitions(), ENTITIES)
    rng = random.Random(7)
    for n in range(3000):
        words = [rng.choice(WORDS) for _ in range(rng.randint(0, 8))]
        item = ItemView(id=n, source_id="s", source_trust="press", title="", text=" ".join(words))
        assert compiled.match_item(item) == _every_rule(compiled, item), item.text
