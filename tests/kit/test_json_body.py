"""JSON bodies: nesting is capped; NaN/Infinity, NUL characters and names given twice are refused with a 422
naming each field."""

from __future__ import annotations

import math

from chipwatch.kit.json_body import (
    HAS_NUL,
    MAX_JSON_DEPTH,
    NOT_FINITE,
    REPEATED,
    TOO_DEEP,
    body_problems,
    repeated_names,
)


def _nested(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = {"a": value}
    return value


def test_depth_is_counted_from_the_body():
    assert body_problems({"attributes": _nested(MAX_JSON_DEPTH - 1)}) == []
    too_deep = [{"field": "attributes", "message": TOO_DEEP}]
    assert body_problems({"attributes": _nested(MAX_JSON_DEPTH)}) == too_deep
    # One error per top-level field however deep it goes, and every such field is named.
    deep = {"x": _nested(500), "y": [_nested(100)], "ok": _nested(3)}
    assert body_problems(deep) == [{"field": "x", "message": TOO_DEEP}, {"field": "y", "message": TOO_DEEP}]


def test_every_non_finite_number_is_named_by_its_path():
    body = {"value": math.nan, "rows": [{"v": 1.5}, {"v": math.inf}], "n": {"gte": -math.inf}}
    assert body_problems(body) == [
        {"field": "value", "message": NOT_FINITE},
        {"field": "rows.1.v", "message": NOT_FINITE},
        {"field": "n.gte", "message": NOT_FINITE},
    ]


def _post(client, headers, path, raw):
    return client.post(path, content=raw, headers={**headers, "content-type": "application/json"})


def test_a_body_nested_256_deep_is_refused_and_nothing_is_stored(client, admin_headers):
    raw = '{"id": "deep-chip", "name": "Deep", "attributes": ' + '{"a": ' * 256 + "1" + "}" * 256 + "}"
    resp = _post(client, admin_headers, "/v1/chips", raw)
    assert resp.status_code == 422
    assert resp.json()["errors"] == [{"field": "attributes", "message": TOO_DEEP}]
    assert client.get("/v1/chips/deep-chip").status_code == 404


def test_a_body_too_deep_to_parse_is_a_422_not_a_400_or_500(client, admin_headers):
    for depth in (2000, 100_000):
        resp = _post(client, admin_headers, "/v1/webhooks", "[" * depth + "]" * depth)
        assert resp.status_code == 422, depth
        assert resp.json()["errors"][0]["field"] == "body"


def test_nan_and_infinity_are_refused_naming_every_field(client, admin_headers):
    raw = ('{"id": "nan-result", "metric": "throughput", "value": NaN, "value_min": -Infinity, '
           '"baseline_value": Infinity}')
    resp = _post(client, admin_headers, "/v1/results", raw)
    assert resp.status_code == 422
    assert [e["field"] for e in resp.json()["errors"]] == ["value", "value_min", "baseline_value"]
    assert client.get("/v1/results/nan-result").status_code == 404
    signal = ('{"id": "nan-signal", "question": "q?", "opened_on": "2026-01-01", "review": "auto", '
              '"subjects": ["jalapeno"], "yes_when": [{"item": {"number": {"unit": "MW", "gte": NaN}}}]}')
    resp = _post(client, admin_headers, "/v1/signals", signal)
    assert resp.status_code == 422
    assert resp.json()["errors"] == [{"field": "yes_when.0.item.number.gte", "message": NOT_FINITE}]


def test_a_whole_body_of_the_wrong_type_names_the_body(client, admin_headers):
    resp = _post(client, admin_headers, "/v1/chips", "[1, 2]")
    assert resp.status_code == 422
    assert [e["field"] for e in resp.json()["errors"]] == ["body"]


def test_a_body_that_is_not_json_names_the_body_and_where_it_breaks(client, admin_headers):
    resp = _post(client, admin_headers, "/v1/signals", '{"id": "x",')
    assert resp.status_code == 422
    assert resp.headers["content-type"] == "application/problem+json"
    assert resp.json()["errors"] == [
        {
            "field": "body",
            "message": "not valid JSON at character 11: Expecting property name enclosed in double quotes",
        }
    ]
    assert client.get("/v1/signals/x").status_code == 404


def test_a_body_that_is_not_utf8_names_the_body_and_the_byte(client, admin_headers):
    body = b'{"url": "https://a.example/f", "name": "\xff\xfe", "trust": "press"}'
    before = client.get("/v1/sources", params={"limit": 500}).json()["items"]
    resp = client.post("/v1/sources", content=body,
                       headers={**admin_headers, "content-type": "application/json"})
    assert resp.status_code == 422 and resp.headers["content-type"] == "application/problem+json"
    assert resp.json()["errors"] == [{"field": "body", "message": "not valid JSON: not UTF-8 at byte 40"}]
    assert client.get("/v1/sources", params={"limit": 500}).json()["items"] == before


def test_a_nul_character_in_any_string_or_key_is_named_by_its_path():
    body = {"name": "ok", "notes": "a\x00b", "tags": ["x", "\x00"], "attributes": {"k\x00": 1}}
    assert sorted(body_problems(body), key=lambda p: p["field"]) == [
        {"field": "attributes.k\x00", "message": HAS_NUL},
        {"field": "notes", "message": HAS_NUL},
        {"field": "tags.1", "message": HAS_NUL},
    ]


def test_a_nul_character_is_refused_the_same_on_every_database(client, admin_headers):
    # PostgreSQL text cannot hold U+0000 and SQLite can: the API refuses it before either sees it.
    resp = client.post("/v1/chips", json={"id": "nul-chip", "name": "Nul\x00Chip"}, headers=admin_headers)
    assert resp.status_code == 422
    assert resp.headers["content-type"].startswith("application/problem+json")
    assert {"field": "name", "message": HAS_NUL} in resp.json()["errors"]
    assert client.get("/v1/chips/nul-chip").status_code == 404


def test_every_name_given_twice_is_named_by_its_path():
    raw = '{"name": "a", "rows": [{"v": 1, "v": 2}], "name": "b", "ok": {"x": 1}}'
    assert sorted(repeated_names(raw), key=lambda p: p["field"]) == [
        {"field": "name", "message": REPEATED},
        {"field": "rows.0.v", "message": REPEATED},
    ]
    assert repeated_names('{"a": 1, "b": {"a": 2}}') == []
    assert repeated_names("not json") == []


def test_a_body_giving_a_name_twice_is_refused_and_nothing_is_stored(client, admin_headers):
    raw = '{"id": "twice-chip", "name": "First", "name": "Second"}'
    resp = _post(client, admin_headers, "/v1/chips", raw)
    assert resp.status_code == 422
    assert resp.json()["errors"] == [{"field": "name", "message": REPEATED}]
    assert client.get("/v1/chips/twice-chip").status_code == 404
    once = _post(client, admin_headers, "/v1/chips", '{"id": "twice-chip", "name": "Once"}')
    assert once.status_code == 201
