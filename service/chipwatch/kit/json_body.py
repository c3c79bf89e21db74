"""JSON request bodies: how deep they may nest, no NaN, Infinity or NUL character, no name given twice,
true or false for a boolean.

Python's JSON reader accepts ``NaN``, ``Infinity`` and ``-Infinity`` (not JSON: RFC 8259 has no such
numbers) and nests as deep as its recursion limit; what it accepts, pydantic and the JSON Schema
validator accept too, and the response writer (orjson) then refuses a value nested 255 deep.
PostgreSQL text holds no NUL character (U+0000) while SQLite stores it, so the same body would be
kept on one database and refused on the other. A name given twice in one object would keep its last
value and silently drop the first. So every JSON body is walked after it is parsed and before it is
validated, and refused with a 422 naming each offending field.

pydantic reads a boolean field leniently (``"yes"``, ``"on"``, ``"1"``, ``1`` all mean true), which a
JSON API should not: a client sending ``"enabled": "false"`` from a form it serialised as text would get
what it sent only by luck. Every boolean field of every body model, nested models and lists included,
takes the JSON literals ``true`` and ``false`` only (:func:`bool_problems`); query parameters and form
fields are text by nature and keep pydantic's reading.
"""

from __future__ import annotations

import email.message
import json
import math
import types
from collections import Counter
from typing import Annotated, Any, Union, get_args, get_origin

from fastapi import Request
from pydantic import BaseModel

from chipwatch.kit.errors import ApiError
from chipwatch.kit.schema_errors import field_path
from chipwatch.kit.validation import more_problems

MAX_JSON_DEPTH = 32
"""Containers inside containers a body may have; the deepest real body (a signal definition) has 6."""
MAX_REPORTED = 20
"""Errors listed at most; the detail says how many more there were."""
TOO_DEEP = f"nested deeper than {MAX_JSON_DEPTH} levels"
NOT_FINITE = "must be a finite number (NaN and Infinity are not JSON)"
HAS_NUL = "must not contain the NUL character (U+0000)"
REPEATED = "appears more than once in its object; each name must be given once"
NOT_BOOLEAN = "must be true or false"


def _path(parts: tuple[Any, ...]) -> str:
    return field_path(parts) or "body"


def body_problems(value: Any) -> list[dict[str, str]]:
    """``[{"field", "message"}]`` for every non-finite number, every string (value or key) holding a NUL
    character and every top-level field nested deeper than :data:`MAX_JSON_DEPTH` in a parsed JSON
    ``value`` (the body itself is depth 1). Iterative, so any depth the reader produced is walked
    without recursion."""
    problems: list[dict[str, str]] = []
    too_deep: set[Any] = set()
    stack: list[tuple[Any, tuple[Any, ...], int]] = [(value, (), 0)]
    while stack:
        node, path, depth = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            problems.append({"field": _path(path), "message": NOT_FINITE})
            continue
        if isinstance(node, str):
            if "\x00" in node:
                problems.append({"field": _path(path), "message": HAS_NUL})
            continue
        if not isinstance(node, dict | list):
            continue
        if depth + 1 > MAX_JSON_DEPTH:
            top = path[0] if path else None
            if top not in too_deep:
                too_deep.add(top)
                problems.append({"field": _path(path[:1]), "message": TOO_DEEP})
            continue
        if isinstance(node, dict):
            problems.extend(
                {"field": _path((*path, key)), "message": HAS_NUL}
                for key in node if isinstance(key, str) and "\x00" in key
            )
        children = node.items() if isinstance(node, dict) else enumerate(node)
        stack.extend((child, (*path, key), depth + 1) for key, child in reversed(list(children)))
    return problems


class _Members(dict):
    """A parsed JSON object that remembers the names it was given more than once."""

    __slots__ = ("repeated",)


def _members(pairs: list[tuple[str, Any]]) -> _Members:
    obj = _Members(pairs)
    obj.repeated = []
    if len(obj) < len(pairs):
        obj.repeated = sorted(name for name, n in Counter(name for name, _ in pairs).items() if n > 1)
    return obj


def repeated_names(raw: bytes | str) -> list[dict[str, str]]:
    """``[{"field", "message"}]`` for every name given twice in one object of the JSON text ``raw``
    (RFC 8259 leaves such an object's meaning to the reader; Python's keeps the last value, which would
    silently drop the first). Empty when there is none or ``raw`` is not JSON (its reader reports that)."""
    try:
        value = json.loads(raw, object_pairs_hook=_members)
    except (ValueError, RecursionError):
        return []
    problems: list[dict[str, str]] = []
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, _Members):
            problems.extend({"field": _path((*path, name)), "message": REPEATED} for name in node.repeated)
            stack.extend((child, (*path, key)) for key, child in node.items())
        elif isinstance(node, list):
            stack.extend((child, (*path, i)) for i, child in enumerate(node))
    return problems


