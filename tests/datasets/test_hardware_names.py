"""Hardware-name resolution through an alias table: one chip under many names, mixed fields, no guesses."""

from __future__ import annotations

import pytest

from chipwatch.datasets.epoch_clusters import parse_gpu_clusters
from chipwatch.datasets.epoch_hardware import parse_ml_hardware
from chipwatch.datasets.hardware_names import (
    AliasTable,
    HardwarePart,
    hardware_tokens,
    split_hardware,
)
from chipwatch.datasets.mlperf_summary import parse_summary_results
from tests.fixtures.corpus import requires_corpus

ALIASES = {
    "AMD Instinct MI300X": "mi300x",
    "MI300X": "mi300x",
    "AMD Instinct MI325X": "mi325x",
    "AMD Instinct MI355X": "mi355x",
    "NVIDIA B200": "b200",
    "NVIDIA GB200": "gb200",
    "NVIDIA GB300": "gb300",
    "H100 SXM": "h100-sxm",
    "H100 NVL": "h100-nvl",
    "NVIDIA H100": "h100-sxm",
}


@pytest.fixture(scope="module")
def table() -> AliasTable:
    return AliasTable(ALIASES)


def test_two_mlperf_spellings_of_the_mi300x_are_one_chip(table):
    older = table.resolve("AMD Instinct MI300X-NPS1-SPX-192GB-750W", count=8)
    newer = table.resolve("AMD Instinct MI300X 192GB HBM3", count=8)
    assert older.chip_counts == newer.chip_counts == {"mi300x": 8}
    assert older.parts[0].alias == "AMD Instinct MI300X"
    assert table.resolve("AMD MI300X-NPS1-SPX-192GB-750W", count=4).chip_counts == {"mi300x": 4}


def test_a_mixed_field_is_several_chips_with_their_counts(table):
    text = "AMD Instinct MI300X 192GB HBM3 (x32), AMD Instinct MI325X 256GB HBM3e (x16)"
    resolution = table.resolve(text, count=48)
    assert [(p.name, p.count, p.chip_key) for p in resolution.parts] == [
        ("AMD Instinct MI300X 192GB HBM3", 32, "mi300x"),
        ("AMD Instinct MI325X 256GB HBM3e", 16, "mi325x"),
    ]
    assert resolution.chip_counts == {"mi300x": 32, "mi325x": 16} and resolution.resolved


def test_an_empty_accelerator_is_no_chip(table):
    for blank in ("", "   ", None):
        resolution = table.resolve(blank, count=8)
        assert resolution.parts == () and resolution.chip_counts == {} and resolution.unresolved == ()


def test_unknown_and_ambiguous_names_stay_unresolved(table):
    arc = table.resolve("Intel(R) Arc(TM) 140T GPU")
    assert arc.unresolved == ("Intel(R) Arc(TM) 140T GPU",) and arc.parts[0].reason == "no alias matches"
    assert not arc.resolved
    # "NVIDIA H100" (h100-sxm) and "H100 NVL" both occur in this name; the form factor it states tells.
    assert table.resolve("NVIDIA H100-NVL-94GB", count=1).chip_counts == {"h100-nvl": 1}
    shared = AliasTable([("MI300", "mi300a"), ("MI300", "mi300x")]).resolve("AMD MI300 OAM", count=8)
    assert shared.parts[0].chip_key is None
    assert shared.parts[0].reason == "ambiguous: aliases of mi300a, mi300x match"
    # Two aliases of the same chip matching is no ambiguity.
    assert table.resolve("NVIDIA H100-SXM-80GB", count=8).chip_counts == {"h100-sxm": 8}


def test_tokens_are_compared_whole(table):
    assert table.resolve("NVIDIA GB200", count=72).chip_counts == {"gb200": 72}
    assert table.resolve("NVIDIA B200-SXM-180GB", count=8).chip_counts == {"b200": 8}
    assert table.resolve("NVIDIA GB300", count=4).chip_counts == {"gb300": 4}
    assert table.resolve("NVIDIA GH200 Grace Hopper Superchip 144GB").unresolved == (
        "NVIDIA GH200 Grace Hopper Superchip 144GB",
    )
    assert hardware_tokens("Intel(R) Arc(TM) 140T GPU") == ("intel", "arc", "140t", "gpu")
    assert hardware_tokens("[MAXSUN] MS-Intel Arc Pro B60") == ("maxsun", "ms", "intel", "arc", "pro", "b60")


