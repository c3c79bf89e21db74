"""One formatter of JSON Schema errors: the field at fault, a readable message, a suggestion."""

from __future__ import annotations

from jsonschema import Draft202012Validator

from chipwatch.kit.schema_errors import describe, describe_all, field_path, most_relevant

SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["id", "review"],
    "properties": {
        "id": {"type": "string", "pattern": "^[a-z]+$", "x-messages": {"pattern": "must be a slug"}},
        "review": {"enum": ["auto", "manual"]},
        "deadline": {"type": "string", "format": "date"},
        "subjects": {"type": "array", "minItems": 1, "uniqueItems": True},
        "size": {"type": "number"},
        "when": {"anyOf": [{"type": "string"}, {"type": "object", "required": ["at"]}]},
    },
}
VALIDATOR = Draft202012Validator(SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER)


def problem(doc):
    return describe(most_relevant(VALIDATOR.iter_errors(doc)))


def test_a_missing_key_is_named_in_the_path():
    p = problem({"id": "x"})
    assert (p.field, p.keyword, p.message) == ("review", "required", "is required")
    assert "'review' is a required property" == p.native


def test_an_unknown_key_gets_the_closest_allowed_key():
    p = problem({"id": "x", "review": "auto", "deadlines": "2026-01-01"})
    assert (p.field, p.suggestion) == ("deadlines", "deadline")
    assert p.message == "unknown key 'deadlines'; did you mean 'deadline'?"
    far = problem({"id": "x", "review": "auto", "colour": 1})
    assert far.suggestion is None and far.message.startswith("unknown key 'colour'; allowed keys: id, ")


def test_generic_keywords_read_after_the_field_name():
    assert problem({"id": "x", "review": "sometimes"}).message == (
        'must be one of "auto", "manual"; got "sometimes"'
    )
    assert problem({"id": "x", "review": False}).message.endswith('(in YAML write "no" with quotes)')
    assert problem({"id": "x", "review": "auto", "size": "7 W"}).message == (
        "must be of type number; got string"
    )
    assert problem({"id": "x", "review": "auto", "deadline": "2026-02-30"}).message == (
        "is not a valid date"
    )
    assert problem({"id": "x", "review": "auto", "subjects": []}).message == "must not be empty"
    assert problem({"id": "x", "review": "auto", "subjects": [1, 1]}).message == "has duplicate entries"


def test_the_schema_can_word_its_own_message():
    p = problem({"id": "Bad Id", "review": "auto"})
    assert (p.field, p.message) == ("id", '"Bad Id" must be a slug')
    assert "does not match" in p.native


def test_a_failed_alternative_is_described_by_its_closest_branch():
    p = problem({"id": "x", "review": "auto", "when": {"on": 1}})
    assert (p.field, p.message) == ("when", "must be of type string; got object")
    assert p.native.endswith("is not of type 'string'")


def test_paths_and_order():
    assert field_path(["yes_when", 0, "item", "number"]) == "yes_when.0.item.number"
    assert field_path([3, "a"], "signals") == "signals.3.a"
    assert field_path([]) == ""
    fields = [p.field for p in describe_all(list(VALIDATOR.iter_errors({"size": "x", "id": 3})))]
    assert fields == sorted(fields) and "review" in fields
    assert most_relevant([]) is None
