"""The signal language: schema, models, refusals that name the field, and the seed signals."""

from __future__ import annotations

import copy
import json
from datetime import date
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from chipwatch.paths import SCHEMA_DIR, SEED_DIR
from chipwatch.signals.definition import (
    SIGNAL_SCHEMA_ID,
    DefinitionError,
    ItemCondition,
    ResultCondition,
    SignalDefinition,
    validate_definition,
    validate_signals_document,
)

SEED_ENTITY_IDS = {
    "jalapeno",
    "vera-rubin",
    "groq-3-lpx",
    "gb200",
    "gb300",
    "xiwang-s3",
    "openai",
    "nvidia",
    "groq",
    "xiwang",
    "semianalysis",
    "coreweave",
    "inferencex",
    "agentx",
    "artificial-analysis",
    "deepseek-v4-pro",
}

SEED_SIGNAL_IDS = [
    "jalapeno-104x-reproduced",
    "vera-rubin-scorecard",
    "jalapeno-100mw-2026",
    "jalapeno-volume-2027",
    "openai-sells-inference-compute",
    "vendors-agentic-benchmarks",
    "jalapeno-agentx-results",
    "jalapeno-price-disclosed",
    "xiwang-s3-large-scale-delivery",
    "nvidia-30x-reproduced",
]

BASE: dict[str, Any] = {
    "id": "vera-rubin-scorecard",
    "question": "Has NVIDIA published InferenceX results for Vera Rubin comparable with Jalapeño's?",
    "opened_on": "2026-08-25",
    "review": "auto",
    "subjects": ["vera-rubin", "inferencex"],
    "yes_when": [
        {"result": {"chip": "vera-rubin", "benchmark": "inferencex"}},
        {
            "item": {
                "mentions_all": ["vera-rubin"],
                "terms_any": ["InferenceX", "InferenceMAX"],
                "source_trust": ["independent", "press"],
            }
        },
    ],
}


def definition(**changes: Any) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    data.update(changes)
    return data


def with_yes(*conditions: dict[str, Any]) -> dict[str, Any]:
    return definition(yes_when=list(conditions))


def refused(data: Any, **kw: Any) -> DefinitionError:
    with pytest.raises(DefinitionError) as info:
        validate_definition(data, **kw)
    return info.value


# ---------------------------------------------------------------------------------------------------
# Schemas
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["signal.schema.json", "signals-file.schema.json"])
def test_schemas_are_valid_2020_12(name: str) -> None:
    schema = json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_signal_schema_id() -> None:
    schema = json.loads((SCHEMA_DIR / "signal.schema.json").read_text(encoding="utf-8"))
    assert schema["$id"] == SIGNAL_SCHEMA_ID == "https://chipwatch.dev/schema/signal.schema.json"
    assert schema["additionalProperties"] is False


# ---------------------------------------------------------------------------------------------------
# Accepted definitions
# ---------------------------------------------------------------------------------------------------


def test_design_example_validates_with_defaults() -> None:
    defn = validate_definition(definition(), known_entities=SEED_ENTITY_IDS)
    assert isinstance(defn, SignalDefinition)
    assert defn.id == "vera-rubin-scorecard"
    assert defn.opened_on == date(2026, 8, 25)
    assert defn.deadline is None
    assert defn.on_deadline == "no"
    assert defn.no_when == []
    assert defn.tags == []
    assert [c.kind for c in defn.yes_when] == ["result", "item"]
    item = defn.yes_when[1].item
    assert isinstance(item, ItemCondition)
    assert item.mentions_all == ["vera-rubin"]
    assert item.source_trust == ["independent", "press"]
    assert item.terms_all is None


def test_yaml_dates_are_accepted() -> None:
    data = yaml.safe_load(
        """
        id: jalapeno-100mw-2026
        question: Does Jalapeño reach 100 MW by the end of 2026?
        opened_on: 2026-08-25
        deadline: 2026-12-31
        on_deadline: "no"
        review: auto
        subjects: [jalapeno]
        yes_when:
          - deployment: {chip: jalapeno, capacity_mw_gte: 100, by: 2026-12-31}
          - item: {mentions_any: [jalapeno], number: {unit: MW, gte: 100}, published_after: 2026-08-29}
        """
    )
    assert isinstance(data["opened_on"], date)
    defn = validate_definition(data)
    assert defn.deadline == date(2026, 12, 31)
    assert defn.yes_when[0].deployment is not None
    assert defn.yes_when[0].deployment.by == date(2026, 12, 31)
    assert defn.yes_when[1].item is not None
    assert defn.yes_when[1].item.number is not None
    assert defn.yes_when[1].item.number.unit == "MW"
    assert defn.yes_when[1].item.number.gte == 100


