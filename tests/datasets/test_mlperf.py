"""MLPerf Inference summaries (v4.1, v5.1), system descriptions and LoadGen log summaries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chipwatch.datasets import derived
from chipwatch.datasets.mlperf_logs import LogContext, context_from_path, parse_log_summary
from chipwatch.datasets.mlperf_summary import parse_summary_results
from chipwatch.datasets.mlperf_systems import parse_system_description, system_id_from_path
from chipwatch.datasets.records import DatasetFormatError
from tests.fixtures.corpus import requires_corpus

pytestmark = requires_corpus

V41 = "mlperf-inference/v4.1_summary_results_subset.json"
V51 = "mlperf-inference/v5.1_summary_results_subset.json"


@pytest.mark.parametrize("name,count", [(V41, 363), (V51, 637)])
def test_every_summary_row_is_a_result_keyed_by_id_model_and_scenario(corpus_bytes, name, count):
    data = corpus_bytes(name)
    result = parse_summary_results(data)
    assert result.rows_read == count and len(result.records) == count and result.errors == ()
    for element, record in zip(json.loads(data), result.records, strict=True):
        assert record["row_key"] == f"{element['ID']}/{element['Model']}/{element['Scenario']}"
        assert record["mlperf_id"] == element["ID"] and record["link"] == element["Details"]
        assert record["value"] == element["Performance_Result"]
        assert record["unit"] == element["Performance_Units"]


def test_v51_spot_checks_and_derived_figures(corpus_bytes):
    results = parse_summary_results(corpus_bytes(V51)).by_key()
    lenovo = results["5.1-0061/llama2-70b-99/Offline"]
    assert lenovo["submitter"] == "Lenovo" and lenovo["division"] == "closed"
    assert lenovo["verification"] == "witnessed"
    assert lenovo["metric"] == "tokens_per_s" and lenovo["value"] == 102909.0
    assert lenovo["accelerators"] == [{"name": "NVIDIA B200-SXM-180GB", "count": 8}]
    assert lenovo["accelerator_count"] == 8
    assert lenovo["power_w"] == 10400.9988793425 and lenovo["accuracy_target_pct"] == 99.0
    assert (
        lenovo["link"]
        == "https://github.com/mlcommons/inference_results_v5.1/tree/main/closed/Lenovo/results/SR680a_V3_B200SXMx8_TRT"
    )
    figures = {figure.name: figure for figure in derived.for_mlperf_result(lenovo)}
    assert figures["tokens_per_s_per_accelerator"].value == pytest.approx(12863.625)
    per_kw = figures["tokens_per_s_per_kw"]
    assert per_kw.value == pytest.approx(9894.1459, rel=1e-7) and per_kw.derived is True
    assert per_kw.inputs == {"tokens_per_s": 102909.0, "power_w": 10400.9988793425}
    assert per_kw.formula == "tokens_per_s / (power_w / 1000)"


def test_multi_node_mixed_and_empty_accelerators(corpus_bytes):
    results = parse_summary_results(corpus_bytes(V51)).by_key()
    nvl72 = results["5.1-0072/deepseek-r1/Offline"]
    assert (nvl72["accelerators_per_node"], nvl72["nodes"], nvl72["accelerator_count"]) == (4, 18, 72)
    assert nvl72["value"] == 420659.0 and nvl72["power_w"] is None
    assert [f.name for f in derived.for_mlperf_result(nvl72)] == ["tokens_per_s_per_accelerator"]
    mixed = results["5.1-0065/llama2-70b-99/Offline"]
    assert mixed["accelerators"] == [
        {"name": "AMD Instinct MI300X 192GB HBM3", "count": 32},
        {"name": "AMD Instinct MI325X 256GB HBM3e", "count": 16},
    ]
    assert mixed["accelerator_count"] == 48 and mixed["nodes"] == 6
    assert derived.for_mlperf_result(mixed) == ()
    cpu_only = results["5.1-0010/retinanet/Offline"]
    assert cpu_only["accelerator"] is None and cpu_only["accelerators"] == []
    assert cpu_only["accelerator_count"] is None
    assert cpu_only["metric"] == "samples_per_s" and cpu_only["accuracy"] == {"mAP": 37.354}


def test_open_division_and_preview_are_vendor_reported(corpus_bytes):
    results = parse_summary_results(corpus_bytes(V51)).records
    for record in results:
        expected = (
            "witnessed"
            if (record["division"], record["availability"]) == ("closed", "available")
            else "vendor_reported"
        )
        assert record["verification"] == expected
    assert {r["verification"] for r in results if r["division"] == "open"} == {"vendor_reported"}


def test_v41_power_energy_and_the_older_mi300x_name(corpus_bytes):
    results = parse_summary_results(corpus_bytes(V41)).by_key()
    h200 = results["v4.1-0049/gptj-99/Offline"]
    assert h200["value"] == 13096.6 and h200["power_w"] == 4775.2703598485 and h200["accelerator_count"] == 8
    per_kw = next(f for f in derived.for_mlperf_result(h200) if f.name == "tokens_per_s_per_kw")
    assert per_kw.value == pytest.approx(2742.58817, rel=1e-7)
    untether = results["v4.1-0068/resnet/SingleStream"]
    assert untether["metric"] == "latency_ms" and untether["value"] == 0.120438
    assert untether["power_w"] is None and untether["energy_per_query_mj"] == 29.2389869184
    assert derived.for_mlperf_result(untether) == ()
    amd = results["v4.1-0001/llama2-70b-99/Offline"]
    assert amd["accelerator"] == "AMD Instinct MI300X-NPS1-SPX-192GB-750W" and amd["value"] == 3062.72
    assert amd["accuracy"] == {
        "ROUGE1": 44.5321,
        "ROUGE2": 22.1191,
        "ROUGEL": 28.7225,
        "TOKENS_PER_SAMPLE": 293.7,
    }
    assert results["v4.1-0049/llama2-70b-99.9/Server"]["accuracy_target_pct"] == 99.9


def test_string_a_and_core_counts(corpus_bytes):
    result = parse_summary_results(corpus_bytes(V51))
    arc = result.by_key()["5.1-0387/resnet/MultiStream"]
    assert arc["accelerator"] == "Intel(R) Arc(TM) 140T GPU" and arc["accelerators_per_node"] is None
    assert arc["accelerators"] == [{"name": "Intel(R) Arc(TM) 140T GPU", "count": None}]
    assert {w.row for w in result.warnings} == {390, 391, 392, 393}
    assert all(w.reason.startswith("host_processor_core_count: '64(AMD EPYC 9534)") for w in result.warnings)


def test_bad_elements_are_reported_by_position(corpus_bytes):
    elements = json.loads(corpus_bytes(V51))[:5]
    elements[1] = "not a result"
    elements[2] = {**elements[2], "Performance_Result": "fast"}
    del elements[3]["ID"]
    result = parse_summary_results(json.dumps(elements))
    assert [(e.row, e.reason) for e in result.errors] == [
        (2, "expected an object, found a str"),
        (3, "Performance_Result is blank or not a number"),
        (4, "no ID"),
    ]
    assert [r["row"] for r in result.records] == [1, 5]


def test_counts_beyond_any_count_are_unknown_with_a_warning(corpus_bytes):
    elements = json.loads(corpus_bytes(V51))[:3]
    elements[0] = {**elements[0], "a#": 1e15}
    elements[1] = {**elements[1], "a#": 70000, "Nodes": 70000}
    result = parse_summary_results(json.dumps(elements))
    first, second, third = result.records
    assert first["accelerators_per_node"] is None and first["accelerator_count"] is None
    assert second["accelerators_per_node"] == 70000 and second["nodes"] == 70000
    assert second["accelerator_count"] is None
    assert third["accelerators_per_node"] == elements[2]["a#"]
    assert [(w.row, w.reason) for w in result.warnings] == [
        (1, "a#: 1000000000000000 is more than any count (2147483647); unknown"),
        (2, "a# x Nodes: 4900000000 is more than any count (2147483647); unknown"),
    ]


def test_wrong_documents_are_refused(corpus_bytes):
    with pytest.raises(DatasetFormatError, match="not JSON"):
        parse_summary_results(corpus_bytes("epoch-ai/gpu_clusters.csv"))
    with pytest.raises(DatasetFormatError) as caught:
        parse_summary_results(corpus_bytes("inferencex/inferencex-app__supplemental-evals.json"))
    assert caught.value.missing == (
        "ID",
        "Submitter",
        "Category",
        "System",
        "Model",
        "Scenario",
        "Accelerator",
        "Nodes",
        "Performance_Result",
        "Performance_Units",
    )
    with pytest.raises(DatasetFormatError, match="found a dict"):
        parse_summary_results(
            corpus_bytes("mlperf-inference/v5.1_systems/closed__NVIDIA__B200-SXM-180GBx8_TRT.json")
        )
    with pytest.raises(DatasetFormatError, match="holds no records"):
        parse_summary_results(b"[]")


def _systems(corpus_file) -> dict[str, object]:
    out = {}
    for path in sorted(Path(corpus_file("mlperf-inference/v5.1_systems")).glob("*.json")):
        division, submitter, system_id = system_id_from_path(path.name)
        result = parse_system_description(path.read_bytes(), system_id=system_id)
        assert result.errors == ()
        out[result.records[0].row_key] = result
    return out


def test_system_descriptions(corpus_file):
    systems = _systems(corpus_file)
    assert len(systems) == 12
    nvl72 = systems["closed/NVIDIA/GB300-NVL72_GB300-288GB_aarch64x72_TRT"].records[0]
    assert nvl72.accelerator == "NVIDIA GB300" and (nvl72.nodes, nvl72.accelerators_per_node) == (18, 4)
    assert nvl72.accelerator_count == 72 and nvl72.accelerator_memory_bytes == 288 * 10**9
    assert nvl72.accelerator_memory_type == "HBM3e" and nvl72.status == "available"
    assert nvl72.framework == "TensorRT 10.13, CUDA 13.0" and nvl72.hardware_notes == "GB300 TGP 1400W"
    intel = systems["closed/Intel/1-node-4x-BMG-Pro-B60-Dual"].records[0]
    assert (intel.nodes, intel.accelerator_count, intel.host_memory_bytes) == (1, 4, 512 * 10**9)
    hpe = systems["closed/HPE/HPE_PROLIANT_DL380A_RTX_PRO_6000_PCIE_96GBx8_TRT_TRT"].records[0]
    assert hpe.accelerator_memory_bytes == 96 * 2**30
    assert systems["closed/CoreWeave/GB300-NVL8-CoreWeave_TRT"].records[0].status == "preview"
    thor = systems["open/NVIDIA/Jetson-Thor_TRT"]
    assert thor.records[0].accelerator_memory_bytes is None
    assert [w.reason for w in thor.warnings] == [
        "accelerator_memory_capacity: 'Shared with host' is not a size in bytes; read as unknown"
    ]


def test_a_summary_is_not_a_system_description(corpus_bytes):
    with pytest.raises(DatasetFormatError, match="expected a JSON object"):
        parse_system_description(corpus_bytes(V51))
    with pytest.raises(DatasetFormatError) as caught:
        parse_system_description(b'{"system_name": "x"}')
    assert "submitter" in caught.value.missing and "system_name" not in caught.value.missing


def test_log_summaries_agree_with_the_summary_file(corpus_file, corpus_bytes):
    summary = parse_summary_results(corpus_bytes(V51)).records
    paths = sorted(Path(corpus_file("mlperf-inference/v5.1_log_summaries")).iterdir())
    assert len(paths) == 4
    for path in paths:
        context = context_from_path(path.name)
        run = parse_log_summary(path.read_bytes(), context=context).records[0]
        assert run.valid is True and run.mode == "PerformanceOnly" and run.errors_reported is False
        location = "/".join(
            (context.division, context.submitter, "results", context.system, context.model, context.scenario)
        )
        published = next(r for r in summary if r["location"] == location)
        # The summary file rounds the Server figure to six significant digits.
        assert run.tokens_per_s == pytest.approx(published["value"], rel=2e-6)


def test_log_summary_values(corpus_bytes):
    name = "closed__AMD__8xMI325X_2xEPYC_9575F_1__llama2-70b-99__Server__mlperf_log_summary.txt"
    context = context_from_path(name)
    assert context == LogContext("closed", "AMD", "8xMI325X_2xEPYC_9575F_1", "llama2-70b-99", "Server")
    run = parse_log_summary(
        corpus_bytes(f"mlperf-inference/v5.1_log_summaries/{name}"), context=context
    ).records[0]
    assert run.row_key == "closed/AMD/8xMI325X_2xEPYC_9575F_1/llama2-70b-99/Server"
    assert (
        run.samples_per_s == 106.28 and run.tokens_per_s == 32027.57 and run.scheduled_samples_per_s == 109.52
    )
    assert run.checks == {
        "performance constraints": True,
        "min duration": True,
        "min queries": True,
        "early stopping": True,
    }
    assert run.ttft.p50_ms == pytest.approx(825.2257) and run.ttft.p99_ms == pytest.approx(1755.25609)
    assert run.tpot.p99_9_ms == pytest.approx(256.534537) and run.tpot.mean_ms == pytest.approx(148.690311)
    assert run.latency.p90_ms == pytest.approx(81976.104744)
    assert (run.target_ttft_ms, run.target_tpot_ms, run.target_qps) == (2000.0, 200.0, 109.0)
    offline = parse_log_summary(
        corpus_bytes(f"mlperf-inference/v5.1_log_summaries/{name.replace('Server', 'Offline')}")
    ).records[0]
    assert offline.row_key == "Offline" and offline.tokens_per_s == 34520.4 and offline.ttft.is_empty()


def test_an_invalid_run_and_a_file_that_is_no_summary(corpus_bytes):
    name = (
        "mlperf-inference/v5.1_log_summaries/"
        "closed__NVIDIA__GB300-NVL72_GB300-288GB_aarch64x72_TRT__deepseek-r1__Offline__mlperf_log_summary.txt"
    )
    text = corpus_bytes(name).decode().replace("Result is : VALID", "Result is : INVALID")
    text = text.replace("Min duration satisfied : Yes", "Min duration satisfied : NO")
    run = parse_log_summary(text).records[0]
    assert run.valid is False and run.checks["min duration"] is False and run.tokens_per_s == 420659.0
    with pytest.raises(DatasetFormatError) as caught:
        parse_log_summary(corpus_bytes(V51))
    assert caught.value.missing == ("Scenario", "Result is")
    assert context_from_path(
        "closed/NVIDIA/results/GB300-NVL72/deepseek-r1/Server/performance/run_1/x.txt"
    ) == (LogContext("closed", "NVIDIA", "GB300-NVL72", "deepseek-r1", "Server"))