def _plain(annotation: Any) -> Any:
    """``annotation`` without ``Annotated`` metadata and without ``None`` in a union (a null is the
    model's to judge); a union of several other types is returned as it is."""
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    if get_origin(annotation) in (Union, types.UnionType):
        rest = [a for a in get_args(annotation) if a is not type(None)]
        if len(rest) == 1:
            return _plain(rest[0])
    return annotation


def _bool_walk(annotation: Any, value: Any, path: tuple[Any, ...], out: list[dict[str, str]]) -> None:
    kind = _plain(annotation)
    if value is None:
        return
    if kind is bool:
        if not isinstance(value, bool):
            out.append({"field": _path(path), "message": NOT_BOOLEAN})
        return
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        if isinstance(value, dict):
            for name, field in kind.model_fields.items():
                key = field.alias if field.alias and field.alias in value else name
                if key in value:
                    _bool_walk(field.annotation, value[key], (*path, key), out)
        return
    origin, args = get_origin(kind), get_args(kind)
    if origin in (list, set, frozenset) and args and isinstance(value, list):
        for i, item in enumerate(value):
            _bool_walk(args[0], item, (*path, i), out)
    elif origin is tuple and args and isinstance(value, list):
        item_types = [args[0]] * len(value) if len(args) == 2 and args[1] is Ellipsis else list(args)
        for i, (item_type, item) in enumerate(zip(item_types, value, strict=False)):
            _bool_walk(item_type, item, (*path, i), out)
    elif origin is dict and len(args) == 2 and isinstance(value, dict):
        for key, item in value.items():
            _bool_walk(args[1], item, (*path, key), out)


def bool_problems(model: Any, body: Any) -> list[dict[str, str]]:
    """``[{"field", "message"}]`` for every boolean field of ``model`` (a pydantic model class, walked
    into nested models, lists, tuples and dict values) that ``body`` gives as anything but JSON
    ``true``/``false``; a null is left to the model (it says whether the field may be null). Empty
    when ``model`` is not a pydantic model."""
    out: list[dict[str, str]] = []
    _bool_walk(model, body, (), out)
    return out


def _body_annotation(request: Request) -> Any:
    route = request.scope.get("route")
    field_info = getattr(getattr(route, "body_field", None), "field_info", None)
    return getattr(field_info, "annotation", None)


def refuse(problems: list[dict[str, str]]) -> ApiError:
    """The 422 for ``problems`` (the first :data:`MAX_REPORTED` listed)."""
    shown = problems[:MAX_REPORTED]
    detail = "; ".join(f"{p['field']}: {p['message']}" for p in shown)
    if len(problems) > len(shown):
        detail += f"; and {len(problems) - len(shown)} more"
    return ApiError(422, "Unprocessable Content", detail, errors=shown)


def _is_json(content_type: str | None) -> bool:
    # The same test FastAPI applies before it parses a body as JSON.
    if not content_type:
        return True
    message = email.message.Message()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (
        subtype == "json" or subtype.endswith("+json")
    )


async def check_json_body(request: Request) -> None:
    """Request dependency: refuse a JSON body that nests too deep, holds NaN or Infinity or a NUL
    character, gives a name twice in one object, or gives a boolean field anything but true or false
    (422).

    Runs after FastAPI has parsed the body of a route that declares one (the parsed value is cached on
    the request) and before the body is validated; routes that read their body themselves (the OPML
    import) are not touched. The refusal also lists what the route's model and its declared checks
    find in the other fields (:func:`chipwatch.kit.validation.more_problems`).
    """
    route = request.scope.get("route")
    if getattr(route, "body_field", None) is None or not _is_json(request.headers.get("content-type")):
        return
    if not await request.body():
        return
    body = await request.json()
    problems = body_problems(body)
    if not any(p["message"] == TOO_DEEP for p in problems):  # a body that deep is refused as it is
        problems += repeated_names(await request.body())
        problems += bool_problems(_body_annotation(request), body)
    if problems:
        # The model and the route's checks never run on this body: report their problems too.
        raise refuse(problems + await more_problems(request, body, problems, validate_model=True))


__all__ = [
    "HAS_NUL", "MAX_JSON_DEPTH", "NOT_BOOLEAN", "NOT_FINITE", "REPEATED", "TOO_DEEP", "body_problems",
    "bool_problems", "check_json_body", "refuse", "repeated_names",
]
