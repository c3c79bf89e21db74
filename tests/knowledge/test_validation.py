"""Knowledge-base writes are checked whole: every refused field is named in one 422."""

from __future__ import annotations

from chipwatch.knowledge.checks import MAX_ALIASES


def _fields(resp) -> list[str]:
    assert resp.status_code == 422, resp.text
    assert resp.headers["content-type"] == "application/problem+json"
    return [e["field"] for e in resp.json()["errors"]]


def test_every_problem_of_a_new_result_is_reported(client, admin_headers):
    body = {"id": "bad-result", "metric": "throughput", "chip_ids": ["jalapeno", "no-such-chip"],
            "benchmark_id": "no-such-bench", "value_min": 5.0, "value_max": 2.0, "reported_by": "nobody"}
    resp = client.post("/v1/results", json=body, headers=admin_headers)
    assert sorted(_fields(resp)) == ["benchmark_id", "chip_ids.1", "reported_by", "value_min"]
    messages = {e["field"]: e["message"] for e in resp.json()["errors"]}
    assert messages["value_min"] == "value_min (5) exceeds value_max (2)"
    assert messages["chip_ids.1"] == "no chip with id 'no-such-chip'"
    assert messages["benchmark_id"] == "no benchmark with id 'no-such-bench'"
    assert client.get("/v1/results/bad-result").status_code == 404


def test_negative_amounts_and_type_errors_are_all_reported(client, admin_headers):
    body = {"id": "bad-round", "vendor_id": "xiwang", "round_type": "series", "amount": -5e6,
            "post_money_valuation": -1, "currency": "TOOLONG"}
    assert sorted(_fields(client.post("/v1/funding-rounds", json=body, headers=admin_headers))) == [
        "amount", "currency", "post_money_valuation"]
    deployment = {"id": "bad-dep", "chip_id": "jalapeno", "capacity_mw": -1, "units_min": 10, "units_max": 2}
    # The model's bound and the range across fields, in one answer.
    assert _fields(client.post("/v1/deployments", json=deployment, headers=admin_headers)) == [
        "capacity_mw", "units_min"]
    deployment["capacity_mw"] = 5
    assert _fields(client.post("/v1/deployments", json=deployment, headers=admin_headers)) == ["units_min"]


def test_an_amount_a_float_cannot_keep_exactly_is_refused_not_rounded(client, admin_headers):
    body = {"id": "huge-round", "vendor_id": "xiwang", "round_type": "series", "amount": int("9" * 60),
            "post_money_valuation": 2**53 + 2, "currency": "USD"}
    assert sorted(_fields(client.post("/v1/funding-rounds", json=body, headers=admin_headers))) == [
        "amount", "post_money_valuation"]
    assert client.get("/v1/funding-rounds/huge-round").status_code == 404
    body.update(amount=2**53, post_money_valuation=2**53)  # the largest accepted, stored as written
    assert client.post("/v1/funding-rounds", json=body, headers=admin_headers).status_code == 201
    assert client.get("/v1/funding-rounds/huge-round").json()["amount"] == 2**53


def test_an_amount_just_past_two_to_the_53_is_refused_not_rounded_down_to_it(client, admin_headers):
    # 2^53 + 1 becomes 2^53 as a float, so a bound checked after the conversion lets it through rounded.
    body = {"id": "edge-round", "vendor_id": "xiwang", "round_type": "series", "amount": 2**53 + 1,
            "post_money_valuation": str(2**53 + 1), "currency": "USD"}
    assert sorted(_fields(client.post("/v1/funding-rounds", json=body, headers=admin_headers))) == [
        "amount", "post_money_valuation"]
    assert client.get("/v1/funding-rounds/edge-round").status_code == 404
    before = client.get("/v1/funding-rounds/xiwang-2026-08-round").json()["amount"]
    patch = client.patch("/v1/funding-rounds/xiwang-2026-08-round", json={"amount": 2**53 + 1},
                         headers=admin_headers)
    assert _fields(patch) == ["amount"]
    assert client.get("/v1/funding-rounds/xiwang-2026-08-round").json()["amount"] == before


