"""API shapes of the race read models."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from chipwatch.signals.schemas import SignalPublic
from chipwatch.vocab.verification import Verification


class SourceRef(BaseModel):
    id: str
    name: str | None
    url: str | None


class ResultView(BaseModel):
    id: str
    chips: list[str]
    baselines: list[str]
    baseline_label: str | None
    models: list[str]
    model_label: str | None
    benchmark: str | None
    metric: str
    comparator: str
    value: float | None
    value_min: float | None
    value_max: float | None
    unit: str | None
    baseline_value: float | None
    ratio_to_baseline: float | None
    operating_point: str | None
    interactivity_tok_s_user: float | None
    verification: Verification
    reported_by: str | None
    witnessed_by: str | None
    reproduced_by: str | None
    published_on: str | None
    source: SourceRef | None
    notes: str | None


class FundingView(BaseModel):
    id: str
    vendor: str
    round_type: str
    acquirer: str | None
    amount: float | None
    currency: str | None
    post_money_valuation: float | None
    announced_on: str | None
    announced_on_precision: str
    verification: str
    source: SourceRef | None
    sources: list[SourceRef]
    """Every source behind the round: ``source`` first, then those of the news items it was accepted from."""


class Race(BaseModel):
    signal_counts: dict[str, int]
    signals: list[SignalPublic]
    headline_results: list[ResultView]
    latest_funding: list[FundingView]


class ModelCard(BaseModel):
    """One model's scorecard columns: ``per_kw`` absolute tok/s per kW, ``per_kw_ratio`` per-kW (or per-W,
    per-MW) advantage over a baseline, ``single_user_speed`` (absolute or as a ratio), and throughput at
    the same per-user speed."""

    model: str
    per_kw: list[ResultView]
    per_kw_ratio: list[ResultView]
    single_user_speed: list[ResultView]
    iso_interactivity_throughput: list[ResultView]


class Scorecard(BaseModel):
    chip: str
    baseline: str | None
    verification_levels: list[str]
    independently_verified: bool
    models: list[ModelCard]
    other_results: list[ResultView]
    as_of: str


class LeaderboardResult(BaseModel):
    """The result behind a leaderboard entry, with its provenance: the dataset, its version (sha256),
    the row key and link in the dataset, the import that wrote it, and its verification."""

    id: str
    metric: str
    value: float | None
    unit: str | None
    model_label: str | None
    models: list[str]
    scenario: str | None
    system: str | None
    submitter: str | None
    division: str | None
    availability: str | None
    accelerator_count: int | None
    power_w: float | None
    verification: Verification
    witnessed_by: str | None
    reported_by: str | None
    link: str | None
    dataset: str | None
    dataset_version: str | None
    row_key: str | None
    import_id: int | None
    source_id: str | None


class LeaderboardEntry(BaseModel):
    """One chip's best figure: ``derived`` (name, value, unit, formula, inputs, ``derived: true``) when the
    metric is computed rather than stated; ``results_considered`` is how many of its results counted."""

    rank: int
    chip: str
    chip_name: str | None
    vendor: str | None
    value: float
    unit: str | None
    derived: dict[str, Any] | None
    results_considered: int
    result: LeaderboardResult


class Leaderboard(BaseModel):
    """The best result per chip, best first (``order``: descending, or ascending for latencies)."""

    benchmark: str
    model: str | None
    scenario: str | None
    metric: str
    order: str
    entries: list[LeaderboardEntry]
