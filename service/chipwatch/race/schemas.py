"""API shapes of the race read models."""

from __future__ import annotations

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


class Race(BaseModel):
    signal_counts: dict[str, int]
    signals: list[SignalPublic]
    headline_results: list[ResultView]
    latest_funding: list[FundingView]


class ModelCard(BaseModel):
    model: str
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
