"""Cell readers, derived figures and the dataset-kind registry."""

from __future__ import annotations

import dataclasses
from datetime import date
from pathlib import Path

import orjson
import pytest

from chipwatch.datasets import derived, values
from chipwatch.datasets.epoch_hardware import parse_ml_hardware
from chipwatch.datasets.kinds import DATASET_KINDS, options_from_name, parse_dataset
from chipwatch.datasets.mlperf_logs import LogContext
from chipwatch.datasets.records import PartialDate, to_plain
from tests.fixtures.corpus import requires_corpus


@pytest.mark.parametrize(
    "raw,expected",
    [
        ("1.5e+16", 1.5e16),
        ("3E+11", 3e11),
        ("700.0", 700.0),
        (" 42 ", 42.0),
        ("1,024", 1024.0),
        (8, 8.0),
        ("", None),
        ("N/A", None),
        (None, None),
    ],
)
def test_numbers(raw, expected):
    assert values.number(raw) == expected


@pytest.mark.parametrize("raw", ["inf", "-inf", "nan", "about 700", "1,00", "-5", True])
def test_unreadable_numbers_raise(raw):
    with pytest.raises(values.CellError):
        values.number(raw)


def test_dates_with_their_precision():
    assert values.partial_date("9/2/2024") == PartialDate(date(2024, 9, 2), "day")
    assert values.partial_date("2025-12-05 21:21:23+00:00") == PartialDate(date(2025, 12, 5), "day")
    assert values.partial_date("2021-07") == PartialDate(date(2021, 7, 1), "month")
    assert values.partial_date("2030") == PartialDate(date(2030, 1, 1), "year")
    assert values.partial_date("") is None
    for bad in ("0202-07-30", "13/1/2024", "2/30/2024", "Planned 2026"):
        with pytest.raises(values.CellError):
            values.partial_date(bad)
    with pytest.raises(values.CellError, match="gives no day"):
        values.day("2021-07")


@pytest.mark.parametrize(
    "raw,expected",
    [
        (" https://a.example/x). ", ("https://a.example/x",)),
        ("https://a.example/x", ("https://a.example/x",)),
        ("http://", ()),
        ("https://", ()),
        ("ftp://a.example/x", ()),
        ("HTTPS://A.EXAMPLE/X", ()),
        ("see:https://a.example/x", ("https://a.example/x",)),
        ("https://a.example/x\u00a0https://b.example/y", ("https://a.example/x", "https://b.example/y")),
        ("N/A", ()),
        ("", ()),
    ],
)
def test_links_of_one_word_and_of_several(raw, expected):
    assert values.links(raw) == expected


@pytest.mark.parametrize(
    "raw,expected",
    [
        (" 9/2/2024 ", PartialDate(date(2024, 9, 2), "day")),
        ("12/31/2100", PartialDate(date(2100, 12, 31), "day")),
        ("1/1/1940", PartialDate(date(1940, 1, 1), "day")),
    ],
)
def test_us_dates(raw, expected):
    assert values.partial_date(raw) == expected


@pytest.mark.parametrize("raw", ["12/31/1939", "1/1/2101", "2/29/2023", "0/1/2024"])
def test_us_dates_out_of_range_raise(raw):
    with pytest.raises(values.CellError):
        values.partial_date(raw)


def test_sizes_flags_and_links():
    assert values.byte_size("288 GB") == 288 * 10**9
    assert values.byte_size("96Gi") == 96 * 2**30
    assert values.byte_size("2.0 TiB") == 2 * 2**40
    assert values.byte_size("512GB") == 512 * 10**9
    assert values.byte_size("N/A") is None
    with pytest.raises(values.CellError):
        values.byte_size("Shared with host")
    assert [values.flag(v) for v in ("TRUE", "No", "", "Unclear", 0, False)] == [
        True,
        False,
        None,
        None,
        False,
        False,
    ]
    with pytest.raises(values.CellError):
        values.flag("sometimes")
    assert values.links("https://a.example/x\nsee https://b.example/y.") == (
        "https://a.example/x",
        "https://b.example/y",
    )
    assert values.integer("8.0") == 8
    with pytest.raises(values.CellError):
        values.integer("8.5")