def test_a_patch_is_checked_against_the_row_it_makes(client, admin_headers):
    body = {"id": "range-result", "metric": "throughput", "chip_ids": ["jalapeno"], "value_min": 1,
            "value_max": 2}
    assert client.post("/v1/results", json=body, headers=admin_headers).status_code == 201
    resp = client.patch("/v1/results/range-result", json={"value_min": 3}, headers=admin_headers)
    assert _fields(resp) == ["value_min"]
    assert resp.json()["errors"][0]["message"] == "value_min (3) exceeds value_max (2)"
    resp = client.patch("/v1/results/range-result", json={"value_max": 0.5, "input_tokens": -1},
                        headers=admin_headers)
    # A patch obeys the create bounds, and its range is checked against the stored row in the same answer.
    assert _fields(resp) == ["input_tokens", "value_max"]
    resp = client.patch("/v1/results/range-result", json={"value_max": 0.5}, headers=admin_headers)
    assert _fields(resp) == ["value_max"]
    assert client.patch("/v1/results/range-result", json={"value_min": 0.5, "value_max": 0.7},
                        headers=admin_headers).status_code == 200


def test_unknown_platform_and_publisher_references_are_refused(client, admin_headers):
    chip = {"id": "child-chip", "name": "Child", "platform": "no-such-platform", "vendor_id": "nvidia"}
    resp = client.post("/v1/chips", json=chip, headers=admin_headers)
    assert _fields(resp) == ["platform"]
    assert resp.json()["errors"][0]["message"] == "no chip with id 'no-such-platform'"
    chip["platform"] = "gb300"
    assert client.post("/v1/chips", json=chip, headers=admin_headers).status_code == 201


def test_aliases_are_capped_and_each_bad_one_named(client, admin_headers):
    aliases = [f"name {i}" for i in range(MAX_ALIASES + 1)]
    body = {"id": "alias-vendor", "name": "Alias Vendor", "aliases": aliases}
    resp = client.post("/v1/vendors", json=body, headers=admin_headers)
    assert _fields(resp) == ["aliases"]
    assert resp.json()["errors"][0]["message"] == f"at most {MAX_ALIASES} aliases; got {MAX_ALIASES + 1}"
    body["aliases"] = ["ok", " ", "x" * 201]
    resp = client.post("/v1/vendors", json=body, headers=admin_headers)
    assert _fields(resp) == ["aliases.1", "aliases.2"]


def test_every_unknown_id_in_filters_is_named(client):
    params = {"chip": "no-chip", "model": "no-model", "benchmark": "inferencex"}
    resp = client.get("/v1/results", params=params)
    assert _fields(resp) == ["chip", "model"]
    assert [e["message"] for e in resp.json()["errors"]] == [
        "no chip with id 'no-chip'", "no model with id 'no-model'"]


def test_like_wildcards_in_filters_match_themselves(client):
    makers = client.get("/v1/vendors", params={"kind": "chip_maker", "limit": 500}).json()["items"]
    assert makers and all("chip_maker" in v["kinds"] for v in makers)
    for pattern in ("%", "chip%", "chip_make_", "_hip_maker"):
        resp = client.get("/v1/vendors", params={"kind": pattern})
        assert resp.status_code == 200 and resp.json()["items"] == [], pattern


def test_a_count_beyond_its_column_is_refused_naming_the_field(client, admin_headers):
    # Counts are INTEGER columns, 32-bit on PostgreSQL; SQLite's driver refused 2**64 with a 500.
    body = {"id": "huge-tokens", "metric": "throughput", "chip_ids": ["jalapeno"], "input_tokens": 2**64}
    assert _fields(client.post("/v1/results", json=body, headers=admin_headers)) == ["input_tokens"]
    deployment = {"id": "huge-units", "chip_id": "jalapeno", "units_min": 2**31, "units_max": 2**70}
    assert sorted(_fields(client.post("/v1/deployments", json=deployment, headers=admin_headers))) == [
        "units_max", "units_min"]
    body["input_tokens"] = 2**31 - 1  # the largest the column holds on every database, stored as written
    assert client.post("/v1/results", json=body, headers=admin_headers).status_code == 201
    assert client.get("/v1/results/huge-tokens").json()["input_tokens"] == 2**31 - 1
