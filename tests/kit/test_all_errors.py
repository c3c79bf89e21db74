"""A refused body is answered with every problem in one 422, each naming its field: the request layer's
(NaN, types, bounds) and the route's own checks (unknown references, future dates, ranges, URLs)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


def _errors(resp) -> dict[str, str]:
    assert resp.status_code == 422, resp.text
    assert resp.headers["content-type"] == "application/problem+json"
    errors = resp.json()["errors"]
    fields = [e["field"] for e in errors]
    assert len(fields) == len(set(fields)), errors  # each field once
    return {e["field"]: e["message"] for e in errors}


def test_a_source_with_a_bad_url_and_bad_fields_names_all_three(client, admin_headers):
    body = {"url": "not a url", "name": "", "check_interval_s": -5}
    errors = _errors(client.post("/v1/sources", json=body, headers=admin_headers))
    assert set(errors) == {"url", "name", "check_interval_s"}
    assert "at least 1 character" in errors["name"]
    assert "greater than or equal to" in errors["check_interval_s"]


def test_a_source_patch_names_its_bounds_and_its_unknown_publisher(client, admin_headers):
    source_id = client.get("/v1/sources", params={"limit": 1}).json()["items"][0]["id"]
    body = {"check_interval_s": -1, "publisher_id": "no-such-vendor"}
    errors = _errors(client.patch(f"/v1/sources/{source_id}", json=body, headers=admin_headers))
    assert errors["publisher_id"] == "no vendor with id 'no-such-vendor'"
    assert set(errors) == {"check_interval_s", "publisher_id"}


def test_a_nan_does_not_hide_a_future_opened_on(client, admin_headers):
    tomorrow = (datetime.now(UTC).date() + timedelta(days=2)).isoformat()
    body = ('{"id": "nan-and-future", "question": "q?", "opened_on": "' + tomorrow + '", '
            '"subjects": ["jalapeno"],'
            ' "yes_when": [{"item": {"mentions_all": ["jalapeno"], "number": {"unit": "MW", "gte": NaN}}}]}')
    resp = client.post("/v1/signals", content=body,
                       headers={**admin_headers, "content-type": "application/json"})
    errors = _errors(resp)
    assert set(errors) == {"yes_when.0.item.number.gte", "opened_on"}
    assert errors["opened_on"].startswith("must not be in the future")


def test_a_schema_error_does_not_hide_unknown_entities_or_a_future_date(client, admin_headers):
    tomorrow = (datetime.now(UTC).date() + timedelta(days=2)).isoformat()
    body = {"id": "two-kinds", "question": "q?", "opened_on": tomorrow, "subjects": ["jalapeno"],
            "yes_when": [{"item": {"mentions_all": ["jalapeno"], "source_trust": ["rumour"]}},
                         {"result": {"chip": "no-such-chip"}}]}
    errors = _errors(client.post("/v1/signals", json=body, headers=admin_headers))
    assert set(errors) == {"yes_when.0.item.source_trust.0", "yes_when.1.result.chip", "opened_on"}
    assert errors["yes_when.1.result.chip"].startswith("unknown entity id 'no-such-chip'")


def test_a_signal_patch_reports_a_nan_and_a_deadline_before_the_opening(client, admin_headers):
    signal_id = client.get("/v1/signals", params={"limit": 1}).json()["items"][0]["id"]
    body = '{"deadline": "2000-01-01", "no_when": [{"item": {"mentions_all": ["jalapeno"], "number": ' \
           '{"unit": "MW", "gte": Infinity}}}]}'
    resp = client.patch(f"/v1/signals/{signal_id}", content=body,
                        headers={**admin_headers, "content-type": "application/json"})
    errors = _errors(resp)
    assert set(errors) == {"no_when.0.item.number.gte", "deadline"}
    assert errors["deadline"].startswith("must not be before opened_on")


def test_a_webhook_with_a_bad_event_type_names_its_unknown_signal_ids(client, admin_headers):
    body = {"url": "http://127.0.0.1:9/hook", "event_types": ["signal.nope"],
            "signal_ids": ["no-such-signal"]}
    errors = _errors(client.post("/v1/webhooks", json=body, headers=admin_headers))
    assert set(errors) == {"event_types.0", "signal_ids.0"}
    assert errors["signal_ids.0"] == "no signal with id 'no-such-signal'"


def test_a_webhook_refused_by_the_service_names_every_field(client, admin_headers):
    known = client.get("/v1/signals", params={"limit": 1}).json()["items"][0]["id"]
    body = {"url": "ftp://example.invalid/hook", "signal_ids": ["no-such-signal", known, "another"]}
    errors = _errors(client.post("/v1/webhooks", json=body, headers=admin_headers))
    assert set(errors) == {"url", "signal_ids.0", "signal_ids.2"}  # each unknown id by its place
    assert errors["signal_ids.2"] == "no signal with id 'another'"


def test_a_result_with_a_nan_a_negative_bound_and_unknown_references(client, admin_headers):
    body = ('{"id": "r-all-errors", "benchmark_id": "no-such-bench", "chip_ids": ["jalapeno", "b300x"],'
            ' "metric": "tokens_per_s", "value": NaN, "value_min": 9, "value_max": 3}')
    resp = client.post("/v1/results", content=body,
                       headers={**admin_headers, "content-type": "application/json"})
    errors = _errors(resp)
    assert errors["value"] == "must be a finite number (NaN and Infinity are not JSON)"
    assert errors["chip_ids.1"] == "no chip with id 'b300x'"
    assert errors["benchmark_id"] == "no benchmark with id 'no-such-bench'"
    assert errors["value_min"] == "value_min (9) exceeds value_max (3)"


def test_a_chip_patch_with_a_type_error_still_names_its_unknown_vendor(client, admin_headers):
    body = {"vendor_id": "no-such-vendor", "nominal_power_w": "seven hundred"}
    errors = _errors(client.patch("/v1/chips/jalapeno", json=body, headers=admin_headers))
    assert set(errors) == {"vendor_id", "nominal_power_w"}
    assert errors["vendor_id"] == "no vendor with id 'no-such-vendor'"


def test_a_result_patch_checks_its_range_against_the_stored_row(client, admin_headers):
    # r01 is stored with value_max 1.9 (seed_data/results.yaml); the body names only value_min.
    body = {"value_min": 2.5, "chip_ids": "not a list"}
    errors = _errors(client.patch("/v1/results/r01-jalapeno-perf-per-watt", json=body, headers=admin_headers))
    assert set(errors) == {"chip_ids", "value_min"}
    assert errors["value_min"] == "value_min (2.5) exceeds value_max (1.9)"
