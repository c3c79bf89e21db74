"""Epoch AI GPU clusters and funding rounds CSVs: spot-checked values, anonymous rows, dates, statuses."""

from __future__ import annotations

import csv
import io
from datetime import date

import pytest

from chipwatch.datasets.epoch_clusters import parse_gpu_clusters
from chipwatch.datasets.epoch_funding import parse_funding_rounds
from chipwatch.datasets.records import DatasetFormatError, PartialDate
from tests.fixtures.corpus import requires_corpus

pytestmark = requires_corpus

CLUSTERS = "epoch-ai/gpu_clusters.csv"
FUNDING = "epoch-ai/ai_companies_funding_rounds.csv"


def _rows(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8"), newline="")))


def test_every_cluster_row_is_read_and_exact_repeats_fold(corpus_bytes):
    result = parse_gpu_clusters(corpus_bytes(CLUSTERS))
    assert result.rows_read == 786 and result.errors == () and result.warnings == ()
    assert len(result.records) + len(result.duplicates) == 786
    assert len(result.by_key()) == len(result.records)
    anonymous = [r for r in result.records if r["name"] == "Anonymized Chinese System"]
    folded = [d for d in result.duplicates if d.key == "Anonymized Chinese System"]
    assert len(anonymous) + len(folded) == 257
    assert all(r["row_key"].startswith("Anonymized Chinese System #") for r in anonymous)
    assert {d.key for d in result.duplicates} == {"Anonymized Chinese System"}


def test_statuses_map_to_the_deployment_vocabulary(corpus_bytes):
    data = corpus_bytes(CLUSTERS)
    result = parse_gpu_clusters(data)
    words = {"Existing": "operational", "Planned": "planned", "Decommissioned": "decommissioned"}
    by_row = {record["row"]: record for record in result.records}
    for number, row in enumerate(_rows(data), start=1):
        if number in by_row:
            assert by_row[number]["status"] == words[row["Status"]]
            assert by_row[number]["certainty"] == row["Certainty"].lower()


def test_power_reported_and_calculated_stay_apart(corpus_bytes):
    clusters = parse_gpu_clusters(corpus_bytes(CLUSTERS)).by_key()
    colossus = clusters["xAI Colossus Memphis Phase 1"]
    assert colossus["owner"] == "xAI" and colossus["status"] == "operational"
    assert colossus["certainty"] == "confirmed"
    assert colossus["chips"] == [{"chip": "NVIDIA H100 SXM5 80GB", "quantity": 100000}]
    assert (colossus["power_mw"], colossus["power_mw_reported"], colossus["power_mw_calculated"]) == (
        150.0,
        150.0,
        142.688,
    )
    assert colossus["first_operational"] == {"value": "2024-09-02", "precision": "day"}
    assert colossus["country"] == "United States of America" and colossus["single_cluster"] is True
    stargate = clusters["OpenAI Stargate Abilene Oracle OCI Supercluster Phase 1"]
    assert stargate["status"] == "planned" and stargate["owner"] == "Oracle"
    assert stargate["chips"] == [{"chip": "NVIDIA GB200", "quantity": 100000}]
    assert (stargate["power_mw"], stargate["power_mw_reported"], stargate["power_mw_calculated"]) == (
        240.24,
        None,
        240.24,
    )
    assert stargate["first_operational"] is None and stargate["first_operational_note"] == "Planned Q2 2025"


def test_every_power_figure_matches_its_cell(corpus_bytes):
    data = corpus_bytes(CLUSTERS)
    by_row = {record["row"]: record for record in parse_gpu_clusters(data).records}
    for number, row in enumerate(_rows(data), start=1):
        if number not in by_row:
            continue
        cell = row["Reported Power Capacity (MW)"]
        assert by_row[number]["power_mw_reported"] == (float(cell) if cell else None)


def test_decommissioned_dates_keep_their_precision(corpus_bytes):
    clusters = parse_gpu_clusters(corpus_bytes(CLUSTERS)).by_key()
    mn1b = clusters["Preferred Networks MN-1b"]
    assert mn1b["status"] == "decommissioned"
    assert mn1b["decommissioned"] == {"value": "2021-07-01", "precision": "month"}
    assert mn1b["chips"] == [
        {"chip": "NVIDIA V100", "quantity": 512},
        {"chip": "NVIDIA P100", "quantity": 1024},
    ]
    summit = clusters["Oak Ridge NL Summit"]
    assert summit["decommissioned"] == {"value": "2024-11-15", "precision": "day"}
    assert summit["chips"] == [{"chip": "NVIDIA Tesla V100 SXM2", "quantity": 27648}]
    assert summit["power_mw"] == 13.0


def test_an_unknown_status_is_unknown_not_the_nearest(corpus_bytes):
    rows = list(csv.reader(io.StringIO(corpus_bytes(CLUSTERS).decode(), newline="")))
    rows[1][rows[0].index("Status")] = "Rumoured"
    out = io.StringIO()
    csv.writer(out).writerows(rows)
    result = parse_gpu_clusters(out.getvalue())
    first = next(r for r in result.records if r["row"] == 1)
    assert first["status"] is None and first["status_raw"] == "Rumoured"
    assert [(w.row, w.reason) for w in result.warnings] == [(1, "Status: 'Rumoured' is not a known value")]


def test_funding_rounds(corpus_bytes):
    result = parse_funding_rounds(corpus_bytes(FUNDING))
    assert len(result.records) == 36 and result.errors == () and result.warnings == ()
    rounds = result.by_key()
    xai = rounds["Sep 2025 10B"]
    assert xai.company == "xAI" and xai.status == "in_discussion" and xai.status_raw == "Late discussions"
    assert xai.equity_usd == 10e9 and xai.post_money_valuation_usd == 200e9 and xai.debt_usd is None
    assert xai.close_date is None and xai.report_date == PartialDate(date(2025, 9, 19), "day")
    assert xai.round_types == ("primary", "debt") and xai.confidence == "likely"
    assert "3.5B in debt under negotiation" in xai.notes
    ms = rounds["March 2021 Microsoft 2B"]
    assert ms.company == "OpenAI" and ms.status == "closed" and ms.equity_usd == 2e9
    assert ms.close_date == PartialDate(date(2021, 3, 15)) and ms.report_date == PartialDate(
        date(2023, 1, 12)
    )
    anthropic = rounds["May 2021 Series A"]
    assert (anthropic.equity_usd, anthropic.post_money_valuation_usd) == (124e6, 674e6)
    statuses = {r.status for r in result.records}
    assert statuses == {"closed", "in_discussion"}
    assert sum(r.status == "in_discussion" for r in result.records) == 4


def test_wrong_files_are_refused_by_name(corpus_bytes):
    with pytest.raises(DatasetFormatError) as caught:
        parse_funding_rounds(corpus_bytes(CLUSTERS))
    assert caught.value.missing == ("Id", "Company", "Close date", "Funding (equity)")
    with pytest.raises(DatasetFormatError) as caught:
        parse_gpu_clusters(corpus_bytes(FUNDING))
    assert "Chip type (primary)" in caught.value.missing and "Power Capacity (MW)" in caught.value.missing
