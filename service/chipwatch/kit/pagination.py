"""Keyset pagination: ``{"items": [...], "next_cursor": ...}`` pages over a sort key that is unique.

A cursor is the sort key of the last row of the previous page, with a tag of the list it belongs to
(a digest of the key columns' table and column names), base64url-encoded JSON; it is opaque to clients.
A cursor of another list is refused with a 422 rather than read as a position in this one (a results
cursor passed to the signals list would otherwise page from a plausible but wrong place). Untagged
cursors, as versions before the tag wrote them, are still read. :func:`keyset_page` is the one way a
list is paged: it adds the "after the cursor" condition, orders, fetches ``limit + 1`` rows to learn
whether another page follows, and encodes the next cursor.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Generic, TypeVar

from fastapi import Query
from pydantic import BaseModel
from sqlalchemy import Integer, bindparam, literal, tuple_
from sqlalchemy.sql import Select
from sqlmodel import Session

from chipwatch.kit.errors import invalid
from chipwatch.kit.rows import column_rows

T = TypeVar("T")
MAX_LIMIT = 500
MALFORMED = "malformed cursor; pass back the next_cursor of a previous page"
FOREIGN = "a cursor of another list; pass back the next_cursor of this list's previous page"

LimitQ = Query(50, ge=1, le=MAX_LIMIT, description="page size")
CursorQ = Query(None, max_length=512, description="next_cursor of the previous page")


class Page(BaseModel, Generic[T]):
    """A list answer: ``items`` and an opaque ``next_cursor`` (null on the last page)."""

    items: list[T]
    next_cursor: str | None = None


def encode_cursor(key: Any, tag: str | None = None) -> str:
    """Opaque keyset cursor for the last row's sort key (a JSON value; datetimes as ISO text), tagged
    with the list it pages when ``tag`` is given (see :func:`list_tag`)."""
    payload = {"after": key, "list": tag} if tag else key
    return base64.urlsafe_b64encode(json.dumps(payload, default=str).encode()).decode().rstrip("=")


def list_tag(keys: Sequence[Any]) -> str:
    """The tag of the lists paged by ``keys``: 8 hex digits of the SHA-256 of their ``table.column``
    names (the same for every page of one list, different for lists over other tables or keys)."""
    names = []
    for key in keys:
        column = getattr(key, "expression", key)
        table = getattr(column, "table", None)
        # An alias of a table (aliased(ResultEntity)) has an anonymous name that differs per statement.
        table = getattr(getattr(table, "original", table), "name", "")
        names.append(f"{table}.{getattr(column, 'name', getattr(key, 'key', ''))}")
    return hashlib.sha256(",".join(names).encode()).hexdigest()[:8]


def decode_cursor(cursor: str | None, expect: type | tuple[type, ...] = (str, int, list, dict)) -> Any:
    """The sort key a cursor names (of type ``expect``), None for no cursor.

    Raises a 422 :class:`~chipwatch.kit.errors.ApiError` naming ``cursor`` when it is malformed.
    """
    if cursor is None:
        return None
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        key = json.loads(base64.urlsafe_b64decode(padded.encode()).decode())
    except (ValueError, UnicodeDecodeError) as exc:
        raise invalid("cursor", MALFORMED) from exc
    if not isinstance(key, expect) or isinstance(key, bool) or key in ("", []):
        raise invalid("cursor", MALFORMED)
    return key


def _python_type(column: Any) -> type:
    sql_type = column.type
    # A TypeDecorator (UTCDateTime) reports ``object``; the type it decorates knows better.
    sql_type = getattr(sql_type, "impl_instance", sql_type)
    try:
        return sql_type.python_type
    except NotImplementedError:  # pragma: no cover - every key column is a plain type
        return str


def _key_value(raw: Any, kind: type) -> Any:
    """One cursor component back as the column's type; ValueError when it does not fit."""
    if kind is datetime:
        if not isinstance(raw, str):
            raise ValueError(raw)
        moment = datetime.fromisoformat(raw)
        if moment.tzinfo is None:
            raise ValueError(raw)
        return moment
    if kind is int:
        if not isinstance(raw, int) or isinstance(raw, bool):
            raise ValueError(raw)
        return raw
    if not isinstance(raw, str) or not raw:
        raise ValueError(raw)
    return raw


def cursor_key(cursor: str | None, keys: Sequence[Any]) -> tuple[Any, ...] | None:
    """The sort key a cursor holds, one value per column of ``keys`` in that column's Python type.

    A one-column key is encoded as a bare value, a longer one as a list, under the list's tag. Raises
    a 422 naming ``cursor`` when the cursor does not decode to such a key or was made by another list.
    """
    raw = decode_cursor(cursor)
    if raw is None:
        return None
    if isinstance(raw, dict):
        if set(raw) != {"after", "list"}:
            raise invalid("cursor", MALFORMED)
        if raw["list"] != list_tag(keys):
            raise invalid("cursor", FOREIGN)
        raw = raw["after"]
        if isinstance(raw, bool) or raw in ("", []) or not isinstance(raw, str | int | list):
            raise invalid("cursor", MALFORMED)
    parts = [raw] if len(keys) == 1 else raw
    if not isinstance(parts, list) or len(parts) != len(keys):
        raise invalid("cursor", MALFORMED)
    try:
        return tuple(_key_value(p, _python_type(k)) for p, k in zip(parts, keys, strict=True))
    except (TypeError, ValueError) as exc:
        raise invalid("cursor", MALFORMED) from exc


