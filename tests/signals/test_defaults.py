"""A signal posted without ``review`` or ``subjects`` gets ``review: auto`` and the entities its
conditions name as subjects."""

from __future__ import annotations

import pytest

from chipwatch.signals.definition import DefinitionError, validate_definition

RESULT = {"chip": "jalapeno", "baseline": "gb200", "model": "gpt-oss-120b"}


def _posted(**extra) -> dict:
    return {
        "id": "defaults",
        "question": "Does Jalapeño beat GB200 on gpt-oss-120b, and does OpenAI deploy it?",
        "opened_on": "2026-08-25",
        "yes_when": [
            {"result": {**RESULT, "reported_by_not": "groq"}},
            {"item": {"mentions_any": ["jalapeno", "groq"], "terms_any": ["beats"]}},
        ],
        "no_when": [{"deployment": {"operator": "openai", "capacity_mw_gte": 100}}],
        **extra,
    }


def test_review_defaults_to_auto_and_subjects_to_the_conditions_entities(client, admin_headers):
    created = client.post("/v1/signals", json=_posted(), headers=admin_headers)
    assert created.status_code == 201, created.text
    # In order of first appearance; reported_by_not names who must not report, not a subject.
    expected = ["jalapeno", "gb200", "gpt-oss-120b", "groq", "openai"]
    assert (created.json()["review"], created.json()["subjects"]) == ("auto", expected)
    shown = client.get("/v1/signals/defaults").json()
    assert (shown["review"], shown["subjects"]) == ("auto", expected)
    [row] = [s for s in client.get("/v1/signals?limit=500").json()["items"] if s["id"] == "defaults"]
    assert row["subjects"] == expected


def test_given_review_and_subjects_are_kept(client, admin_headers):
    created = client.post(
        "/v1/signals", json=_posted(review="manual", subjects=["openai"]), headers=admin_headers
    )
    assert created.status_code == 201, created.text
    assert (created.json()["review"], created.json()["subjects"]) == ("manual", ["openai"])


def test_subjects_are_required_when_no_condition_names_an_entity(client, admin_headers):
    body = {
        "id": "no-entities",
        "question": "Does anyone say 'wafer-scale inference'?",
        "opened_on": "2026-08-25",
        "yes_when": [{"item": {"terms_any": ["wafer-scale inference"]}}],
    }
    refused = client.post("/v1/signals", json=body, headers=admin_headers)
    assert refused.status_code == 422
    [error] = refused.json()["errors"]
    assert error["field"] == "subjects"
    assert error["message"].startswith("is required when no condition names an entity")


def test_an_unknown_entity_is_named_where_it_was_written_not_in_derived_subjects():
    known = {"jalapeno", "gb200", "gpt-oss-120b", "groq", "openai"}
    assert validate_definition(_posted(), known_entities=known).subjects_derived
    with pytest.raises(DefinitionError) as refused:
        validate_definition(_posted(), known_entities=known - {"gb200"})
    assert [field for field, _message in refused.value.problems] == ["yes_when.0.result.baseline"]
