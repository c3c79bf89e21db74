"""Epoch AI datasets into the knowledge base: hardware -> chips, clusters -> deployments, funding rounds;
the older hardware export then the newer one -> field changes in history and signed fact.changed events
delivered to a receiver on loopback."""

from __future__ import annotations

from datetime import date

import pytest
from standardwebhooks import Webhook as StandardWebhook

from tests.fixtures.corpus import requires_corpus
from tests.fixtures.imports import (
    CLUSTERS,
    EPOCH_NEW,
    EPOCH_OLD,
    FUNDING,
    count,
    fact,
    fact_events,
    facts_by_key,
    history,
    import_corpus,
)
from tests.fixtures.webhooks import deliver, subscribe

pytestmark = requires_corpus


def test_hardware_rows_become_chips_with_specs_in_kb_units(db):
    outcome = import_corpus("epoch-ml-hardware", EPOCH_NEW)
    report = outcome.report
    assert report is not None and report.status == "applied"
    # 170 rows: 167 new chips, 3 written into chips already known by an exact alias (GB200, GB300,
    # Ascend 910B from the founding articles).
    assert (report.rows_read, report.inserted, report.updated, report.skipped) == (170, 167, 3, 0)
    h100 = fact("chips", "nvidia-h100-sxm5-80gb")
    assert h100["name"] == "NVIDIA H100 SXM5 80GB" and h100["vendor_id"] == "nvidia"
    assert h100["nominal_power_w"] == 700.0
    assert h100["memory_capacity_gb"] == 80.0  # 80000000000 bytes
    assert h100["memory_bandwidth_tb_s"] == pytest.approx(3.35)  # 3.35e12 byte/s
    assert h100["released_on"] == date(2022, 9, 20)
    assert h100["attributes"]["release_price_usd"] == 33600.0
    assert (h100["dataset"], h100["row_key"], h100["dataset_version"]) == (
        "epoch-ml-hardware",
        "NVIDIA H100 SXM5 80GB",
        report.sha256,
    )
    b200 = fact("chips", "nvidia-b200")
    assert b200["attributes"]["flop_s"]["fp8"] == 4.5e15
    per_w = {f["name"]: f for f in b200["derived"]}["flop_s_per_w_fp8"]
    assert per_w["value"] == pytest.approx(4.5e15 / 1000.0) and per_w["derived"] is True
    assert per_w["formula"] == "flop_s_fp8 / tdp_w" and per_w["inputs"] == {
        "flop_s_fp8": 4.5e15,
        "tdp_w": 1000.0,
    }
    mi300x = fact("chips", "amd-instinct-mi300x")
    assert (mi300x["vendor_id"], mi300x["nominal_power_w"], mi300x["memory_capacity_gb"]) == (
        "amd",
        750.0,
        192.0,
    )
    # an exact alias of a chip the articles seeded: Epoch's figures land on that chip, its name stays
    gb200 = fact("chips", "gb200")
    assert gb200["name"] == "GB200" and gb200["row_key"] == "NVIDIA GB200" and gb200["memory_capacity_gb"]
    assert fact("chips", "nvidia-gb200") is None
    # a manufacturer that maps to no vendor is reported, the chip is kept without the link
    unresolved = {u["name"]: u for u in report.report["unresolved"]}
    assert unresolved["Cambricon"]["kind"] == "vendor" and unresolved["Cambricon"]["rows"] == 8
    assert unresolved["Cambricon"]["holds_rows"] is False


def test_same_file_twice_changes_nothing(db):
    import_corpus("epoch-ml-hardware", EPOCH_NEW)
    events_before, chips_before = fact_events(), count("chips")
    tpu_before = fact("chips", "google-tpu-v7-ironwood")
    again = import_corpus("epoch-ml-hardware", EPOCH_NEW).report
    assert (again.inserted, again.updated, again.unchanged, again.retired) == (0, 0, 170, 0)
    assert fact_events() == events_before and count("chips") == chips_before
    assert fact("chips", "google-tpu-v7-ironwood") == tpu_before


