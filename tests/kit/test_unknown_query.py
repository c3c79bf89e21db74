"""A query parameter the route does not declare is refused with 422 naming it, never ignored."""

from __future__ import annotations


def test_a_misspelt_filter_is_named_with_the_declared_one(client):
    resp = client.get("/v1/items", params={"sorce": "semianalysis"})
    assert resp.status_code == 422
    assert resp.headers["content-type"] == "application/problem+json"
    message = "unknown query parameter; did you mean 'source'?"
    assert resp.json()["errors"] == [{"field": "sorce", "message": message}]


def test_every_unknown_parameter_is_reported(client):
    resp = client.get("/v1/chips", params={"vendor": "nvidia", "colour": "red", "zzz": "1"})
    assert resp.status_code == 422
    fields = [e["field"] for e in resp.json()["errors"]]
    assert fields == ["colour", "zzz"]
    message = resp.json()["errors"][1]["message"]
    assert message.startswith("unknown query parameter; this endpoint takes ")
    assert "vendor" in message and "cursor" in message and "limit" in message


def test_routes_without_parameters_take_none(client):
    resp = client.get("/healthz", params={"verbose": "1"})
    assert resp.status_code == 422
    message = "unknown query parameter; this endpoint takes none"
    assert resp.json()["errors"] == [{"field": "verbose", "message": message}]


def test_declared_parameters_pass(client, admin_headers):
    assert client.get("/v1/chips", params={"vendor": "nvidia", "limit": 2}).status_code == 200
    assert client.get("/v1/signals", params={"status": "open", "limit": 5}).status_code == 200
    # Writes with declared query parameters too (the OPML import takes trust).
    opml = b'<?xml version="1.0"?><opml version="2.0"><head/><body/></opml>'
    resp = client.post("/v1/sources/opml", params={"trust": "press"}, content=opml,
                       headers={**admin_headers, "content-type": "text/x-opml"})
    assert resp.status_code == 200, resp.text


def test_a_parameter_given_twice_is_refused_not_cut_to_its_last_value(client):
    # ?mentions=a&mentions=b filtered by b alone, as if a had not been asked for.
    resp = client.get("/v1/items?mentions=jalapeno&mentions=gb300&limit=5&limit=5")
    assert resp.status_code == 422
    assert resp.headers["content-type"] == "application/problem+json"
    assert resp.json()["errors"] == [
        {"field": "mentions", "message": "given 2 times; give it once"},
        {"field": "limit", "message": "given 2 times; give it once"},
    ]
    assert client.get("/v1/items?mentions=jalapeno&limit=5").status_code == 200