def test_derived_figures_need_known_positive_inputs():
    figure = derived.tokens_per_s_per_kw(1000.0, 500.0)
    assert figure.value == 2000.0 and figure.unit == "tokens/s per kW" and figure.derived
    assert derived.tokens_per_s_per_kw(1000.0, None) is None
    assert derived.tokens_per_s_per_kw(1000.0, 0.0) is None
    assert derived.tokens_per_s_per_accelerator(100.0, 0) is None
    assert derived.flop_s_per_w(None, 700.0, precision="fp8") is None


@requires_corpus
def test_flop_s_per_w_of_a_chip(corpus_bytes):
    chips = parse_ml_hardware(corpus_bytes("epoch-ai/ml_hardware__joshyou-clod.csv")).by_key()
    figures = {f.name: f for f in derived.for_chip(chips["NVIDIA B200"])}
    assert figures["flop_s_per_w_fp8"].value == 4.5e12
    assert figures["flop_s_per_w_fp8"].inputs == {"flop_s_fp8": 4.5e15, "tdp_w": 1000.0}
    assert figures["flop_s_per_w_fp4"].value == 9e12
    assert derived.for_chip(chips["NVIDIA Rubin CPX"]) == ()


@requires_corpus
def test_every_kind_parses_its_corpus_files_and_serialises_to_json(corpus_file):
    files = {
        "epoch-ml-hardware": [
            "epoch-ai/ml_hardware__joshyou-clod.csv",
            "epoch-ai/ml_hardware__sr3k-data.csv",
        ],
        "epoch-gpu-clusters": ["epoch-ai/gpu_clusters.csv"],
        "epoch-funding-rounds": ["epoch-ai/ai_companies_funding_rounds.csv"],
        "mlperf-inference-summary": [
            "mlperf-inference/v4.1_summary_results_subset.json",
            "mlperf-inference/v5.1_summary_results_subset.json",
        ],
        "mlperf-system": sorted(str(p) for p in Path(corpus_file("mlperf-inference/v5.1_systems")).iterdir()),
        "mlperf-log-summary": sorted(
            str(p) for p in Path(corpus_file("mlperf-inference/v5.1_log_summaries")).iterdir()
        ),
        "inferencex-evals": ["inferencex/inferencex-app__supplemental-evals.json"],
        "benchmark-serving": sorted(
            str(p) for p in Path(corpus_file("inferencex/raw_benchmark_serving_minimax-m2.5_1k1k")).iterdir()
        ),
    }
    assert set(files) == set(DATASET_KINDS)
    for kind, names in files.items():
        for name in names:
            options = options_from_name(kind, name)
            if kind == "benchmark-serving":
                options["hardware"] = "example-gpu"
            result = parse_dataset(kind, Path(corpus_file(name)).read_bytes(), **options)
            assert result.kind == kind and result.records and result.errors == ()
            spec = DATASET_KINDS[kind]
            if spec.plain:  # the record type's fields, as plain JSON values
                fields = [f.name for f in dataclasses.fields(spec.record_type)]
                assert all(list(r) == fields for r in result.records)
                assert orjson.loads(orjson.dumps(list(result.records))) == list(result.records)
            else:
                assert all(isinstance(r, spec.record_type) for r in result.records)
                orjson.dumps([to_plain(r) for r in result.records])


def test_options_from_names_and_option_checks():
    assert options_from_name("mlperf-system", "closed__AMD__8xMI325X_2xEPYC_9575F_1.json") == {
        "system_id": "8xMI325X_2xEPYC_9575F_1"
    }
    assert options_from_name(
        "mlperf-log-summary",
        "open/AMD/results/8xMI355X/llama2-70b-99/Offline/performance/run_1/mlperf_log_summary.txt",
    ) == {"context": LogContext("open", "AMD", "8xMI355X", "llama2-70b-99", "Offline")}
    assert options_from_name(
        "benchmark-serving", "x/concurrency_8_req_rate_inf_gpus_16_ctx_8_gen_8.json"
    ) == {
        "row_key": "concurrency_8_req_rate_inf_gpus_16_ctx_8_gen_8.json",
        "accelerator_count": 16,
    }
    assert options_from_name("epoch-gpu-clusters", "gpu_clusters.csv") == {}
    with pytest.raises(KeyError):
        options_from_name("rss", "feed.xml")
    with pytest.raises(ValueError, match="needs hardware"):
        parse_dataset("benchmark-serving", b"{}")
    with pytest.raises(ValueError, match="takes no option hardware"):
        parse_dataset("epoch-gpu-clusters", b"", hardware="H100")
