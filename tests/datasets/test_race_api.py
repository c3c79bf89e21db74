"""The race API over imported datasets: the leaderboard (best result per chip, with provenance; stated
and derived metrics) and the filters an analyst expects on chips, deployments and funding rounds."""

from __future__ import annotations

import json
from datetime import date

import pytest

from tests.fixtures.corpus import corpus_dir, requires_corpus
from tests.fixtures.imports import CLUSTERS, EPOCH_NEW, FUNDING, MLPERF_V41, MLPERF_V51, import_corpus

pytestmark = requires_corpus


@pytest.fixture
def race(client):
    """Epoch hardware, clusters and funding, and both MLPerf rounds, imported."""
    for kind, path in (
        ("epoch-ml-hardware", EPOCH_NEW),
        ("epoch-gpu-clusters", CLUSTERS),
        ("epoch-funding-rounds", FUNDING),
        ("mlperf-inference-summary", MLPERF_V41),
        ("mlperf-inference-summary", MLPERF_V51),
    ):
        assert import_corpus(kind, path).report is not None
    return client


def _expected_best(metric: str, model: str, scenario: str) -> dict[str, tuple[float, str]]:
    """Best figure per single-chip accelerator name, read straight from the v5.1 and v4.1 files."""
    best: dict[str, tuple[float, str]] = {}
    for name in (MLPERF_V41, MLPERF_V51):
        for row in json.loads((corpus_dir() / name).read_text()):
            if row["Model"] != model or row["Scenario"] != scenario or row["Performance_Units"] != "Tokens/s":
                continue
            accelerator = row.get("Accelerator") or ""
            if not accelerator or "(x" in accelerator:
                continue
            value = row["Performance_Result"]
            if metric == "tokens_per_s_per_accelerator":
                value = value / (int(float(row["a#"])) * int(row["Nodes"]))
            key = f"{row['ID']}/{model}/{scenario}"
            if accelerator not in best or value > best[accelerator][0]:
                best[accelerator] = (value, key)
    return best


def test_leaderboard_best_tokens_per_s_per_chip_with_provenance(race):
    params = {"benchmark": "mlperf-inference", "model": "llama2-70b-99", "scenario": "offline"}
    board = race.get("/v1/race/leaderboard", params=params).json()
    assert board["metric"] == "tokens_per_s" and board["order"] == "descending"
    entries = board["entries"]
    values = [e["value"] for e in entries]
    assert values == sorted(values, reverse=True) and [e["rank"] for e in entries] == list(
        range(1, len(entries) + 1)
    )
    by_chip = {e["chip"]: e for e in entries}
    b200 = by_chip["nvidia-b200"]
    files = _expected_best("tokens_per_s", "llama2-70b-99", "Offline")
    assert b200["value"] == files["NVIDIA B200-SXM-180GB"][0]
    assert b200["result"]["row_key"] == files["NVIDIA B200-SXM-180GB"][1]
    assert b200["derived"] is None and b200["unit"] == "Tokens/s"
    provenance = b200["result"]
    assert provenance["dataset"] == "mlperf-inference-summary" and len(provenance["dataset_version"]) == 64
    assert provenance["link"].startswith("https://github.com/mlcommons/inference_results_v5.1/")
    assert provenance["verification"] in ("witnessed", "vendor_reported") and provenance["import_id"]
    # v4.1 and v5.1 MI300X names are one chip; the mixed MI300X/MI325X system is no single chip's.
    mi300x = by_chip["amd-instinct-mi300x"]
    assert mi300x["results_considered"] >= 2
    assert all("(x" not in (e["result"]["system"] or "") for e in entries)


def test_leaderboard_per_accelerator_is_derived_with_formula(race):
    params = {"model": "llama2-70b-99", "scenario": "offline", "metric": "tokens_per_s_per_accelerator"}
    entries = race.get("/v1/race/leaderboard", params=params).json()["entries"]
    top = entries[0]
    assert (
        top["derived"]["derived"] is True and top["derived"]["formula"] == "tokens_per_s / accelerator_count"
    )
    inputs = top["derived"]["inputs"]
    assert top["value"] == pytest.approx(inputs["tokens_per_s"] / inputs["accelerator_count"])
    files = _expected_best("tokens_per_s_per_accelerator", "llama2-70b-99", "Offline")
    assert top["value"] == pytest.approx(max(v for v, _ in files.values()))


