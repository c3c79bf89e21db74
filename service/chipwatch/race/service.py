"""Read models of the race: the board (signals, headline results, latest funding) and scorecards."""

from __future__ import annotations

from datetime import date
from typing import Any

from sqlalchemy import func, select
from sqlmodel import Session

from chipwatch.knowledge.models import Chip, Deployment, FundingRound, Result
from chipwatch.knowledge.schemas import provenance_source_ids
from chipwatch.signals import service as signals_service
from chipwatch.signals.models import Signal
from chipwatch.signals.watch import FeedWatch
from chipwatch.sources.models import Source

# Scorecard slots and the result metrics that fill them.  Per-kW/per-W/per-MW ratios are the same
# efficiency question at different scales, so one slot holds all three; an absolute figure (tok/s per
# kW, with no baseline to divide by) is a different quantity and has its own slot.
PER_KW_METRICS = (
    "throughput_per_watt_ratio",
    "throughput_per_kw_ratio",
    "throughput_per_mw_ratio",
    "tokens_per_mw_ratio",
)
ABSOLUTE_PER_KW_METRICS = ("throughput_per_kw", "tokens_per_s_per_kw")
SINGLE_USER_METRICS = (
    "single_user_output_speed",
    "single_user_speed_ratio",
    "single_user_output_speed_ratio",
)
SLOTS = ("per_kw", "per_kw_ratio", "single_user_speed", "iso_interactivity_throughput")
ISO_INTERACTIVITY_POINTS = ("iso_interactivity", "iso_speed")
THROUGHPUT_METRICS = ("throughput_ratio", "output_throughput")
ANY_MODEL = "_unattributed"


class UnknownChip(LookupError):
    """A scorecard parameter (``field``) names no chip."""

    def __init__(self, field: str, chip_id: str) -> None:
        super().__init__(f"{field}: no chip with id {chip_id!r}")
        self.field, self.chip_id = field, chip_id


def _source_ref(sources: dict[str, Source], source_id: str | None) -> dict[str, Any] | None:
    if source_id is None:
        return None
    src = sources.get(source_id)
    return {"id": source_id, "name": src.name if src else None, "url": src.url if src else None}


def result_view(r: Result, sources: dict[str, Source]) -> dict[str, Any]:
    """A result with what makes it comparable and who stands behind it (JSON-ready)."""
    ratio = None
    if r.value is not None and r.baseline_value:
        ratio = round(r.value / r.baseline_value, 3)
    return {
        "id": r.id,
        "chips": r.chip_ids,
        "baselines": r.baseline_ids,
        "baseline_label": r.baseline_label,
        "models": r.model_ids,
        "model_label": r.model_label,
        "benchmark": r.benchmark_id,
        "metric": r.metric,
        "comparator": r.comparator,
        "value": r.value,
        "value_min": r.value_min,
        "value_max": r.value_max,
        "unit": r.unit,
        "baseline_value": r.baseline_value,
        "ratio_to_baseline": ratio,
        "operating_point": r.operating_point,
        "interactivity_tok_s_user": r.interactivity_tok_s_user,
        "verification": r.verification,
        "reported_by": r.reported_by,
        "witnessed_by": r.witnessed_by,
        "reproduced_by": r.reproduced_by,
        "published_on": r.published_on.isoformat() if r.published_on else None,
        "source": _source_ref(sources, r.source_id),
        "notes": r.notes,
    }


def _funding_view(f: FundingRound, sources: dict[str, Source]) -> dict[str, Any]:
    return {
        "id": f.id,
        "vendor": f.vendor_id,
        "round_type": f.round_type,
        "acquirer": f.acquirer_id,
        "amount": f.amount,
        "currency": f.currency,
        "post_money_valuation": f.post_money_valuation,
        "announced_on": f.announced_on.isoformat() if f.announced_on else None,
        "announced_on_precision": f.announced_on_precision,
        "verification": f.verification,
        "source": _source_ref(sources, f.source_id),
        "sources": [_source_ref(sources, s) for s in provenance_source_ids(f.source_id, f.attributes)],
    }


def _cited_sources(
    session: Session, source_ids: list[str | None], funding: list[FundingRound]
) -> dict[str, Any]:
    """Id, name and url of the sources the given facts cite, by id."""
    wanted = {i for i in source_ids if i}
    for f in funding:
        wanted.update(provenance_source_ids(f.source_id, f.attributes))
    if not wanted:
        return {}
    rows = session.execute(select(Source.id, Source.name, Source.url).where(Source.id.in_(sorted(wanted))))
    return {row.id: row for row in rows}


