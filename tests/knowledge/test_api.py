"""The knowledge-base read and write API on a seeded database."""

import pytest

from chipwatch.kit.pagination import FOREIGN

KINDS = ["vendors", "chips", "models", "benchmarks", "results", "funding-rounds", "deployments", "claims"]
PROBLEM = "application/problem+json"


def _all(client, path, **params):
    items, cursor, pages = [], None, 0
    while True:
        q = dict(params, **({"cursor": cursor} if cursor else {}))
        body = client.get(path, params=q).json()
        items += body["items"]
        pages += 1
        cursor = body["next_cursor"]
        if cursor is None:
            return items, pages


@pytest.mark.parametrize("kind", KINDS)
def test_list_and_detail_every_kind(client, kind):
    r = client.get(f"/v1/{kind}")
    assert r.status_code == 200
    body = r.json()
    assert set(body) == {"items", "next_cursor"}
    assert body["items"], f"seed data has no {kind}"
    first = body["items"][0]
    detail = client.get(f"/v1/{kind}/{first['id']}")
    assert detail.status_code == 200
    assert detail.json() == first


@pytest.mark.parametrize("kind", KINDS)
def test_unknown_id_is_problem_404(client, kind):
    r = client.get(f"/v1/{kind}/no-such-thing")
    assert r.status_code == 404
    assert r.headers["content-type"].startswith(PROBLEM)
    body = r.json()
    assert body["status"] == 404 and body["title"] == "Not Found" and "no-such-thing" in body["detail"]