def test_leaderboard_per_kw_only_where_power_was_submitted(race):
    params = {"model": "llama2-70b-99", "scenario": "offline", "metric": "tokens_per_s_per_kw"}
    entries = race.get("/v1/race/leaderboard", params=params).json()["entries"]
    assert entries
    for entry in entries:
        inputs = entry["derived"]["inputs"]
        assert entry["result"]["power_w"] == inputs["power_w"] > 0
        assert entry["value"] == pytest.approx(inputs["tokens_per_s"] / (inputs["power_w"] / 1000))
    # The best per-kW B200 result is the one with the highest ratio among those that submitted power.
    b200 = next(e for e in entries if e["chip"] == "nvidia-b200")
    assert b200["value"] >= 102909.0 / 10.4009988793425  # 5.1-0061 (Lenovo, 8x B200, 10.4 kW) is one


def test_leaderboard_refuses_an_unknown_benchmark(race):
    r = race.get("/v1/race/leaderboard", params={"benchmark": "no-such-bench"})
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "benchmark"


def test_chip_deployment_and_funding_filters(race):
    amd = race.get("/v1/chips", params={"vendor": "amd", "released_after": "2024-01-01", "limit": 500}).json()
    ids = {c["id"] for c in amd["items"]}
    assert {"amd-instinct-mi325x", "amd-instinct-mi355x"} <= ids and "amd-instinct-mi300x" not in ids
    assert all(date.fromisoformat(c["released_on"]) > date(2024, 1, 1) for c in amd["items"])

    params = {"chip": "nvidia-h100-sxm5-80gb", "min_power_mw": 100, "status": "operational", "limit": 500}
    deployments = race.get("/v1/deployments", params=params).json()["items"]
    labels = {d["system_label"] for d in deployments}
    assert {"xAI Colossus Memphis Phase 1", "Meta 100k"} <= labels
    assert all(d["capacity_mw"] >= 100 and d["status"] == "operational" for d in deployments)

    closed = race.get("/v1/funding-rounds", params={"status": "closed", "limit": 500}).json()["items"]
    assert all(f["status"] == "closed" for f in closed)
    # The 32 rounds Epoch's file marks closed, and the three seeded rounds (seed_data/funding_rounds.yaml).
    assert len([f for f in closed if f["row_key"] is not None]) == 32
    assert {f["id"] for f in closed if f["row_key"] is None} == {
        "xiwang-2026-08-round", "xiwang-2026-04-valuation", "groq-acquisition-nvidia"
    }
    talks = race.get("/v1/funding-rounds", params={"status": "in_discussion", "limit": 500}).json()["items"]
    assert {f["row_key"] for f in talks} >= {"Sep 2025 10B"}


def test_scorecard_files_every_seed_row_where_it_belongs(client):
    card = client.get("/v1/race/scorecard", params={"chip": "jalapeno"}).json()
    models = {m["model"]: m for m in card["models"]}
    # r06: the single-user output speed ratio (3.4x, 2.7x to 4.1x) sits in each of its models' speed column
    for model in ("gpt-oss-120b", "deepseek-r1", "kimi-k2-5"):
        speed = {e["id"] for e in models[model]["single_user_speed"]}
        assert "r06-jalapeno-single-user-ratio" in speed
    # r07: 85,400 tok/s per kW is an absolute figure, not a ratio over a baseline
    gpt = models["gpt-oss-120b"]
    assert [e["id"] for e in gpt["per_kw"]] == ["r07-jalapeno-gpt-oss-per-kw"]
    assert gpt["per_kw"][0]["value"] == 85400 and gpt["per_kw"][0]["unit"] == "tok/s/kW"
    assert all(e["unit"] == "x" for m in card["models"] for e in m["per_kw_ratio"])
    leftovers = {e["id"] for e in card["other_results"]}
    assert not leftovers & {"r06-jalapeno-single-user-ratio", "r07-jalapeno-gpt-oss-per-kw"}
