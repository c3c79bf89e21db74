"""Every accelerator name of the MLPerf v4.1 and v5.1 summaries and the Epoch clusters CSV, resolved to
its chip through the seeded aliases and the chips of Epoch's hardware export; names no chip fits stay
unresolved and listed. The table was read from the files against Epoch's hardware names."""

from __future__ import annotations

from chipwatch.datasets.epoch_clusters import parse_gpu_clusters
from chipwatch.datasets.mlperf_summary import parse_summary_results
from chipwatch.db import session_scope
from chipwatch.imports.resolve import load_resolver
from chipwatch.knowledge.models import Chip
from tests.fixtures.corpus import corpus_dir, requires_corpus
from tests.fixtures.imports import CLUSTERS, EPOCH_NEW, MLPERF_V41, MLPERF_V51, facts_by_key, import_corpus

pytestmark = requires_corpus

# Name -> chip id, None where no chip of the knowledge base is that part.
EXPECTED: dict[str, str | None] = {
    "[MAXSUN] MS-Intel Arc Pro B60 Dual 48G Turbo": None,
    "Amazon Trainium1": "amazon-trainium1",
    "Amazon Trainium2": "amazon-trainium2",
    "AMD Instinct MI210": None,
    "AMD Instinct MI300A": "amd-instinct-mi300a",
    "AMD Instinct MI300X": "amd-instinct-mi300x",
    "AMD Instinct MI300X 192GB HBM3": "amd-instinct-mi300x",
    "AMD Instinct MI300X-NPS1-SPX-192GB-750W": "amd-instinct-mi300x",
    "AMD Instinct MI325X 256GB HBM3e": "amd-instinct-mi325x",
    "AMD Instinct MI325X 256GB HBM3E": "amd-instinct-mi325x",
    "AMD Instinct MI355X 288GB HBM3e": "amd-instinct-mi355x",
    "AMD MI300X-NPS1-SPX-192GB-750W": "amd-instinct-mi300x",
    "AMD Radeon Instinct MI250X": "amd-radeon-instinct-mi250x",
    "Cerebras CS-1": None,
    "Cerebras CS-2": None,
    "Cerebras CS-3": None,
    "Google TPU v1": "google-tpu-v1",
    "Google TPU v2": "google-tpu-v2",
    "Google TPU v3": "google-tpu-v3",
    "Google TPU v4": "google-tpu-v4",
    "Google TPU v5e": "google-tpu-v5e",
    "Google TPU v5p": "google-tpu-v5p",
    "GroqChip LPU v1": "groqchip-lpu-v1",
    "Huawei Ascend 910B": "ascend-910b",
    "Intel Data Center GPU Max 1550": "intel-data-center-gpu-max-1550",
    "Intel Habana Gaudi2": "intel-habana-gaudi2",
    "Intel(R) Arc(TM) 140T GPU": None,
    "Maia 100 (M100)": "maia-100-m100",
    "NVIDIA A100": "nvidia-a100",
    "NVIDIA A100 PCIe": "nvidia-a100-pcie",
    "NVIDIA A100 SXM4 40 GB": "nvidia-a100-sxm4-40-gb",
    "NVIDIA A100 SXM4 80 GB": "nvidia-a100-sxm4-80-gb",
    "NVIDIA A40 PCIe": "nvidia-a40-pcie",
    "NVIDIA B200": "nvidia-b200",
    "NVIDIA B200-SXM-180GB": "nvidia-b200",
    "NVIDIA GB200": "gb200",
    "NVIDIA GB300": "gb300",
    "NVIDIA GB300 (Blackwell Ultra)": "gb300",
    "NVIDIA GeForce RTX 4090": "nvidia-geforce-rtx-4090",
    "NVIDIA GH200": "nvidia-gh200",
    "NVIDIA GH200 Grace Hopper Superchip 144GB": "nvidia-gh200",
    "NVIDIA GH200 Grace Hopper Superchip 96GB": "nvidia-gh200",
    "NVIDIA H100 SXM5 80GB": "nvidia-h100-sxm5-80gb",
    "NVIDIA H100-NVL-94GB": "nvidia-h100-nvl",
    "NVIDIA H100-PCIe-80GB": "nvidia-h100-pcie",
    "NVIDIA H100-SXM-80GB": "nvidia-h100-sxm5-80gb",
    "NVIDIA H200 SXM": "nvidia-h200-sxm",
    "NVIDIA H200-NVL-141GB": None,
    "NVIDIA H200-SXM-141GB": "nvidia-h200-sxm",
    "NVIDIA H200-SXM-141GB-CTS": "nvidia-h200-sxm",
    "NVIDIA Jetson AGX Orin 64G": None,
    "NVIDIA Jetson AGX Thor 128G": None,
    "NVIDIA L4-PCIe-24GB": "nvidia-l4",
    "NVIDIA L40": "nvidia-l40",
    "NVIDIA L40S": None,
    "NVIDIA P100": "nvidia-p100",
    "NVIDIA Quadro RTX 5000": "nvidia-quadro-rtx-5000",
    "NVIDIA RTX 4000 Ada-PCIe-20GB": None,
    "NVIDIA RTX PRO 6000 Blackwell Server Edition": None,
    "NVIDIA RTX-2000E-Ada-16GB": None,
    "NVIDIA Tesla K20X": "nvidia-tesla-k20x",
    "NVIDIA Tesla K40c": None,
    "NVIDIA Tesla K40m": None,
    "NVIDIA Tesla K80": "nvidia-tesla-k80",
    "NVIDIA Tesla P100 PCIe 16GB": "nvidia-tesla-p100-pcie-16gb",
    "NVIDIA Tesla P100 SXM2": "nvidia-tesla-p100-sxm2",
    "NVIDIA Tesla V100 DGXS 32 GB": "nvidia-tesla-v100-dgxs-32-gb",
    "NVIDIA Tesla V100 SXM2": "nvidia-tesla-v100-sxm2",
    "NVIDIA Tesla V100 SXM2 32 GB": "nvidia-tesla-v100-sxm2-32-gb",
    "NVIDIA V100": "nvidia-v100",
    "PEZY-SC2": "pezy-sc2",
    "Tesla D1 Dojo": "tesla-d1-dojo",
    "Tesla T4": "nvidia-tesla-t4",
    "TPU v5e": "google-tpu-v5e",
    "TPU v6": "google-tpu-v6e-trillium",
    "UntetherAI speedAI240 Preview": None,
    "UntetherAI speedAI240 Slim": None,
    "Virtualized NVIDIA H200-SXM-141GB": "nvidia-h200-sxm",
}


