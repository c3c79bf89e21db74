"""Every error of a refused body in one answer.

A body is checked in two stages: the request layer (NaN and nesting in :mod:`chipwatch.kit.json_body`,
then the route's pydantic model: types and bounds), and the route's service (what needs the database or
the row as a whole: unknown references, an opening date in the future, ``value_min > value_max``...).
When the first stage refuses a body the route never runs, so its service's checks would go unreported
and the client would learn of them only after fixing the first batch.

So a write route declares its service's checks with :func:`body_check`, and when the request layer
refuses a body the kit still runs that check, in a read transaction, over the top-level fields that did
pass (typed as the model types them), and answers both lists in one 422 (:func:`more_problems`). When
the first stage passes, the route runs and its service reports all of its own problems at once.

A problem is ``(field, message)``; fields are dotted paths (``chip_ids.1``, see
:func:`chipwatch.kit.schema_errors.field_path`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import cache
from typing import Annotated, Any, TypeVar

from fastapi import Request
from pydantic import BaseModel, TypeAdapter, ValidationError
from sqlmodel import Session
from starlette.concurrency import run_in_threadpool

from chipwatch.db import session_scope

log = logging.getLogger("chipwatch.api")

Problem = tuple[str, str]
"""``(field, message)``."""
BodyCheck = Callable[[Session, dict[str, Any], Request], list[Problem]]
"""``check(session, fields, request)``: the problems of ``fields`` (the body's top-level fields that
passed the request layer, typed) that only the route's service would find; ``request`` gives the path
parameters (the row a PATCH changes). Reads only."""

_ATTRIBUTE = "__chipwatch_body_check__"
F = TypeVar("F", bound=Callable[..., Any])


def body_check(check: BodyCheck) -> Callable[[F], F]:
    """Decorator for a write route's endpoint: ``check`` also runs when the request layer refuses the
    body, so the 422 lists its problems too (see the module)."""

    def mark(endpoint: F) -> F:
        setattr(endpoint, _ATTRIBUTE, check)
        return endpoint

    return mark


def top_field(field: str) -> str:
    """The top-level field of a dotted path (``chip_ids.1`` -> ``chip_ids``)."""
    return field.split(".", 1)[0]


@cache
def _adapter(model: type[BaseModel], name: str) -> TypeAdapter[Any]:
    field = model.model_fields[name]
    annotation = Annotated[(field.annotation, *field.metadata)] if field.metadata else field.annotation
    return TypeAdapter(annotation)


def _body_model(request: Request) -> type[BaseModel] | None:
    route = request.scope.get("route")
    body_field = getattr(route, "body_field", None)
    annotation = getattr(getattr(body_field, "field_info", None), "annotation", None)
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def _fields_by_name(model: type[BaseModel]) -> dict[str, str]:
    """Body key -> model field name (aliases included)."""
    out = {}
    for name, field in model.model_fields.items():
        out[name] = name
        if field.alias:
            out[field.alias] = name
    return out


def model_problems(model: type[BaseModel], body: dict[str, Any]) -> list[Problem]:
    """The problems pydantic finds in ``body`` as ``model``, as the API reports them."""
    try:
        model.model_validate(body)
    except ValidationError as exc:
        return [(".".join(str(p) for p in e["loc"]) or "body", e["msg"]) for e in exc.errors()]
    return []


def parsed_fields(model: type[BaseModel] | None, body: dict[str, Any], failed: set[str]) -> dict[str, Any]:
    """The top-level fields of ``body`` outside ``failed`` that ``model`` accepts, typed as it types
    them (all of them, untyped, when the body has no model)."""
    if model is None:
        return {key: value for key, value in body.items() if key not in failed}
    names = _fields_by_name(model)
    out: dict[str, Any] = {}
    for key, value in body.items():
        name = names.get(key)
        if key in failed or name is None:
            continue
        try:
            out[name] = _adapter(model, name).validate_python(value)
        except ValidationError:
            continue
    return out


def _run_check(check: BodyCheck, fields: dict[str, Any], request: Request) -> list[Problem]:
    with session_scope(write=False) as session:
        return check(session, fields, request)


async def more_problems(
    request: Request, body: Any, found: list[dict[str, str]], *, validate_model: bool = False
) -> list[dict[str, str]]:
    """Problems to add to ``found`` (the request layer's, ``{"field", "message"}``) for the refused
    ``body``: with ``validate_model``, those of the route's pydantic model (when the request layer
    stopped before it ran); then those of the route's :func:`body_check` over the fields that passed.
    A field already refused is not reported again. Never raises: a check that fails is logged and
    leaves the answer as it was."""
    if not isinstance(body, dict):
        return []
    failed = {top_field(p["field"]) for p in found}
    if "body" in failed:
        return []
    extra: list[dict[str, str]] = []
    model = _body_model(request)
    if validate_model and model is not None:
        for field, message in model_problems(model, body):
            if top_field(field) not in failed:
                extra.append({"field": field, "message": message})
        failed |= {top_field(p["field"]) for p in extra}
    route = request.scope.get("route")
    check: BodyCheck | None = getattr(getattr(route, "endpoint", None), _ATTRIBUTE, None)
    if check is None:
        return extra
    fields = parsed_fields(model, body, failed)
    try:
        problems = await run_in_threadpool(_run_check, check, fields, request)
    except Exception:  # the request layer's answer stands; the extra checks are a courtesy
        log.exception("the body check of %s %s failed", request.method, request.url.path)
        return extra
    seen = {(p["field"], p["message"]) for p in (*found, *extra)}
    for field, message in problems:
        if top_field(field) not in failed and (field, message) not in seen:
            seen.add((field, message))
            extra.append({"field": field, "message": message})
    return extra


__all__ = [
    "BodyCheck", "Problem", "body_check", "model_problems", "more_problems", "parsed_fields", "top_field",
]