def test_verification_accepts_one_level_or_a_list() -> None:
    one = validate_definition(with_yes({"result": {"chip": "jalapeno", "verification": "independent"}}))
    many = validate_definition(
        with_yes({"result": {"chip": "jalapeno", "verification": ["witnessed", "independent"]}})
    )
    assert isinstance(one.yes_when[0].result, ResultCondition)
    assert one.yes_when[0].result.verification == ["independent"]
    assert many.yes_when[0].result is not None
    assert many.yes_when[0].result.verification == ["witnessed", "independent"]


def test_to_document_round_trips_through_the_schema() -> None:
    defn = validate_definition(definition(tags=["nvidia"], description="why"))
    doc = defn.to_document()
    assert doc["opened_on"] == "2026-08-25"
    assert "deadline" not in doc
    assert validate_definition(doc) == defn


def test_entity_refs_name_every_entity_with_its_field() -> None:
    defn = validate_definition(
        with_yes(
            {"item": {"mentions_all": ["jalapeno"], "mentions_any": ["openai", "nvidia"]}},
            {"result": {"chip": "vera-rubin", "baseline": "gb300", "reported_by_not": "nvidia"}},
            {"deployment": {"chip": "xiwang-s3", "operator": "xiwang"}},
        )
    )
    refs = list(defn.entity_refs())
    assert refs[:2] == [("subjects.0", "vera-rubin"), ("subjects.1", "inferencex")]
    assert ("yes_when.0.item.mentions_any.1", "nvidia") in refs
    assert ("yes_when.1.result.reported_by_not", "nvidia") in refs
    assert ("yes_when.2.deployment.operator", "xiwang") in refs
    assert defn.entity_ids() == {
        "vera-rubin",
        "inferencex",
        "jalapeno",
        "openai",
        "nvidia",
        "gb300",
        "xiwang-s3",
        "xiwang",
    }


# ---------------------------------------------------------------------------------------------------
# Refusals name the field
# ---------------------------------------------------------------------------------------------------


def test_bad_unit_names_the_unit_field() -> None:
    err = refused(with_yes({"item": {"mentions_all": ["jalapeno"], "number": {"unit": "MWh", "gte": 100}}}))
    assert err.field == "yes_when.0.item.number.unit"
    assert '"MWh"' in err.message and '"MW"' in err.message
    assert isinstance(err, ValueError)
    assert str(err).startswith("yes_when.0.item.number.unit: ")


def test_typo_in_a_key_is_refused_with_a_suggestion() -> None:
    err = refused(with_yes({"item": {"mention_all": ["jalapeno"]}}))
    assert err.field == "yes_when.0.item.mention_all"
    assert "unknown key 'mention_all'" in err.message
    assert "did you mean 'mentions_all'?" in err.message


def test_typo_in_a_top_level_key() -> None:
    err = refused(definition(deadlines="2026-12-31"))
    assert err.field == "deadlines"
    assert "did you mean 'deadline'?" in err.message


def test_typo_in_a_condition_kind() -> None:
    err = refused(with_yes({"itme": {"mentions_all": ["jalapeno"]}}))
    assert err.field == "yes_when.0.itme"
    assert "did you mean 'item'?" in err.message


@pytest.mark.parametrize(
    ("condition", "field", "words"),
    [
        ({}, "yes_when.0", "exactly one key"),
        (
            {"item": {"mentions_all": ["jalapeno"]}, "result": {"chip": "jalapeno"}},
            "yes_when.0",
            "exactly one key",
        ),
        ({"item": {"source_trust": ["independent"]}}, "yes_when.0.item", "at least one of mentions_all"),
        ({"item": {"mentions_all": []}}, "yes_when.0.item.mentions_all", "must not be empty"),
        ({"item": {"number": {"unit": "MW"}}}, "yes_when.0.item.number", "at least one of gte"),
        ({"item": {"number": {"gte": 100}}}, "yes_when.0.item.number.unit", "is required"),
        (
            {"item": {"terms_any": ["ok"], "source_trust": ["blog"]}},
            "yes_when.0.item.source_trust.0",
            "must be one of",
        ),
        ({"item": {"terms_any": ["repro*duced"]}}, "yes_when.0.item.terms_any.0", "only at the end"),
        (
            {"item": {"terms_any": ["x"], "published_after": "2026-02-30"}},
            "yes_when.0.item.published_after",
            "not a valid calendar date",
        ),
        ({"result": {}}, "yes_when.0.result", "at least one constraint"),
        (
            {"result": {"chip": "jalapeno", "verification": "peer_reviewed"}},
            "yes_when.0.result.verification",
            "vendor_reported, witnessed, independent",
        ),
        (
            {"result": {"value": {"tolerance_pct": 5}}},
            "yes_when.0.result.value",
            "at least one of gte, lte, eq",
        ),
        (
            {"result": {"value": {"eq": 30, "tolerance_pct": -1}}},
            "yes_when.0.result.value.tolerance_pct",
            "minimum of 0",
        ),
        ({"deployment": {"capacity_mw": 100}}, "yes_when.0.deployment.capacity_mw", "capacity_mw_gte"),
        ({"deployment": {"chip": "Jalapeño"}}, "yes_when.0.deployment.chip", "entity id"),
    ],
)
def test_condition_refusals(condition: dict[str, Any], field: str, words: str) -> None:
    err = refused(with_yes(condition))
    assert err.field == field
    assert words in err.message


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"id": "Vera_Rubin"}, "id", "slug"),
        ({"id": "-x"}, "id", "slug"),
        ({"opened_on": "25/08/2026"}, "opened_on", "YYYY-MM-DD"),
        ({"deadline": "2026-13-01"}, "deadline", "not a valid calendar date"),
        ({"review": "sometimes"}, "review", '"auto", "manual"'),
        ({"on_deadline": False}, "on_deadline", 'write "no" with quotes'),
        ({"subjects": []}, "subjects", "must not be empty"),
        ({"yes_when": []}, "yes_when", "needs at least one condition"),
        ({"yes_when": {"item": {}}}, "yes_when", "must be of type array"),
        ({"question": 3}, "question", "must be of type string"),
    ],
)
def test_top_level_refusals(changes: dict[str, Any], field: str, words: str) -> None:
    err = refused(definition(**changes))
    assert err.field == field
    assert words in err.message