def build_race(*, session: Session, funding_limit: int = 10) -> dict[str, Any]:
    """The state of the race: the signals board, headline results with verification, latest funding.

    Rebuilt on every write and once a second, so it reads narrow columns: the feeds counted per trust
    level once for every signal's watch health, and only the sources the results and rounds shown cite.
    """
    signals = list(session.scalars(select(Signal).order_by(Signal.id)))
    watch = FeedWatch.load(session=session, signals=signals)
    board = [signals_service.signal_summary(s, watch) for s in signals]
    # Retracted facts are withdrawn: the board shows the facts in force only.
    headline = session.scalars(
        select(Result).where(Result.headline.is_(True), Result.retracted_at.is_(None)).order_by(Result.id)
    ).all()
    funding = session.scalars(
        select(FundingRound)
        .where(FundingRound.retracted_at.is_(None))
        .order_by(FundingRound.announced_on.desc().nulls_last(), FundingRound.id)
    ).all()[:funding_limit]
    sources = _cited_sources(session, [r.source_id for r in headline], funding)
    counts: dict[str, int] = {"open": 0, "pending_review": 0, "resolved": 0}
    for s in signals:
        counts[s.status] = counts.get(s.status, 0) + 1
    return {
        "signal_counts": counts,
        "signals": board,
        "headline_results": [result_view(r, sources) for r in headline],
        "latest_funding": [_funding_view(f, sources) for f in funding],
    }


def latest_deployments(*, session: Session, limit: int = 8) -> list[dict[str, Any]]:
    """The ``limit`` deployments in force (not retired, not retracted) most recently reported: by
    ``as_of``, else ``published_on``, newest first; as JSON-ready dicts of every column."""
    when = func.coalesce(Deployment.as_of, Deployment.published_on)
    stmt = (
        select(Deployment)
        .where(Deployment.retired_at.is_(None), Deployment.retracted_at.is_(None))
        .order_by(when.desc().nulls_last(), Deployment.id)
        .limit(limit)
    )
    return [row.model_dump(mode="json") for row in session.scalars(stmt)]


def _slot(r: Result) -> str | None:
    if r.operating_point in ISO_INTERACTIVITY_POINTS and r.metric in (*THROUGHPUT_METRICS, *PER_KW_METRICS):
        return "iso_interactivity_throughput"
    if r.metric in PER_KW_METRICS:
        return "per_kw_ratio"
    if r.metric in ABSOLUTE_PER_KW_METRICS:
        return "per_kw"
    if r.metric in SINGLE_USER_METRICS:
        return "single_user_speed"
    if r.metric in THROUGHPUT_METRICS:
        return "iso_interactivity_throughput" if r.interactivity_tok_s_user else None
    return None


def build_scorecard(*, session: Session, chip: str, baseline: str | None) -> dict[str, Any]:
    """Per model: tok/s per kW, per-kW ratio, single-user speed and iso-interactivity throughput of ``chip``.

    Only results that compare ``chip`` against ``baseline`` count (every baseline when None), plus the
    chip's absolute figures that name no baseline.  Each entry keeps its verification level and source,
    so "who verified it?" is answered beside the number.  Results naming no model are listed under
    ``_unattributed``.  Raises :class:`UnknownChip` when ``chip`` or ``baseline`` is not a chip.
    """
    for field, value in (("chip", chip), ("baseline", baseline)):
        if value is not None and session.get(Chip, value) is None:
            raise UnknownChip(field, value)
    sources = {s.id: s for s in session.scalars(select(Source))}
    in_force = select(Result).where(Result.retracted_at.is_(None)).order_by(Result.id)
    rows = [r for r in session.scalars(in_force) if chip in r.chip_ids]
    if baseline is not None:
        rows = [r for r in rows if baseline in r.baseline_ids or not r.baseline_ids]
    models: dict[str, dict[str, list[dict[str, Any]]]] = {}
    other: list[dict[str, Any]] = []
    for r in rows:
        slot = _slot(r)
        view = result_view(r, sources)
        if slot is None:
            other.append(view)
            continue
        for model_id in r.model_ids or [ANY_MODEL]:
            card = models.setdefault(model_id, {name: [] for name in SLOTS})
            card[slot].append(view)
    levels = sorted({r.verification for r in rows})
    return {
        "chip": chip,
        "baseline": baseline,
        "verification_levels": levels,
        "independently_verified": bool(rows) and all(r.verification == "independent" for r in rows),
        "models": [{"model": m, **slots} for m, slots in sorted(models.items())],
        "other_results": other,
        "as_of": date.today().isoformat(),
    }
