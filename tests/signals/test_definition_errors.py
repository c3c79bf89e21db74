"""A refused signal definition lists every problem, each naming its field, through the API and seeds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from chipwatch.signals.definition import DefinitionError, validate_definition
from chipwatch.signals.definition_checks import MAX_CONDITIONS, MAX_TERMS
from tests.fixtures.signals import definition


def _errors(resp) -> dict[str, str]:
    assert resp.status_code == 422, resp.text
    assert resp.headers["content-type"] == "application/problem+json"
    return {e["field"]: e["message"] for e in resp.json()["errors"]}


def test_two_schema_errors_are_both_reported(client, admin_headers):
    body = definition("Bad Id", yes=[{"item": {"mentions_all": ["jalapeno"], "source_trust": ["rumour"]}}])
    errors = _errors(client.post("/v1/signals", json=body, headers=admin_headers))
    assert set(errors) == {"id", "yes_when.0.item.source_trust.0"}
    assert errors["id"].startswith('"Bad Id" must be a slug')
    assert "rumour" in errors["yes_when.0.item.source_trust.0"]


def test_every_missing_and_every_unknown_key_is_named(client, admin_headers):
    # The schema raises one error for all of an object's missing keys (and one for its unknown keys).
    errors = _errors(client.post("/v1/signals", json={}, headers=admin_headers))
    assert errors == {field: "is required" for field in ("id", "question", "opened_on", "yes_when")}
    body = {**definition("two-extra"), "colour": "red", "sizes": 1}
    body["yes_when"] = [{"item": {"mentions_all": ["jalapeno"], "terms": ["x"], "zz": 1}}]
    errors = _errors(client.post("/v1/signals", json=body, headers=admin_headers))
    assert set(errors) == {"colour", "sizes", "yes_when.0.item.terms", "yes_when.0.item.zz"}
    assert errors["yes_when.0.item.zz"].startswith("unknown key 'zz'; allowed keys: mentions_all, ")


def test_a_string_of_the_wrong_shape_is_named_once(client, admin_headers):
    # "yesterday" fails the date pattern and the date format, "" both minLength and a pattern: one message.
    body = {**definition("shapes"), "opened_on": "yesterday", "question": ""}
    resp = client.post("/v1/signals", json=body, headers=admin_headers)
    assert resp.status_code == 422
    fields = [e["field"] for e in resp.json()["errors"]]
    assert sorted(fields) == ["opened_on", "question"]


def test_unknown_ids_beside_schema_errors_in_the_same_condition_are_reported(client, admin_headers):
    body = definition("half-bad", yes=[
        {"result": {"chip": "no-such-chip", "verification": "maybe"}},
        {"funding": {"vendor": "no-such-vendor", "amount_gte": -5, "currency": "usd", "extra": 1}},
        {"item": {"mentions_all": ["no-such-model"], "number": {"unit": "furlong", "gte": 1}}},
    ])
    errors = _errors(client.post("/v1/signals", json=body, headers=admin_headers))
    assert set(errors) == {
        "yes_when.0.result.verification", "yes_when.0.result.chip",
        "yes_when.1.funding.extra", "yes_when.1.funding.amount_gte", "yes_when.1.funding.currency",
        "yes_when.1.funding.vendor",
        "yes_when.2.item.number.unit", "yes_when.2.item.mentions_all.0",
    }
    assert errors["yes_when.0.result.chip"] == "unknown entity id 'no-such-chip'"
    assert errors["yes_when.1.funding.vendor"] == "unknown entity id 'no-such-vendor'"
    assert errors["yes_when.2.item.mentions_all.0"] == "unknown entity id 'no-such-model'"


def test_a_patch_renaming_a_signal_still_lists_its_other_problems(client, admin_headers):
    signal_id = client.get("/v1/signals", params={"limit": 1}).json()["items"][0]["id"]
    body = {"id": "renamed", "question": 5, "yes_when": [{"result": {"chip": "no-such-chip"}}]}
    errors = _errors(client.patch(f"/v1/signals/{signal_id}", json=body, headers=admin_headers))
    assert errors == {
        "id": "cannot be changed; create a new signal instead",
        "question": "must be of type string; got number",
        "yes_when.0.result.chip": "unknown entity id 'no-such-chip'",
    }
    alone = _errors(client.patch(f"/v1/signals/{signal_id}", json={"id": "renamed"}, headers=admin_headers))
    assert alone == {"id": "cannot be changed; create a new signal instead"}


def test_every_rule_beyond_the_schema_is_reported(client, admin_headers):
    tomorrow = (datetime.now(UTC).date() + timedelta(days=1)).isoformat()
    body = definition(
        "many-problems",
        opened_on=tomorrow,
        deadline="2026-01-01",
        subjects=["jalapeno", "no-such-chip"],
        yes=[{"item": {"mentions_all": ["jalapeno"], "number": {"unit": "MW", "gte": 10, "lte": 5}}},
             {"result": {"chip": "jalapeno", "value": {"gte": 3, "lte": 1}}}],
    )
    errors = _errors(client.post("/v1/signals", json=body, headers=admin_headers))
    assert errors == {
        "opened_on": f"must not be in the future (today is {datetime.now(UTC).date().isoformat()})",
        "deadline": f"must not be before opened_on ({tomorrow})",
        "yes_when.0.item.number": "the lower bound exceeds the upper bound, so nothing can match",
        "yes_when.1.result.value": "gte exceeds lte, so nothing can match",
        "subjects.1": "unknown entity id 'no-such-chip'",
    }
    assert client.get("/v1/signals/many-problems").status_code == 404


def test_sizes_are_capped(client, admin_headers):
    def post(sid: str, yes: list) -> dict[str, str]:
        return _errors(client.post("/v1/signals", json=definition(sid, yes=yes), headers=admin_headers))

    many = [{"item": {"terms_any": [f"t{i}"]}} for i in range(MAX_CONDITIONS + 1)]
    errors = post("too-many", many)
    assert errors == {"yes_when": "takes at most 50 conditions"}

    long_list = [{"item": {"terms_any": [f"t{i}" for i in range(101)]}}]
    errors = post("long-list", long_list)
    assert errors == {"yes_when.0.item.terms_any": "takes at most 100 terms"}

    spread = [{"item": {"terms_any": [f"c{c}t{i}" for i in range(100)]}} for c in range(6)]
    errors = post("spread", spread)
    assert errors == {"yes_when": f"at most {MAX_TERMS} terms in all conditions together; got 600"}


def test_nan_in_a_definition_is_refused_before_the_schema():
    body = definition("nan-one", yes=[{"item": {"number": {"unit": "MW", "gte": float("nan")}}}])
    with pytest.raises(DefinitionError) as caught:
        validate_definition(body)
    assert caught.value.problems == [
        ("yes_when.0.item.number.gte", "must be a finite number (NaN and Infinity are not JSON)")]


def test_the_error_keeps_its_first_problem_as_field_and_message():
    with pytest.raises(DefinitionError) as caught:
        validate_definition(definition("x", review="sometimes", on_deadline="maybe"))
    err = caught.value
    assert len(err.problems) == 3  # the id is too short, and two enums
    assert (err.field, err.message) == err.problems[0]
    assert str(err) == "; ".join(f"{f}: {m}" for f, m in err.problems)