def test_missing_required_fields_are_named() -> None:
    data = definition()
    del data["yes_when"]
    assert refused(data).field == "yes_when"
    data = definition()
    del data["opened_on"]
    err = refused(data)
    assert (err.field, err.message) == ("opened_on", "is required")
    # review and subjects have defaults (auto; the entities the conditions name): not required.
    data = definition()
    del data["review"], data["subjects"]
    assert validate_definition(data).review == "auto"


def test_not_an_object() -> None:
    err = refused(["not", "a", "definition"])  # type: ignore[arg-type]
    assert err.field == ""
    assert "must be an object" in err.message


def test_unknown_entity_id_is_named_with_its_field() -> None:
    data = with_yes(
        {"item": {"mentions_all": ["jalapeno"], "mentions_any": ["openai", "nvidiaa"]}},
    )
    err = refused(data, known_entities=SEED_ENTITY_IDS)
    assert err.field == "yes_when.0.item.mentions_any.1"
    assert "unknown entity id 'nvidiaa'" in err.message
    assert "did you mean 'nvidia'?" in err.message
    # Without a knowledge base to check against, the same definition is valid.
    assert validate_definition(data).yes_when[0].item is not None


@pytest.mark.parametrize(
    ("condition", "field"),
    [
        ({"result": {"chip": "jalapeno", "baseline": "gb400"}}, "yes_when.0.result.baseline"),
        ({"result": {"model": "gpt-5"}}, "yes_when.0.result.model"),
        ({"result": {"benchmark": "mlperf"}}, "yes_when.0.result.benchmark"),
        ({"result": {"chip": "tpu-v9"}}, "yes_when.0.result.chip"),
        ({"deployment": {"chip": "jalapeno", "operator": "microsoft"}}, "yes_when.0.deployment.operator"),
    ],
)
def test_unknown_entity_ids_in_fact_conditions(condition: dict[str, Any], field: str) -> None:
    err = refused(with_yes(condition), known_entities=SEED_ENTITY_IDS)
    assert err.field == field
    assert "unknown entity id" in err.message


def test_unknown_subject() -> None:
    err = refused(definition(subjects=["vera-rubin", "rubin-ultra"]), known_entities=SEED_ENTITY_IDS)
    assert err.field == "subjects.1"
    assert "'rubin-ultra'" in err.message


def test_unknown_source_id() -> None:
    data = with_yes({"item": {"terms_any": ["InferenceX"], "sources": ["36kr", "semianalysis-blog"]}})
    err = refused(data, known_sources={"36kr", "zhihu"})
    assert err.field == "yes_when.0.item.sources.1"
    assert "unknown source id 'semianalysis-blog'" in err.message


def test_deadline_before_opening_is_refused() -> None:
    err = refused(definition(deadline="2026-08-01"))
    assert err.field == "deadline"
    assert "opened_on (2026-08-25)" in err.message


def test_contradictory_bounds_are_refused() -> None:
    err = refused(with_yes({"item": {"terms_any": ["x"], "number": {"unit": "MW", "gte": 200, "lte": 100}}}))
    assert err.field == "yes_when.0.item.number"
    assert "nothing can match" in err.message
    err = refused(with_yes({"result": {"value": {"gte": 40, "lte": 30}}}))
    assert err.field == "yes_when.0.result.value"


