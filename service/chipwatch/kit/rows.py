"""List answers built from column rows: the columns a public model shows, and its JSON written in one pass.

A list read selects the columns of its ``<Noun>Public`` model and writes the rows as JSON with orjson,
instead of loading ORM objects and validating a model per row (about 60 µs a row, most of a page's time).
The bytes are those pydantic writes for the model: fields in the model's order, times in RFC 3339 with
``Z`` for UTC (``OPT_UTC_Z``), NaN and infinity as null. ``tests/kit/test_rows.py`` holds that to the
models on generated rows.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import date, datetime
from typing import Any

import orjson
from fastapi.responses import Response
from pydantic import BaseModel
from sqlalchemy import Executable, Result
from sqlalchemy.orm import Session

JSON_OPTIONS = orjson.OPT_UTC_Z | orjson.OPT_NON_STR_KEYS


def model_columns(table: Any, model: type[BaseModel], *, skip: Iterable[str] = ()) -> tuple[Any, ...]:
    """The columns of ``table`` (a SQLModel table class) named by ``model``'s fields, in the model's field
    order, leaving out ``skip`` (fields the caller fills from elsewhere). Raises AttributeError when a
    field has no column of that name."""
    left_out = set(skip)
    return tuple(getattr(table, name) for name in model.model_fields if name not in left_out)


def column_rows(session: Session, stmt: Executable, params: dict[str, Any] | None = None) -> Result:
    """``stmt`` (a select of columns, no entities) run as Core on the session's connection, with ``params``
    for its bound parameters (a statement built once with ``bindparam``): the rows carry
    the columns' types (JSON decoded, times aware) without the ORM's loading context per row, which costs
    as much again as reading them. Pending ORM changes are flushed first, as the ORM's autoflush would."""
    if session.autoflush:
        session.flush()  # returns at once when nothing is pending
    return session.connection().execute(stmt, params)


def dump_json(payload: Any) -> bytes:
    """``payload`` (dicts, lists, str, int, float, bool, None, date, datetime) as compact UTF-8 JSON.

    An integer beyond 64 bits (possible inside a fact's free-form JSON), which orjson refuses, sends the
    payload through the standard library instead, with times written the same way."""
    try:
        return orjson.dumps(payload, option=JSON_OPTIONS)
    except orjson.JSONEncodeError:
        return json.dumps(payload, default=_moment, ensure_ascii=False, separators=(",", ":")).encode()


def _moment(value: Any) -> str:
    if isinstance(value, datetime | date):
        text = value.isoformat()
        return text[:-6] + "Z" if isinstance(value, datetime) and text.endswith("+00:00") else text
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def json_response(payload: Any, *, status_code: int = 200) -> Response:
    """An ``application/json`` response of ``payload`` written by :func:`dump_json`."""
    return Response(dump_json(payload), status_code=status_code, media_type="application/json")


__all__ = ["JSON_OPTIONS", "column_rows", "dump_json", "json_response", "model_columns"]
