"""Readable messages for JSON Schema (2020-12) validation errors, naming the field at fault.

Seed files and signal definitions are both checked against the schemas in ``schema/``; both report a
refusal as a field path (``yes_when.0.item.number.unit``: keys and list indexes joined by dots, the
one way every API error and seed report writes a field), a message and, for an unknown key, the
closest allowed key. A schema may word its own message per keyword in ``x-messages``
(``{"pattern": "must be a slug"}``), which wins over the generic wording here.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from jsonschema.exceptions import ValidationError, best_match, relevance


@dataclass(frozen=True)
class SchemaProblem:
    """One refusal: where (``path``: keys and list indexes), which keyword failed, and why.

    ``message`` reads after the field name (``"is required"``, ``"must be one of ..."``);
    ``suggestion`` is the closest allowed key for an unknown key, else None (it is also in ``message``);
    ``native`` is jsonschema's own wording of the same error (``'700 W' is not of type 'number'``), for
    reports that quote the validator; ``worded_by_schema`` is True when ``message`` is the schema's own
    ``x-messages`` text.
    """

    path: tuple[str | int, ...]
    keyword: str
    message: str
    native: str
    suggestion: str | None = None
    worded_by_schema: bool = False

    @property
    def field(self) -> str:
        """The path as text: ``a.b.0.c`` (empty for the document itself)."""
        return field_path(self.path)


def field_path(path: Iterable[Any], prefix: str = "") -> str:
    """``["yes_when", 0, "item"]`` as ``yes_when.0.item``; ``prefix`` is a path the text continues.

    The one spelling of a field in every error the service reports (API problems, signal definitions,
    seed files): keys and list indexes joined by dots, as pydantic locates errors and as a JSON Pointer
    does with ``/`` (``/yes_when/0/item``).
    """
    return ".".join(str(part) for part in (prefix, *path) if part != "")


def json_type(value: Any) -> str:
    """The JSON type name of a Python value (``null``, ``boolean``, ``number``, ``string``...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


def most_relevant(errors: Iterable[ValidationError]) -> ValidationError | None:
    """The error to report first among ``errors`` (jsonschema's relevance order), or None."""
    errors = list(errors)
    return max(errors, key=relevance) if errors else None


def custom_message(error: ValidationError) -> str | None:
    """The schema's own ``x-messages`` wording for the failed keyword, with the offending value named
    when it is a scalar; None when the schema has none."""
    schema = error.schema if isinstance(error.schema, dict) else {}
    messages = schema.get("x-messages")
    custom = messages.get(error.validator) if isinstance(messages, dict) else None
    if not isinstance(custom, str):
        return None
    if isinstance(error.instance, str | int | float | bool) or error.instance is None:
        # x-messages are worded either as a predicate ("must be a slug") or as a sentence of their own.
        if custom.startswith(("must ", "is ")):
            return f"{json.dumps(error.instance, ensure_ascii=False)} {custom}"
        return f"{custom} (got {json.dumps(error.instance, ensure_ascii=False)})"
    return custom


def suggest(value: str, known: Iterable[str]) -> str | None:
    """The known name closest to ``value`` (difflib ratio 0.6 or more), or None."""
    close = difflib.get_close_matches(value, sorted(known), n=1, cutoff=0.6)
    return close[0] if close else None


def _enum_message(error: ValidationError) -> str:
    options = ", ".join(json.dumps(v) for v in error.validator_value)
    message = f"must be one of {options}; got {json.dumps(error.instance)}"
    if isinstance(error.instance, bool):
        # YAML 1.1 reads an unquoted no/yes/off/on as a boolean.
        message += ' (in YAML write "no" with quotes)'
    return message


def _generic(error: ValidationError) -> str:
    kind, expected = error.validator, error.validator_value
    if kind == "enum":
        return _enum_message(error)
    if kind == "type":
        expected = " or ".join(expected) if isinstance(expected, list) else expected
        return f"must be of type {expected}; got {json_type(error.instance)}"
    if kind == "format":
        return f"is not a valid {expected}"
    if kind == "minItems" and expected == 1:
        return "must not be empty"
    if kind == "uniqueItems":
        return "has duplicate entries"
    return error.message


def describe(error: ValidationError) -> SchemaProblem:
    """The :class:`SchemaProblem` for one validation error.

    An ``anyOf``/``oneOf`` failure without its own ``x-messages`` wording is described by its most
    relevant branch; a missing required key and an unknown key are named in the path.
    """
    custom = custom_message(error)
    if custom is None and error.context:
        return describe(best_match(error.context))
    path, native = tuple(error.absolute_path), error.message
    if custom is not None:
        return SchemaProblem(path, error.validator, custom, native, worded_by_schema=True)
    if error.validator == "required" and isinstance(error.instance, dict):
        missing = [k for k in error.validator_value if k not in error.instance]
        if missing:
            return SchemaProblem((*path, missing[0]), "required", "is required", native)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = list((error.schema or {}).get("properties", {}))
        extra = sorted(k for k in error.instance if k not in allowed)
        if extra:
            close = suggest(extra[0], allowed)
            hint = f"did you mean {close!r}?" if close else f"allowed keys: {', '.join(allowed)}"
            message = f"unknown key {extra[0]!r}; {hint}"
            return SchemaProblem((*path, extra[0]), "additionalProperties", message, native, close)
    return SchemaProblem(path, error.validator, _generic(error), native)


def describe_each(error: ValidationError) -> list[SchemaProblem]:
    """The problems of one validation error: one per missing required key and one per unknown key
    (jsonschema raises one error for all of an object's missing or unknown keys, and :func:`describe`
    names the first), else :func:`describe`'s one."""
    first = describe(error)
    instance, schema = error.instance, error.schema if isinstance(error.schema, dict) else {}
    if first.worded_by_schema or not isinstance(instance, dict):
        return [first]
    if first.keyword == "required":
        keys = [k for k in error.validator_value if k not in instance]
    elif first.keyword == "additionalProperties":
        allowed = list(schema.get("properties", {}))
        keys = sorted(k for k in instance if k not in allowed)
    else:
        return [first]
    return [first, *(_problem_for_key(error, key, schema) for key in keys[1:])]


def _problem_for_key(error: ValidationError, key: str, schema: dict) -> SchemaProblem:
    path = (*tuple(error.absolute_path), key)
    if error.validator == "required":
        return SchemaProblem(path, "required", "is required", error.message)
    allowed = list(schema.get("properties", {}))
    close = suggest(key, allowed)
    hint = f"did you mean {close!r}?" if close else f"allowed keys: {', '.join(allowed)}"
    return SchemaProblem(path, "additionalProperties", f"unknown key {key!r}; {hint}", error.message, close)


_STRING_SHAPE = frozenset({"pattern", "format", "minLength", "maxLength"})
"""Keywords that each judge the shape of one string: for one value, the first says what is wrong."""


def one_per_string(problems: Iterable[SchemaProblem]) -> list[SchemaProblem]:
    """``problems`` without a second judgement of one string's shape (``"yesterday"`` fails both the
    date pattern and the date format; ``""`` both minLength and a pattern): the first is kept."""
    seen: set[tuple[str | int, ...]] = set()
    kept = []
    for problem in problems:
        if problem.keyword in _STRING_SHAPE:
            if problem.path in seen:
                continue
            seen.add(problem.path)
        kept.append(problem)
    return kept


def describe_all(errors: Sequence[ValidationError]) -> list[SchemaProblem]:
    """:func:`describe_each` of each error, ordered by path so a report reads top to bottom."""
    problems = [p for e in errors for p in describe_each(e)]
    return sorted(problems, key=lambda p: [(0, x) if isinstance(x, int) else (1, str(x)) for x in p.path])