def test_older_then_newer_export_yields_field_changes_as_history_and_delivered_events(db, receiver):
    hook = subscribe(receiver.url("/facts"), event_types=["fact.changed"])
    first = import_corpus("epoch-ml-hardware", EPOCH_OLD).report
    assert fact("chips", "google-tpu-v7-ironwood")["nominal_power_w"] == 980.0
    events_after_first = len(fact_events())  # the 3 seeded chips Epoch wrote into
    second = import_corpus("epoch-ml-hardware", EPOCH_NEW).report
    # The two exports differ in 10 rows (checked against the files in tests/datasets/test_epoch_hardware)
    assert (second.inserted, second.updated, second.unchanged, second.retired) == (0, 10, 160, 0)
    assert fact("chips", "google-tpu-v7-ironwood")["nominal_power_w"] == 960.0

    tdp = [h for h in history("chips", "google-tpu-v7-ironwood") if h.field == "nominal_power_w"]
    assert [(h.action, h.old_value, h.new_value, h.cause, h.cause_ref) for h in tdp] == [
        ("updated", 980.0, 960.0, "import", str(second.id))
    ]
    v5e = {h.field: h for h in history("chips", "google-tpu-v5e") if h.cause_ref == str(second.id)}
    assert (v5e["nominal_power_w"].old_value, v5e["nominal_power_w"].new_value) == (140.0, None)
    assert history("chips", "google-tpu-v7-ironwood")[0].action == "created"
    assert history("chips", "google-tpu-v7-ironwood")[0].cause_ref == str(first.id)

    events = fact_events()[events_after_first:]
    assert len(events) == 10 and {e["cause_ref"] for e in events} == {str(second.id)}
    deliver()
    got = receiver.wait_for(len(fact_events()), "/facts")
    payloads = [StandardWebhook(hook.secret).verify(r.body, r.headers) for r in got]
    tpu = next(p["data"] for p in payloads if p["data"]["fact_id"] == "google-tpu-v7-ironwood")
    assert tpu["kind"] == "chips" and tpu["action"] == "updated" and tpu["cause"] == "import"
    assert {"field": "nominal_power_w", "old": 980.0, "new": 960.0} in tpu["changes"]


def test_clusters_become_deployments_linked_to_chips(db):
    import_corpus("epoch-ml-hardware", EPOCH_NEW)
    report = import_corpus("epoch-gpu-clusters", CLUSTERS).report
    # 786 rows; rows repeating another exactly are one deployment (58 of them); 14 wait for a chip alias
    assert (report.rows_read, report.duplicates, report.skipped) == (786, 58, 0)
    assert report.inserted + report.waiting == 728 and report.waiting == 14
    assert report.report["duplicates"][0]["key"]
    deployments = facts_by_key("deployments", "epoch-gpu-clusters")
    phase1 = deployments["xAI Colossus Memphis Phase 1"]
    assert (phase1["chip_id"], phase1["units_min"], phase1["operator_id"]) == (
        "nvidia-h100-sxm5-80gb",
        100000,
        "xai",
    )
    assert (phase1["status"], phase1["certainty"], phase1["capacity_mw"]) == (
        "operational",
        "confirmed",
        150.0,
    )
    attributes = phase1["attributes"]
    assert (attributes["power_mw_reported"], attributes["power_mw_calculated"]) == (150.0, 142.688)
    assert attributes["first_operational"] == {"value": "2024-09-02", "precision": "day"}
    colossus2 = deployments["xAI Colossus 2 Memphis Phase 2"]
    assert (colossus2["status"], colossus2["chip_id"], colossus2["capacity_mw"]) == (
        "planned",
        "gb200",
        1409.408,
    )
    assert colossus2["attributes"]["power_mw_calculated"] == 1409.408
    assert "power_mw_reported" not in colossus2["attributes"]  # blank in the file: unknown, not zero
    waiting = {u["name"] for u in report.report["unresolved"] if u["holds_rows"]}
    assert "Cerebras CS-2" in waiting  # no such chip in the hardware data: the rows wait


def test_funding_rounds_keep_status_dates_and_confidence(db):
    report = import_corpus("epoch-funding-rounds", FUNDING).report
    assert (report.rows_read, report.inserted, report.waiting, report.skipped) == (36, 36, 0, 0)
    rounds = facts_by_key("funding-rounds", "epoch-funding-rounds")
    xai = rounds["Sep 2025 10B"]
    assert (xai["vendor_id"], xai["status"], xai["amount"], xai["currency"]) == (
        "xai",
        "in_discussion",
        1e10,
        "USD",
    )
    assert xai["post_money_valuation"] == 2e11 and xai["certainty"] == "likely"
    assert (xai["announced_on"], xai["as_of"]) == (date(2025, 9, 19), None)
    series_f = rounds["Sep 2025 183B Series F"]
    assert (series_f["vendor_id"], series_f["status"], series_f["amount"]) == ("anthropic", "closed", 1.3e10)
    assert (series_f["as_of"], series_f["post_money_valuation"]) == (date(2025, 9, 2), 1.83e11)
    assert series_f["certainty"] == "confident" and series_f["round_type"] == "primary"