def _names() -> set[str]:
    names: set[str] = set()
    for relative in (MLPERF_V41, MLPERF_V51):
        records = parse_summary_results((corpus_dir() / relative).read_bytes()).records
        names.update(part["name"] for record in records for part in record["accelerators"])
    clusters = parse_gpu_clusters((corpus_dir() / CLUSTERS).read_bytes()).records
    names.update(entry["chip"] for record in clusters for entry in record["chips"])
    return names


def test_every_accelerator_name_resolves_to_its_chip_or_stays_unresolved(db, client):
    assert import_corpus("epoch-ml-hardware", EPOCH_NEW).report.status == "applied"
    assert _names() == set(EXPECTED)
    with session_scope(write=False) as session:
        resolver = load_resolver(session=session)
    found = {name: resolver.part("chip", name).chip_key for name in EXPECTED}
    assert found == EXPECTED
    # The ones the specificity rule refuses say why.
    rtx = resolver.part("chip", "NVIDIA RTX PRO 6000 Blackwell Server Edition")
    assert rtx.reason == "'Blackwell' is too broad: the name has its own model number '6000'"
    h200_nvl = resolver.part("chip", "NVIDIA H200-NVL-141GB")
    assert h200_nvl.reason == "form factor differs: the name states NVL, nvidia-h200-sxm is SXM"


def test_imported_results_carry_the_right_chips_and_unresolved_names_are_listed(db, client):
    import_corpus("epoch-ml-hardware", EPOCH_NEW)
    for relative in (MLPERF_V41, MLPERF_V51):
        assert import_corpus("mlperf-inference-summary", relative).report.status == "applied"
    results = facts_by_key("results", "mlperf-inference-summary")
    single = {
        record["row_key"]: record["accelerators"][0]["name"]
        for relative in (MLPERF_V41, MLPERF_V51)
        for record in parse_summary_results((corpus_dir() / relative).read_bytes()).records
        if len(record["accelerators"]) == 1
    }
    landed = {key: name for key, name in single.items() if EXPECTED[name] is not None}
    assert landed and {key: results[key]["chip_ids"] for key in landed} == {
        key: [EXPECTED[name]] for key, name in landed.items()
    }
    # A row whose one accelerator resolves to no chip waits instead of landing.
    assert not {key for key, name in single.items() if EXPECTED[name] is None} & set(results)
    # HPE's DL380a with RTX PRO 6000 Blackwell Server Edition cards is no GB200 result: its rows wait.
    assert not [key for key in results if key.startswith("5.1-0051/")]
    unresolved = {entry["name"]: entry for entry in client.get("/v1/aliases/unresolved").json()}
    assert unresolved["NVIDIA RTX PRO 6000 Blackwell Server Edition"]["rows_waiting"] == 11
    assert unresolved["NVIDIA H200-NVL-141GB"]["kind"] == "chip"
    mlperf_misses = {name for name, chip in EXPECTED.items() if chip is None} - {
        entry["chip"]
        for record in parse_gpu_clusters((corpus_dir() / CLUSTERS).read_bytes()).records
        for entry in record["chips"]
    }
    assert mlperf_misses <= set(unresolved)


def test_the_resolver_is_reused_until_a_name_changes(db, client, admin_headers):
    with session_scope(write=False) as session:
        first = load_resolver(session=session)
        assert load_resolver(session=session) is first  # nothing changed: the same tables, names memoised
    assert first.part("chip", "NVIDIA RTX PRO 6000 Blackwell Server Edition").chip_key is None
    body = {"kind": "chip", "alias": "RTX PRO 6000 Blackwell Server Edition", "target_id": "gb200"}
    assert client.post("/v1/aliases", json=body, headers=admin_headers).status_code == 201
    with session_scope(write=False) as session:
        after_alias = load_resolver(session=session)
    assert after_alias is not first
    assert after_alias.part("chip", "NVIDIA RTX PRO 6000 Blackwell Server Edition").chip_key == "gb200"
    # A chip written in this very transaction is seen too (the key is the names, not a clock).
    with session_scope() as session:
        session.add(Chip(id="rtx-pro-6000", name="NVIDIA RTX PRO 6000 Blackwell", kind="chip"))
        session.flush()
        inside = load_resolver(session=session)
        assert inside.part("chip", "NVIDIA RTX PRO 6000 Blackwell").chip_key == "rtx-pro-6000"
        session.rollback()
    with session_scope(write=False) as session:
        assert load_resolver(session=session).part("chip", "NVIDIA RTX PRO 6000 Blackwell").chip_key is None
