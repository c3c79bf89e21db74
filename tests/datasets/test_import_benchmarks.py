"""MLPerf Inference and InferenceX files into the knowledge base: results with provenance, verification
by rule, chips resolved through aliases, derived figures labelled with formula and inputs."""

from __future__ import annotations

import pytest

from tests.fixtures.corpus import requires_corpus
from tests.fixtures.imports import (
    EPOCH_NEW,
    EVALS,
    MLPERF_V41,
    MLPERF_V51,
    SERVING_DIR,
    fact,
    facts_by_key,
    import_corpus,
)

pytestmark = requires_corpus


@pytest.fixture
def chips(db):
    """The Epoch hardware export imported: the chips MLPerf and InferenceX names resolve to."""
    import_corpus("epoch-ml-hardware", EPOCH_NEW)
    return db


def _derived(result: dict) -> dict[str, dict]:
    return {figure["name"]: figure for figure in result["derived"]}


def test_mlperf_v51_results_with_provenance_verification_and_derived_figures(chips):
    report = import_corpus("mlperf-inference-summary", MLPERF_V51).report
    assert report.rows_read == 637 and report.inserted + report.waiting == 637 and report.skipped == 0
    assert report.scopes == ["v5.1"]
    results = facts_by_key("results", "mlperf-inference-summary")
    lenovo = results["5.1-0061/llama2-70b-99/Offline"]
    assert (lenovo["benchmark_id"], lenovo["chip_ids"], lenovo["metric"]) == (
        "mlperf-inference",
        ["nvidia-b200"],
        "tokens_per_s",
    )
    assert (lenovo["value"], lenovo["unit"], lenovo["operating_point"]) == (102909.0, "Tokens/s", "offline")
    assert (lenovo["verification"], lenovo["witnessed_by"]) == ("witnessed", "mlcommons")
    assert lenovo["link"] == (
        "https://github.com/mlcommons/inference_results_v5.1/tree/main/closed/Lenovo/"
        "results/SR680a_V3_B200SXMx8_TRT"
    )
    assert lenovo["row_key"] == "5.1-0061/llama2-70b-99/Offline" and lenovo["dataset_scope"] == "v5.1"
    assert (
        lenovo["attributes"]["accelerator_count"] == 8 and lenovo["attributes"]["power_w"] == 10400.9988793425
    )
    derived = _derived(lenovo)
    per_kw = derived["tokens_per_s_per_kw"]
    assert per_kw["value"] == pytest.approx(102909.0 / 10.4009988793425) and per_kw["derived"] is True
    assert per_kw["formula"] == "tokens_per_s / (power_w / 1000)"
    assert per_kw["inputs"] == {"tokens_per_s": 102909.0, "power_w": 10400.9988793425}
    assert derived["tokens_per_s_per_accelerator"]["value"] == pytest.approx(102909.0 / 8)

    # A mixed system is two chips with their counts; a per-accelerator average would belong to neither.
    mixed = results["5.1-0065/llama2-70b-99/Offline"]
    assert mixed["chip_ids"] == ["amd-instinct-mi300x", "amd-instinct-mi325x"]
    assert mixed["attributes"]["accelerator_counts"] == {"amd-instinct-mi300x": 32, "amd-instinct-mi325x": 16}
    assert "tokens_per_s_per_accelerator" not in _derived(mixed)
    # An empty accelerator is no chip: the result is kept with none.
    cpu = results["5.1-0010/retinanet/Offline"]
    assert cpu["chip_ids"] == [] and cpu["metric"] == "samples_per_s" and cpu["verification"] == "witnessed"
    # Open division and preview systems are vendor reported.
    assert results["5.1-0098/llama2-70b-99/Offline"]["verification"] == "vendor_reported"
    preview = results["5.1-0097/deepseek-r1/Offline"]
    assert (preview["verification"], preview["witnessed_by"], preview["chip_ids"]) == (
        "vendor_reported",
        None,
        ["gb300"],
    )
    assert preview["model_ids"] == ["deepseek-r1"]


def test_mi300x_names_of_two_rounds_are_one_chip(chips):
    import_corpus("mlperf-inference-summary", MLPERF_V41)
    import_corpus("mlperf-inference-summary", MLPERF_V51)
    results = facts_by_key("results", "mlperf-inference-summary")
    v41 = results["v4.1-0001/llama2-70b-99/Offline"]  # AMD Instinct MI300X-NPS1-SPX-192GB-750W
    v51 = results["5.1-0001/llama2-70b-99/Interactive"]  # AMD Instinct MI300X 192GB HBM3
    assert v41["chip_ids"] == v51["chip_ids"] == ["amd-instinct-mi300x"]
    assert (v41["value"], v41["dataset_scope"], v51["dataset_scope"]) == (3062.72, "v4.1", "v5.1")
    # Importing v5.1 retired nothing of v4.1: a round is its own version.
    assert v41["retired_at"] is None


