"""Enum-like query values outside their vocabulary answer 422 naming the parameter, never an empty or
unfiltered 200 that reads like a real answer."""

from __future__ import annotations

import pytest

from chipwatch.datasets.kinds import DATASET_KINDS


def _only_error(resp) -> dict[str, str]:
    assert resp.status_code == 422, resp.text
    assert resp.headers["content-type"] == "application/problem+json"
    (error,) = resp.json()["errors"]
    return error


def test_unknown_leaderboard_metric_is_named(client):
    error = _only_error(client.get("/v1/race/leaderboard", params={"metric": "nope"}))
    assert error["field"] == "metric"
    assert error["message"].startswith("unknown value 'nope'; ")
    # The vocabulary is read from the data: a metric seeded results state, and a derived one.
    assert "'single_user_output_speed'" in error["message"] and "'tokens_per_s_per_kw'" in error["message"]


def test_a_near_miss_metric_is_suggested(client):
    error = _only_error(client.get("/v1/race/leaderboard", params={"metric": "tokens_per_s_per_kv"}))
    assert "did you mean 'tokens_per_s_per_kw'?" in error["message"]


@pytest.mark.parametrize("metric", ["single_user_output_speed", "tokens_per_s", "tokens_per_s_per_kw"])
def test_known_metrics_pass(client, metric):
    resp = client.get("/v1/race/leaderboard", params={"metric": metric})
    assert resp.status_code == 200 and resp.json()["metric"] == metric


def test_unknown_leaderboard_scenario_is_named_and_known_ones_pass_in_any_case(client):
    error = _only_error(client.get("/v1/race/leaderboard", params={"scenario": "nope"}))
    assert error["field"] == "scenario" and "'peak'" in error["message"]
    assert client.get("/v1/race/leaderboard", params={"scenario": "PEAK"}).status_code == 200


def test_unknown_leaderboard_model_is_named_and_ids_and_stated_names_pass(client):
    # An unknown model answered an empty board, which reads like "no results for it yet".
    error = _only_error(client.get("/v1/race/leaderboard", params={"model": "gpt-oss-12b"}))
    assert error["field"] == "model" and "did you mean 'gpt-oss-120b'?" in error["message"]
    for model in ("gpt-oss-120b", "GPT-OSS Modules"):  # a model id; a name a seeded result states
        assert client.get("/v1/race/leaderboard", params={"model": model}).status_code == 200, model


def test_unknown_import_kind_is_named_with_the_kinds(client):
    error = _only_error(client.get("/v1/imports", params={"kind": "nope"}))
    assert error["field"] == "kind"
    assert all(repr(name) in error["message"] for name in DATASET_KINDS)
    resp = client.get("/v1/imports", params={"kind": next(iter(DATASET_KINDS))})
    assert resp.status_code == 200 and resp.json()["items"] == []


@pytest.mark.parametrize(
    ("path", "param", "good"),
    [
        ("/v1/funding-rounds", "status", "closed"),
        ("/v1/deployments", "status", "operational"),
        ("/v1/results", "dataset", "mlperf-inference-summary"),
        ("/v1/results", "verification", "witnessed"),
        ("/v1/signals", "status", "open"),
        ("/v1/signals", "outcome", "yes"),
        ("/v1/candidates", "status", "pending"),
        ("/v1/candidates", "kind", "funding"),
        ("/v1/aliases", "kind", "chip"),
    ],
)
def test_list_filters_with_a_vocabulary_refuse_other_values(client, path, param, good):
    assert client.get(path, params={param: good}).status_code == 200
    error = _only_error(client.get(path, params={param: "nope"}))
    assert error["field"] == param and error["message"].startswith("Input should be ")


@pytest.mark.parametrize(
    ("path", "param", "good"),
    [
        ("/v1/results", "metric", "single_user_output_speed"),
        ("/v1/results", "operating_point", "peak"),
        ("/v1/chips", "kind", "chip"),
    ],
)
def test_open_vocabularies_are_read_from_the_rows(client, path, param, good):
    resp = client.get(path, params={param: good})
    assert resp.status_code == 200 and resp.json()["items"]
    assert all(row[param] == good for row in resp.json()["items"])
    error = _only_error(client.get(path, params={param: good + "x"}))
    assert error["field"] == param
    assert error["message"].startswith(f"unknown value '{good}x'; did you mean '{good}'? known values: ")