def _after(keys: Sequence[Any], values: Sequence[Any], descending: bool) -> Any:
    """Rows strictly past ``values`` in key order, as one row-value comparison ``(a, b) < (?, ?)``: both
    SQLite (3.15+) and PostgreSQL read it as a range on an index over the key columns, where the OR of
    prefixes (``a < ? OR (a = ? AND b < ?)``) makes SQLite scan from the start of the index."""
    if len(keys) == 1:
        return keys[0] < values[0] if descending else keys[0] > values[0]
    row = tuple_(*keys)
    bound = tuple_(*(literal(v, type_=k.type) for k, v in zip(keys, values, strict=True)))
    return row < bound if descending else row > bound


def _default_row_key(keys: Sequence[Any]) -> Callable[[Any], tuple[Any, ...]]:
    names = [k.key for k in keys]
    return lambda row: tuple(getattr(row, n) for n in names)


def keyset_page(
    session: Session,
    stmt: Select,
    *,
    keys: Sequence[Any],
    cursor: str | None,
    limit: int,
    descending: bool = False,
    row_key: Callable[[Any], Sequence[Any]] | None = None,
) -> tuple[list[Any], str | None]:
    """One page of ``stmt`` ordered by ``keys`` (columns whose values together are unique).

    Returns ``(rows, next_cursor)``: at most ``limit`` rows and the cursor of the next page, or None
    on the last page. ``stmt`` selects one entity (rows are its objects) or several columns/entities
    (rows are :class:`~sqlalchemy.Row`; columns alone are read as Core through
    :func:`chipwatch.kit.rows.column_rows`); ``row_key`` reads a row's key values when they are not
    attributes named like the key columns. ``descending`` orders every key column from high to low.
    Raises a 422 :class:`~chipwatch.kit.errors.ApiError` naming ``cursor`` when it is malformed.
    """
    after = cursor_key(cursor, keys)
    if after is not None:
        stmt = stmt.where(_after(keys, after, descending))
    stmt = stmt.order_by(*(k.desc() if descending else k.asc() for k in keys)).limit(limit + 1)
    descriptions = stmt.column_descriptions
    if len(descriptions) == 1:
        rows = list(session.scalars(stmt))
    elif any(isinstance(d["type"], type) for d in descriptions):  # an entity among the columns
        rows = list(session.execute(stmt).all())
    else:
        rows = list(column_rows(session, stmt).all())
    if len(rows) <= limit:
        return rows, None
    rows = rows[:limit]
    values = list((row_key or _default_row_key(keys))(rows[-1]))
    last = [v.isoformat() if isinstance(v, datetime) else v for v in values]
    return rows, encode_cursor(last[0] if len(keys) == 1 else last, list_tag(keys))


class KeysetQuery:
    """A list's page query built once, for a list read on every request: ``stmt`` (its filters written
    with ``bindparam``) ordered by ``keys``, as two finished statements, the first page and the page after
    a cursor, whose cursor values and limit are bound parameters too.

    Building a statement per request (filters, the cursor condition, ORDER BY, LIMIT) costs more than
    running a small page: each new statement object is built, given a cache key, and has its result
    columns matched again to the compiled form the cache holds. A statement made once does none of that.
    Pages are those of :func:`keyset_page` (same order, cursor and tag).
    """

    def __init__(
        self,
        stmt: Select,
        *,
        keys: Sequence[Any],
        descending: bool = False,
        row_key: Callable[[Any], Sequence[Any]] | None = None,
    ) -> None:
        self.keys = tuple(keys)
        self.tag = list_tag(self.keys)
        self.row_key = row_key or _default_row_key(self.keys)
        order = [k.desc() if descending else k.asc() for k in self.keys]
        limit = bindparam("page_limit", type_=Integer)
        bound = [bindparam(f"page_after_{n}", type_=k.type) for n, k in enumerate(self.keys)]
        if len(self.keys) == 1:
            after = self.keys[0] < bound[0] if descending else self.keys[0] > bound[0]
        else:
            after = tuple_(*self.keys) < tuple_(*bound) if descending else tuple_(*self.keys) > tuple_(*bound)
        self.first = stmt.order_by(*order).limit(limit)
        self.after = stmt.where(after).order_by(*order).limit(limit)

    def page(
        self, session: Session, params: dict[str, Any], *, cursor: str | None, limit: int
    ) -> tuple[list[Any], str | None]:
        """``(rows, next_cursor)`` of the page after ``cursor`` (None: the first page), at most ``limit``
        rows; ``params`` gives the statement's own bound parameters. Raises a 422
        :class:`~chipwatch.kit.errors.ApiError` naming ``cursor`` when it is malformed or of another list."""
        after = cursor_key(cursor, self.keys)
        values = {**params, "page_limit": limit + 1}
        stmt = self.first
        if after is not None:
            stmt = self.after
            values.update({f"page_after_{n}": v for n, v in enumerate(after)})
        rows = list(column_rows(session, stmt, values).all())
        if len(rows) <= limit:
            return rows, None
        rows = rows[:limit]
        last = [v.isoformat() if isinstance(v, datetime) else v for v in self.row_key(rows[-1])]
        return rows, encode_cursor(last[0] if len(self.keys) == 1 else last, self.tag)
