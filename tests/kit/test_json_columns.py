"""JSON columns are read with orjson where it reads what the standard library reads, and with
``json.loads`` where it would not (integers beyond 64 bits, NaN and infinity, lone surrogates)."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from chipwatch.db import json_value, session_scope
from chipwatch.knowledge.models import Result

TEXTS = [
    '{"a": [1, 2.5, "x", null, true], "b": {"c": "\\u00e9"}}',
    "123456789012345678901234567890",  # beyond 64 bits: orjson would answer a float
    "-9223372036854775809",
    "18446744073709551615",
    '["1234567890123456789 in a string"]',
    "[NaN, Infinity, -Infinity]",
    '"\\ud800"',
    "1e400",
    "0.1",
    '{"a": 1, "a": 2}',
]


@pytest.mark.parametrize("text", TEXTS)
def test_a_json_text_reads_as_the_standard_library_reads_it(text):
    got, expected = json_value(text), json.loads(text)
    assert repr(got) == repr(expected)  # repr: NaN equals nothing, and 1e29 == 10**29 would pass
    assert type(got) is type(expected)
    assert repr(json_value(text.encode())) == repr(expected)


def test_a_big_integer_in_a_json_column_comes_back_whole(db):
    big = 2**70 + 1
    with session_scope(db) as session:
        session.add(Result(
            id="json-probe", metric="throughput", value=1.0, comparator="eq", verification="vendor_reported",
            as_of_precision="day", published_on_precision="day", headline=False,
            attributes={"count": big, "ratio": 0.1, "name": "é"}, chip_ids=["jalapeno"], baseline_ids=[],
            model_ids=[],
        ))
    with session_scope(db, write=False) as session:
        attributes = session.execute(select(Result.attributes).where(Result.id == "json-probe")).scalar_one()
    assert attributes == {"count": big, "ratio": 0.1, "name": "é"}
    assert type(attributes["count"]) is int


def test_a_number_stored_in_a_json_column_is_refused_as_the_standard_library_refuses_it():
    # SQLite gives a JSON column's number as a number; the engine reads json.loads' TypeError as "keep it"
    with pytest.raises(TypeError):
        json_value(5)