def test_split_keeps_commas_that_are_not_count_lists():
    assert split_hardware("Foo, Bar accelerator", count=2) == (HardwarePart("Foo, Bar accelerator", 2),)
    assert split_hardware("A (x2), B") == (HardwarePart("A (x2), B", None),)
    assert split_hardware("A (x 3)") == (HardwarePart("A", 3),)


def test_the_same_part_twice_adds_up_and_an_unknown_count_stays_unknown(table):
    assert table.resolve("MI300X (x8), AMD Instinct MI300X 192GB (x8)").chip_counts == {"mi300x": 16}
    assert table.resolve("MI300X").chip_counts == {"mi300x": None}


@requires_corpus
def test_every_amd_accelerator_in_both_mlperf_rounds_resolves(corpus_bytes, table):
    seen: dict[str, set[str]] = {}
    for name in ("v4.1", "v5.1"):
        for record in parse_summary_results(
            corpus_bytes(f"mlperf-inference/{name}_summary_results_subset.json")
        ).records:
            if record["accelerator"] and "MI3" in record["accelerator"]:
                resolution = table.resolve(record["accelerator"], count=record["accelerator_count"])
                assert resolution.resolved, record["accelerator"]
                assert sum(c or 0 for c in resolution.chip_counts.values()) == record["accelerator_count"]
                seen.setdefault(name, set()).update(resolution.chip_counts)
    assert seen == {"v4.1": {"mi300x"}, "v5.1": {"mi300x", "mi325x", "mi355x"}}


@requires_corpus
def test_epoch_names_as_aliases_resolve_cluster_chips(corpus_bytes):
    chips = parse_ml_hardware(corpus_bytes("epoch-ai/ml_hardware__joshyou-clod.csv")).records
    table = AliasTable((chip["name"], chip["name"]) for chip in chips)
    clusters = parse_gpu_clusters(corpus_bytes("epoch-ai/gpu_clusters.csv")).by_key()
    colossus = clusters["xAI Colossus Memphis Phase 1"]["chips"][0]
    resolved = table.resolve(colossus["chip"], count=colossus["quantity"])
    assert resolved.chip_counts == {"NVIDIA H100 SXM5 80GB": 100000}


def test_a_generation_name_does_not_resolve_a_part_with_its_own_model_number():
    table = AliasTable({"Blackwell": "gb200", "GB200": "gb200", "Jalapeno": "jalapeno"})
    rtx = table.resolve("NVIDIA RTX PRO 6000 Blackwell Server Edition", count=8)
    assert rtx.chip_counts == {} and rtx.unresolved == ("NVIDIA RTX PRO 6000 Blackwell Server Edition",)
    assert rtx.parts[0].reason == "'Blackwell' is too broad: the name has its own model number '6000'"
    # Equal names, names with only quantities besides, and aliases with a model number still resolve.
    assert table.resolve("Blackwell").chip_counts == {"gb200": None}
    assert table.resolve("NVIDIA Blackwell 192GB 1000W", count=2).chip_counts == {"gb200": 2}
    assert table.resolve("NVIDIA GB200 Blackwell NVL4", count=4).chip_counts == {"gb200": 4}
    assert table.resolve("Jalapeno B1 accelerator").parts[0].chip_key is None


def test_a_form_factor_the_chip_does_not_have_is_another_part():
    table = AliasTable({"NVIDIA H200 SXM": "h200-sxm", "H200": "h200-sxm", "NVIDIA B200": "b200"})
    nvl = table.resolve("NVIDIA H200-NVL-141GB", count=8)
    assert nvl.parts[0].chip_key is None
    assert nvl.parts[0].reason == "form factor differs: the name states NVL, h200-sxm is SXM"
    assert table.resolve("NVIDIA H200-SXM5-141GB", count=8).chip_counts == {"h200-sxm": 8}
    # A chip whose names state no form factor takes any.
    assert table.resolve("NVIDIA B200-SXM-180GB", count=8).chip_counts == {"b200": 8}
    # Company names are not hardware: no model-number or form-factor rule.
    companies = AliasTable({"Microsoft": "microsoft"}, hardware=False)
    assert companies.resolve("Microsoft 365 PCIe").parts[0].chip_key == "microsoft"
