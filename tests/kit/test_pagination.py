"""keyset_page over a real database: every row once, in order, with ties on the first key."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import bindparam, select
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from chipwatch.db import get_engine, session_scope
from chipwatch.kit.errors import ApiError
from chipwatch.kit.pagination import (
    FOREIGN,
    MALFORMED,
    KeysetQuery,
    cursor_key,
    decode_cursor,
    encode_cursor,
    keyset_page,
    list_tag,
)
from chipwatch.types import UTCDateTime

T0 = datetime(2026, 8, 25, 9, 0, tzinfo=UTC)


class _Base(DeclarativeBase):
    pass


class Row(_Base):
    __tablename__ = "kit_page_probe"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str]
    at: Mapped[datetime] = mapped_column(UTCDateTime)


@pytest.fixture
def rows(db):
    engine = get_engine(db)
    _Base.metadata.create_all(engine)
    # Three rows share each timestamp, so the id must break ties.
    with session_scope(db) as session:
        session.add_all(
            Row(id=i, name=f"n{i:02d}", at=T0 + timedelta(minutes=i // 3)) for i in range(1, 12)
        )
    yield db
    _Base.metadata.drop_all(engine)


def _walk(settings, limit, **kw):
    pages, cursor = [], None
    while True:
        with session_scope(settings, write=False) as session:
            page, cursor = keyset_page(session, select(Row), cursor=cursor, limit=limit, **kw)
            pages.append([r.id for r in page])
        if cursor is None:
            return pages


def test_newest_first_on_two_keys_visits_every_row_once(rows):
    pages = _walk(rows, 4, keys=(Row.at, Row.id), descending=True)
    assert pages == [[11, 10, 9, 8], [7, 6, 5, 4], [3, 2, 1]]


def test_ascending_on_one_key_and_an_exact_last_page(rows):
    assert _walk(rows, 11, keys=(Row.name,)) == [list(range(1, 12))]
    assert _walk(rows, 5, keys=(Row.name,)) == [[1, 2, 3, 4, 5], [6, 7, 8, 9, 10], [11]]


def test_filters_and_column_rows(rows):
    with session_scope(rows, write=False) as session:
        stmt = select(Row.id, Row.name).where(Row.id > 8)
        page, cursor = keyset_page(session, stmt, keys=(Row.id,), cursor=None, limit=2)
        assert [tuple(r) for r in page] == [(9, "n09"), (10, "n10")]
        assert decode_cursor(cursor) == {"after": 10, "list": list_tag((Row.id,))}
        page, cursor = keyset_page(session, stmt, keys=(Row.id,), cursor=cursor, limit=2)
        assert ([r.id for r in page], cursor) == ([11], None)


def test_a_cursor_is_the_last_key_tagged_with_its_list_and_untagged_ones_still_read(rows):
    last = [(T0 + timedelta(minutes=3)).isoformat(), 11]
    with session_scope(rows, write=False) as session:
        _, cursor = keyset_page(session, select(Row), keys=(Row.at, Row.id), cursor=None, limit=1,
                                descending=True)
        assert cursor == encode_cursor(last, list_tag((Row.at, Row.id)))
        # a cursor written before lists were tagged pages the same way
        tagged, _ = keyset_page(session, select(Row), keys=(Row.at, Row.id), cursor=cursor, limit=2,
                                descending=True)
        untagged, _ = keyset_page(session, select(Row), keys=(Row.at, Row.id), cursor=encode_cursor(last),
                                  limit=2, descending=True)
        assert [r.id for r in tagged] == [r.id for r in untagged] == [10, 9]


def test_a_cursor_of_another_list_is_refused(rows):
    with session_scope(rows, write=False) as session:
        _, by_name = keyset_page(session, select(Row), keys=(Row.name,), cursor=None, limit=2)
        assert list_tag((Row.name,)) != list_tag((Row.id,))
        with pytest.raises(ApiError) as caught:
            keyset_page(session, select(Row), keys=(Row.id,), cursor=by_name, limit=2)
    assert caught.value.status == 422
    assert caught.value.extra["errors"] == [{"field": "cursor", "message": FOREIGN}]


@pytest.mark.parametrize(
    "raw",
    ["not base64 !", encode_cursor("x"), encode_cursor(["2026-08-25T09:00:00", 3]),
     encode_cursor(["2026-08-25T09:00:00+00:00", "3"]), encode_cursor(["2026-08-25T09:00:00+00:00"]),
     encode_cursor(True), encode_cursor([]), encode_cursor({"after": 3}),
     encode_cursor([], list_tag((Row.at, Row.id))), encode_cursor({"x": 1}, list_tag((Row.at, Row.id)))],
)
def test_malformed_cursors_are_422_naming_the_cursor(raw):
    with pytest.raises(ApiError) as caught:
        cursor_key(raw, (Row.at, Row.id))
    assert caught.value.status == 422
    assert caught.value.extra["errors"] == [{"field": "cursor", "message": MALFORMED}]


def test_a_cursor_decodes_to_typed_values():
    key = cursor_key(encode_cursor(["2026-08-25T09:00:00+00:00", 3]), (Row.at, Row.id))
    assert key == (T0, 3)
    assert cursor_key(encode_cursor("n07"), (Row.name,)) == ("n07",)
    assert cursor_key(None, (Row.id,)) is None


@pytest.mark.parametrize(("keys", "descending"), [(("at", "id"), True), (("name",), False)])
def test_a_query_built_once_pages_as_keyset_page_does(rows, keys, descending):
    columns = tuple(getattr(Row, k) for k in keys)
    query = KeysetQuery(select(Row.id, Row.name, Row.at).where(Row.id >= bindparam("low")), keys=columns,
                        descending=descending)
    stmt = select(Row.id, Row.name, Row.at).where(Row.id >= 2)
    built, cursor, once, again = [], None, [], None
    with session_scope(rows, write=False) as session:
        while True:
            page, cursor = keyset_page(session, stmt, keys=columns, cursor=cursor, limit=3,
                                       descending=descending)
            built.append(([r.id for r in page], cursor))
            page, again = query.page(session, {"low": 2}, cursor=again, limit=3)
            once.append(([r.id for r in page], again))
            if cursor is None:
                break
    assert once == built  # the same rows and the same cursors, page by page
    assert sorted(i for ids, _c in once for i in ids) == list(range(2, 12))
    expected_first = [11, 10, 9] if descending else [2, 3, 4]
    assert once[0][0] == expected_first


def test_a_query_built_once_refuses_a_cursor_of_another_list(rows):
    query = KeysetQuery(select(Row.id, Row.name), keys=(Row.name,))
    with session_scope(rows, write=False) as session, pytest.raises(ApiError) as refused:
        query.page(session, {}, cursor=encode_cursor(3, list_tag((Row.id,))), limit=2)
    assert refused.value.extra["errors"] == [{"field": "cursor", "message": FOREIGN}]