def test_pagination_walks_every_row_once(client):
    everything = client.get("/v1/vendors", params={"limit": 500}).json()["items"]
    assert len(everything) > 7
    paged, pages = _all(client, "/v1/vendors", limit=3)
    assert pages == -(-len(everything) // 3)
    assert [v["id"] for v in paged] == [v["id"] for v in everything]
    assert [v["id"] for v in paged] == sorted(v["id"] for v in paged)


@pytest.mark.parametrize(
    "params,field",
    [
        ({"limit": 0}, "limit"),
        ({"limit": 10_000}, "limit"),
        ({"limit": "many"}, "limit"),
        ({"cursor": "%%%not-base64"}, "cursor"),
        ({"verification": "rumour"}, "verification"),
        ({"chip": "no-such-chip"}, "chip"),
        ({"chip": "Bad Id!"}, "chip"),
    ],
)
def test_bad_parameters_are_problem_422(client, params, field):
    r = client.get("/v1/results", params=params)
    assert r.status_code == 422
    assert r.headers["content-type"].startswith(PROBLEM)
    body = r.json()
    assert body["status"] == 422
    assert field in body["detail"]
    assert any(e["field"] == field for e in body["errors"])


def test_a_cursor_of_another_list_is_refused_not_read_as_a_position(client):
    cursor = client.get("/v1/results", params={"limit": 1}).json()["next_cursor"]
    assert client.get("/v1/results", params={"limit": 1, "cursor": cursor}).status_code == 200
    for path in ("/v1/chips", "/v1/signals", "/v1/items"):
        r = client.get(path, params={"cursor": cursor})
        assert r.status_code == 422, path
        assert r.json()["errors"] == [{"field": "cursor", "message": FOREIGN}]


def test_result_filters(client):
    jal = _all(client, "/v1/results", chip="jalapeno")[0]
    assert jal and all("jalapeno" in r["chips"] if "chips" in r else "jalapeno" in r["chip_ids"] for r in jal)
    vs_gb300 = _all(client, "/v1/results", chip="jalapeno", baseline="gb300")[0]
    assert vs_gb300 and all("gb300" in r["baseline_ids"] for r in vs_gb300)
    assert len(vs_gb300) < len(jal)
    kimi = _all(client, "/v1/results", model="kimi-k2-5")[0]
    assert kimi and all("kimi-k2-5" in r["model_ids"] for r in kimi)
    independent = _all(client, "/v1/results", verification="independent")[0]
    assert independent and all(r["verification"] == "independent" for r in independent)
    assert not [r for r in jal if r["verification"] == "independent"], "no Jalapeño figure is independent yet"
    speed = _all(client, "/v1/results", metric="single_user_output_speed", chip="jalapeno")[0]
    assert {r["value"] for r in speed} >= {1459.0, 700.0, 694.0}
    by_nvidia = _all(client, "/v1/results", reported_by="nvidia")[0]
    assert by_nvidia and all(r["reported_by"] == "nvidia" for r in by_nvidia)
    assert _all(client, "/v1/results", benchmark="inferencex")[0]


def test_other_kind_filters(client):
    nv_chips = _all(client, "/v1/chips", vendor="nvidia")[0]
    assert {"gb200", "gb300", "vera-rubin"} <= {c["id"] for c in nv_chips}
    assert all(c["vendor_id"] == "nvidia" for c in nv_chips)
    acq = _all(client, "/v1/funding-rounds", round_type="acquisition")[0]
    assert [(f["vendor_id"], f["acquirer_id"], f["amount"], f["currency"]) for f in acq] == [
        ("groq", "nvidia", 20e9, "USD")
    ]
    xiwang = _all(client, "/v1/funding-rounds", vendor="xiwang")[0]
    assert any(f["post_money_valuation"] == 20e9 and f["currency"] == "CNY" for f in xiwang)
    deps = _all(client, "/v1/deployments", chip="jalapeno")[0]
    assert any(d["capacity_mw_target"] == 100 for d in deps)
    deepseek_models = _all(client, "/v1/models", developer="deepseek")[0]
    assert {"deepseek-r1", "deepseek-v4", "deepseek-v4-pro"} <= {m["id"] for m in deepseek_models}
    cn = _all(client, "/v1/vendors", country="CN")[0]
    assert {"xiwang", "moore-threads", "huawei"} <= {v["id"] for v in cn}


def test_writes_need_the_admin_token(client, admin_headers):
    body = {"id": "test-chip", "name": "Test Chip", "vendor_id": "nvidia"}
    assert client.post("/v1/chips", json=body).status_code == 401
    r = client.post("/v1/chips", json=body, headers={"Authorization": "Bearer wrong"})
    assert r.status_code == 401 and r.headers["content-type"].startswith(PROBLEM)
    r = client.post("/v1/chips", json=body, headers=admin_headers)
    assert r.status_code == 201, r.text
    assert client.get("/v1/chips/test-chip").json()["name"] == "Test Chip"
    assert client.post("/v1/chips", json=body, headers=admin_headers).status_code == 409


def test_create_refuses_unknown_reference_and_bad_fields(client, admin_headers):
    r = client.post("/v1/chips", json={"id": "x1", "name": "X", "vendor_id": "nobody"}, headers=admin_headers)
    assert r.status_code == 422 and "vendor_id" in r.json()["detail"] and "nobody" in r.json()["detail"]
    r = client.post("/v1/chips", json={"id": "x1", "name": "X", "colour": "red"}, headers=admin_headers)
    assert r.status_code == 422 and "colour" in r.json()["detail"]
    r = client.post(
        "/v1/results", json={"id": "x2", "metric": "tpot", "verification": "trust-me"}, headers=admin_headers
    )
    assert r.status_code == 422 and "verification" in r.json()["detail"]
    assert client.get("/v1/chips/x1").status_code == 404


def test_patch_changes_only_given_fields(client, admin_headers):
    before = client.get("/v1/chips/jalapeno").json()
    r = client.patch("/v1/chips/jalapeno", json={"status": "sampling"}, headers=admin_headers)
    assert r.status_code == 200, r.text
    after = client.get("/v1/chips/jalapeno").json()
    assert after["status"] == "sampling"
    assert {k: v for k, v in after.items() if k != "status"} == {
        k: v for k, v in before.items() if k != "status"
    }
    assert client.patch("/v1/chips/nope", json={"status": "x"}, headers=admin_headers).status_code == 404


def test_health_and_docs(client):
    assert client.get("/healthz").json()["status"] == "ok"
    assert client.get("/readyz").json() == {"status": "ready"}
    assert client.get("/docs").status_code == 200
    schema = client.get("/openapi.json").json()
    assert "/v1/race/scorecard" in schema["paths"]


def test_read_token_closes_reads(client, monkeypatch, admin_headers):
    from chipwatch.config import get_settings

    monkeypatch.setenv("CHIPWATCH_READ_TOKEN", "reader")
    get_settings.cache_clear()
    assert client.get("/v1/chips").status_code == 401
    assert client.get("/v1/chips", headers={"Authorization": "Bearer reader"}).status_code == 200
    assert client.get("/v1/chips", headers=admin_headers).status_code == 200
    assert client.get("/healthz").status_code == 200


def test_nul_characters_are_refused_not_crashing(client, admin_headers):
    r = client.post("/v1/chips", json={"id": "nul-chip", "name": "bad\u0000name"}, headers=admin_headers)
    # Refused on every database alike (PostgreSQL could not store it), naming the field.
    assert r.status_code == 422, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    assert [e["field"] for e in r.json()["errors"]] == ["name"]
    assert client.get("/v1/chips/nul-chip").status_code == 404
    r = client.get("/v1/results", params={"metric": "tpot\u0000"})
    assert r.status_code in (200, 422)
    read = client.get("/v1/chips/nul%00chip")  # a read stores nothing, so it does not say "stored"
    assert read.status_code in (404, 422), read.text
    if read.status_code == 422:
        assert read.json()["detail"].startswith("a value cannot be looked up: ")


@pytest.mark.parametrize("path", ["/v1/signals", "/v1/results", "/v1/sources", "/v1/items", "/v1/chips"])
@pytest.mark.parametrize("cursor", ["eyJhIjoxfQ", "WzEsMiwzXQ", "WyJ4Il0", "bnVsbA", "IiI", "dHJ1ZQ"])
def test_cursors_of_the_wrong_shape_are_problem_422(client, path, cursor):
    r = client.get(path, params={"cursor": cursor})
    if cursor == "bnVsbA":  # JSON null names no position: the first page
        assert r.status_code in (200, 422)
        return
    assert r.status_code == 422, (path, cursor, r.text)
    assert r.json()["errors"][0]["field"] == "cursor"


def test_patch_null_in_a_required_field_is_422(client, admin_headers):
    cases = [
        ("chips", "jalapeno", "name"),
        ("results", "r09-jalapeno-per-kw-104x", "metric"),
        ("chips", "jalapeno", "aliases"),
        ("funding-rounds", "xiwang-2026-08-round", "vendor_id"),
    ]
    for kind, id_, field in cases:
        r = client.patch(f"/v1/{kind}/{id_}", json={field: None}, headers=admin_headers)
        assert r.status_code == 422, (kind, field, r.text)
        assert field in r.json()["detail"]


def test_oversize_or_empty_aliases_are_refused(client, admin_headers):
    for aliases in (["q" * 3000], [""]):
        r = client.post("/v1/chips", json={"id": "alias-chip", "name": "Alias", "aliases": aliases},
                        headers=admin_headers)
        assert r.status_code == 422 and "aliases.0" in r.json()["detail"]


def test_oversize_signal_term_is_refused(client, admin_headers):
    body = {
        "id": "long-term", "question": "?", "opened_on": "2026-11-01", "review": "auto",
        "subjects": ["jalapeno"], "yes_when": [{"item": {"terms_any": ["t" * 1000]}}],
    }
    r = client.post("/v1/signals", json=body, headers=admin_headers)
    assert r.status_code == 422, r.text
    assert "terms_any" in r.json()["detail"]