def test_unresolved_accelerators_wait_and_are_listed(chips):
    report = import_corpus("mlperf-inference-summary", MLPERF_V51).report
    waiting = {u["name"]: u["rows"] for u in report.report["unresolved"] if u["holds_rows"]}
    assert waiting["NVIDIA L40S"] == 9 and waiting["NVIDIA RTX-2000E-Ada-16GB"] == 12
    assert report.waiting == sum(waiting.values())


def test_system_descriptions_and_log_summaries(chips):
    system_file = "mlperf-inference/v5.1_systems/closed__AMD__8xMI325X_2xEPYC_9575F_1.json"
    report = import_corpus("mlperf-system", system_file).report
    assert (report.inserted, report.waiting) == (1, 0)
    system = next(iter(facts_by_key("chips", "mlperf-system").values()))
    assert (system["kind"], system["name"], system["platform"]) == (
        "system",
        "QuantaGrid D74A-7U",
        "amd-instinct-mi325x",
    )
    assert system["aliases"] == ["8xMI325X_2xEPYC_9575F_1"] and system["vendor_id"] == "amd"
    assert system["attributes"]["accelerator_count"] == 8
    assert system["attributes"]["accelerator_memory_bytes"] == 256_000_000_000

    log = (
        "mlperf-inference/v5.1_log_summaries/"
        "closed__AMD__8xMI325X_2xEPYC_9575F_1__llama2-70b-99__Offline__mlperf_log_summary.txt"
    )
    assert import_corpus("mlperf-log-summary", log).report.inserted == 1
    (result,) = facts_by_key("results", "mlperf-log-summary").values()
    assert (result["value"], result["metric"], result["chip_ids"]) == (
        34520.4,
        "tokens_per_s",
        ["amd-instinct-mi325x"],
    )
    assert result["attributes"]["valid"] is True and result["attributes"]["system_chip_id"] == system["id"]
    assert result["operating_point"] == "offline" and result["model_label"] == "llama2-70b-99"


def test_log_summary_of_an_unknown_system_waits(chips):
    log = (
        "mlperf-inference/v5.1_log_summaries/"
        "closed__AMD__8xMI325X_2xEPYC_9575F_1__llama2-70b-99__Server__mlperf_log_summary.txt"
    )
    report = import_corpus("mlperf-log-summary", log).report
    assert (report.inserted, report.waiting) == (0, 1)
    assert report.report["unresolved"][0]["name"] == "8xMI325X_2xEPYC_9575F_1"


def test_inferencex_evals(chips):
    report = import_corpus("inferencex-evals", EVALS).report
    assert (report.rows_read, report.inserted, report.waiting) == (66, 66, 0)
    results = facts_by_key("results", "inferencex-evals")
    key = (
        "eval_results/eval_dsr1_1k8k_dsr1_1k8k_fp4_sglang_tp4_ep4_dpa_false_conc128_specdecode_none_b200-nv_1/"
        "results_2026-01-21T00-34-31.779836.json"
    )
    first = results[key]
    assert (first["chip_ids"], first["benchmark_id"], first["metric"]) == (
        ["nvidia-b200"],
        "inferencex",
        "accuracy_gsm8k",
    )
    assert first["value"] == pytest.approx(0.954510993176649) and first["unit"] == "fraction"
    assert (first["verification"], first["reported_by"], first["precision"]) == (
        "independent",
        "semianalysis",
        "fp4",
    )
    assert first["attributes"]["concurrency"] == 128 and first["speculative_decoding"] is False
    assert {tuple(r["chip_ids"]) for r in results.values()} == {
        ("nvidia-b200",),
        ("nvidia-h200-sxm",),
        ("amd-instinct-mi355x",),
        ("amd-instinct-mi300x",),
        ("amd-instinct-mi325x",),
        ("nvidia-h100-sxm5-80gb",),
    }


def test_benchmark_serving_run_on_named_hardware(chips):
    name = "concurrency_128_req_rate_inf_gpus_16_ctx_8_gen_8.json"
    report = import_corpus("benchmark-serving", f"{SERVING_DIR}/{name}", hardware="B200").report
    assert report.inserted == 1
    (run,) = facts_by_key("results", "benchmark-serving").values()
    assert run["row_key"] == f"B200/MiniMaxAI/MiniMax-M2.5/{name}"
    assert (run["chip_ids"], run["metric"], run["operating_point"]) == (
        ["nvidia-b200"],
        "output_tokens_per_s",
        "concurrency_128",
    )
    assert run["value"] == pytest.approx(5368.18028961296)
    assert run["attributes"]["ttft_ms"]["p50_ms"] == pytest.approx(221.00601554848254)
    assert run["attributes"]["tpot_ms"]["p99_ms"] == pytest.approx(23.42566725517553)
    per_gpu = _derived(run)["tokens_per_s_per_accelerator"]
    assert (
        per_gpu["value"] == pytest.approx(5368.18028961296 / 16)
        and per_gpu["inputs"]["accelerator_count"] == 16
    )
    assert fact("chips", "nvidia-b200") is not None
