"""InferenceX accuracy evals and raw benchmark_serving runs."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from chipwatch.datasets import derived
from chipwatch.datasets.benchmark_serving import (
    ServingContext,
    context_from_name,
    model_name,
    parse_benchmark_serving,
)
from chipwatch.datasets.inferencex_evals import parse_evals
from chipwatch.datasets.records import DatasetFormatError
from tests.fixtures.corpus import requires_corpus

pytestmark = requires_corpus

EVALS = "inferencex/inferencex-app__supplemental-evals.json"
RUNS = "inferencex/raw_benchmark_serving_minimax-m2.5_1k1k"


def test_every_eval_is_a_record_keyed_by_its_source(corpus_bytes):
    data = corpus_bytes(EVALS)
    result = parse_evals(data)
    assert len(result.records) == 66 and result.errors == () and result.duplicates == ()
    assert Counter(r["hardware"] for r in result.records) == {
        "B200-TRT": 21,
        "B200": 11,
        "H200": 10,
        "MI355X": 10,
        "MI300X": 6,
        "MI325X": 5,
        "H100": 3,
    }
    for element, record in zip(json.loads(data), result.records, strict=True):
        assert record["row_key"] == element["source"] and record["score"] == element["score"]
        assert record["concurrency"] == element["conc"]


def test_eval_spot_checks(corpus_bytes):
    records = parse_evals(corpus_bytes(EVALS)).records
    first = records[0]
    assert (first["model"], first["hardware"], first["framework"], first["precision"]) == (
        "nvidia/DeepSeek-R1-0528-FP4-V2",
        "B200",
        "sglang",
        "fp4",
    )
    assert (first["tensor_parallel"], first["expert_parallel"], first["concurrency"]) == (4, 4, 128)
    assert first["data_parallel_attention"] is False and first["spec_decoding"] == "none"
    assert first["score"] == pytest.approx(0.954510993176649) and first["samples"] == 1319
    assert datetime.fromisoformat(first["measured_at"]) == datetime(2026, 1, 21, 0, 34, 31, tzinfo=UTC)
    blank_spec = records[20]
    assert blank_spec["hardware"] == "MI300X" and blank_spec["spec_decoding"] is None
    # Repeated runs of one configuration stay separate results.
    configs = Counter(
        (
            r["model"],
            r["hardware"],
            r["framework"],
            r["precision"],
            r["spec_decoding"],
            r["tensor_parallel"],
            r["expert_parallel"],
            r["concurrency"],
        )
        for r in records
    )
    assert max(configs.values()) == 2


def test_serving_runs_on_named_hardware(corpus_file):
    paths = sorted(Path(corpus_file(RUNS)).glob("*.json"))
    assert len(paths) == 8
    by_concurrency = {}
    for path in paths:
        context = context_from_name(path.name)
        result = parse_benchmark_serving(
            path.read_bytes(),
            hardware="example-gpu",
            accelerator_count=context.accelerator_count,
            row_key=path.name,
        )
        assert result.errors == () and result.warnings == ()
        record = result.records[0]
        assert record.concurrency == context.concurrency and record.row_key == path.name
        by_concurrency[record.concurrency] = record
    assert sorted(by_concurrency) == [4, 8, 16, 32, 64, 128, 256, 512]
    run = by_concurrency[128]
    assert run.hardware == "example-gpu" and run.model == "MiniMaxAI/MiniMax-M2.5" and run.backend == "openai"
    assert run.run_on == date(2026, 4, 28) and run.request_rate_per_s is None
    assert (run.prompts, run.completed, run.input_tokens, run.output_tokens) == (1280, 1280, 1310720, 1310720)
    assert run.output_tokens_per_s == pytest.approx(5368.18028961296)
    assert run.request_throughput_per_s == pytest.approx(5.2423635640751565)
    assert run.ttft.p50_ms == pytest.approx(221.00601554848254) and run.ttft.p99_9_ms == pytest.approx(
        2782.5139312951364
    )
    assert run.tpot.mean_ms == pytest.approx(23.336153631907884) and run.tpot.p99_ms == pytest.approx(
        23.42566725517553
    )
    assert run.e2el.p90_ms == pytest.approx(24261.306971753947)
    (per_gpu,) = derived.for_serving_result(run)
    assert per_gpu.value == pytest.approx(5368.18028961296 / 16) and per_gpu.inputs["accelerator_count"] == 16
    # Output throughput grows with concurrency across this sweep.
    rates = [by_concurrency[c].output_tokens_per_s for c in sorted(by_concurrency)]
    assert rates == sorted(rates)


def test_file_name_context_and_model_names():
    assert context_from_name("concurrency_4_req_rate_inf_gpus_16_ctx_8_gen_8.json") == ServingContext(
        4, 16, 8, 8
    )
    assert context_from_name("result.json") is None
    assert model_name("/models/models--MiniMaxAI--MiniMax-M2.5/snapshots/f71/") == "MiniMaxAI/MiniMax-M2.5"
    assert model_name("openai/gpt-oss-120b") == "openai/gpt-oss-120b"


def test_hardware_must_be_named_and_wrong_files_are_refused(corpus_bytes, corpus_file):
    run = next(Path(corpus_file(RUNS)).glob("*.json")).read_bytes()
    with pytest.raises(ValueError, match="name it"):
        parse_benchmark_serving(run, hardware=" ")
    unnamed = parse_benchmark_serving(run, hardware="H200").records[0]
    assert unnamed.accelerator_count is None and derived.for_serving_result(unnamed) == ()
    assert unnamed.row_key.startswith("H200/MiniMaxAI/MiniMax-M2.5/")
    with pytest.raises(DatasetFormatError) as caught:
        parse_benchmark_serving(corpus_bytes(EVALS), hardware="H200")
    assert "expected a JSON object" in str(caught.value)
    with pytest.raises(DatasetFormatError) as caught:
        parse_evals(corpus_bytes("mlperf-inference/v4.1_summary_results_subset.json"))
    assert caught.value.missing == (
        "model",
        "hw",
        "framework",
        "precision",
        "conc",
        "task",
        "score",
        "source",
    )


def test_a_bad_eval_is_reported_and_the_rest_kept(corpus_bytes):
    elements = json.loads(corpus_bytes(EVALS))
    elements[4]["score"] = None
    elements[9]["hw"] = ""
    result = parse_evals(json.dumps(elements))
    assert [(e.row, e.reason) for e in result.errors] == [
        (5, "score is blank or not a number"),
        (10, "no hw"),
    ]
    assert len(result.records) == 64