def test_no_when_fields_are_named_on_their_side() -> None:
    err = refused(definition(no_when=[{"item": {"terms_any": ["x"], "number": {"unit": "MWh", "gte": 1}}}]))
    assert err.field == "no_when.0.item.number.unit"


def test_models_forbid_unknown_keys_when_built_directly() -> None:
    with pytest.raises(ValidationError):
        ItemCondition(mentions_all=["jalapeno"], mention_any=["openai"])  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        ItemCondition(source_trust=["independent"])  # no mentions, terms or number


# ---------------------------------------------------------------------------------------------------
# Signals files
# ---------------------------------------------------------------------------------------------------


def test_signals_document_names_fields_from_the_file_root() -> None:
    doc = {"$schema": "../schema/signals-file.schema.json", "signals": [definition(), definition()]}
    err = pytest.raises(DefinitionError, validate_signals_document, doc).value
    assert err.field == "signals.1.id"
    assert "duplicate id 'vera-rubin-scorecard' (also signals.0)" in err.message

    bad = definition(id="other")
    bad["yes_when"][1]["item"]["number"] = {"unit": "watts", "gte": 1}
    doc = {"signals": [definition(), bad]}
    err = pytest.raises(DefinitionError, validate_signals_document, doc).value
    assert err.field == "signals.1.yes_when.1.item.number.unit"

    err = pytest.raises(DefinitionError, validate_signals_document, {"signal": []}).value
    assert err.field == "signal"
    assert "did you mean 'signals'?" in err.message


def test_signals_document_checks_entities_with_the_file_prefix() -> None:
    doc = {"signals": [definition(subjects=["vera-rubin", "inferencexx"])]}
    err = pytest.raises(DefinitionError, validate_signals_document, doc, known_entities=SEED_ENTITY_IDS).value
    assert err.field == "signals.0.subjects.1"


# ---------------------------------------------------------------------------------------------------
# The seed signals
# ---------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def seed_signals() -> dict[str, SignalDefinition]:
    raw = yaml.safe_load((SEED_DIR / "signals.yaml").read_text(encoding="utf-8"))
    assert raw["$schema"] == "../schema/signals-file.schema.json"
    defs = validate_signals_document(raw, known_entities=SEED_ENTITY_IDS)
    return {d.id: d for d in defs}


def test_seed_file_holds_the_ten_signals(seed_signals: dict[str, SignalDefinition]) -> None:
    assert list(seed_signals) == SEED_SIGNAL_IDS
    for defn in seed_signals.values():
        assert defn.opened_on in {date(2026, 8, 25), date(2026, 8, 28)}
        assert defn.question.endswith("?")
        assert defn.yes_when


def test_seed_deadlines(seed_signals: dict[str, SignalDefinition]) -> None:
    deadlines = {k: (d.deadline, d.on_deadline) for k, d in seed_signals.items() if d.deadline}
    assert deadlines == {
        "jalapeno-100mw-2026": (date(2026, 12, 31), "no"),
        "jalapeno-volume-2027": (date(2027, 12, 31), "no"),
    }


def test_seed_review_modes(seed_signals: dict[str, SignalDefinition]) -> None:
    manual = {k for k, d in seed_signals.items() if d.review == "manual"}
    assert {
        "jalapeno-price-disclosed",
        "openai-sells-inference-compute",
        "xiwang-s3-large-scale-delivery",
    } <= manual
    assert "jalapeno-104x-reproduced" not in manual
    assert "nvidia-30x-reproduced" not in manual


@pytest.mark.parametrize(
    ("signal_id", "vendor"), [("jalapeno-104x-reproduced", "openai"), ("nvidia-30x-reproduced", "nvidia")]
)
def test_seed_independence_signals_accept_only_independent_evidence(
    seed_signals: dict[str, SignalDefinition], signal_id: str, vendor: str
) -> None:
    defn = seed_signals[signal_id]
    for cond in defn.yes_when:
        if cond.item is not None:
            assert cond.item.source_trust == ["independent"]
        elif cond.result is not None:
            assert cond.result.verification == ["independent"]
            assert cond.result.reported_by_not == vendor
        else:
            pytest.fail(f"unexpected {cond.kind} condition in {signal_id}")


def test_seed_100mw_counts_reached_capacity_by_the_deadline(
    seed_signals: dict[str, SignalDefinition],
) -> None:
    defn = seed_signals["jalapeno-100mw-2026"]
    deployment = next(c.deployment for c in defn.yes_when if c.deployment is not None)
    assert (deployment.chip, deployment.capacity_mw_gte, deployment.by) == (
        "jalapeno",
        100,
        date(2026, 12, 31),
    )
    item = next(c.item for c in defn.yes_when if c.item is not None)
    assert item.number is not None
    assert (item.number.unit, item.number.gte) == ("MW", 100)
