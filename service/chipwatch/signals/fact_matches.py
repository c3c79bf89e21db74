"""Knowledge-base facts (results, deployments, funding rounds) read for matching, and what the compiled
rules find.

Hands each fact row to ``CompiledRules.match_fact`` and turns every satisfied condition into a
``Finding`` for the writer (``record.py``). Nothing is written here.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

from sqlalchemy import select
from sqlmodel import Session

from chipwatch.knowledge.models import Deployment, FundingRound, Result
from chipwatch.signals.definition import SignalDefinition
from chipwatch.signals.record import EvaluationReport, Finding, day_end, day_start
from chipwatch.signals.rules import CompiledRules, FactView, Match
from chipwatch.sources.models import Source

__all__ = ["FACT_TABLES", "fact_findings", "facts_for_signal"]

FACT_TABLES: dict[str, tuple[str, type[Result] | type[Deployment] | type[FundingRound]]] = {
    "results": ("result", Result),
    "deployments": ("deployment", Deployment),
    "funding-rounds": ("funding", FundingRound),
}
"""Knowledge-base kind (API path segment) -> (evidence ``ref_kind``, table) for the kinds conditions read."""


def _fact_title(ref_kind: str, row: Any) -> str:
    if ref_kind == "result":
        chips = ", ".join(row.chip_ids or []) or "?"
        versus = f" vs {', '.join(row.baseline_ids)}" if row.baseline_ids else ""
        value = row.value if row.value is not None else row.value_min
        figure = "" if value is None else f" = {value:g}{(' ' + row.unit) if row.unit else ''}"
        bench = f" on {row.benchmark_id}" if row.benchmark_id else ""
        return f"result {row.id}: {chips}{versus} {row.metric}{figure}{bench} ({row.verification})"
    if ref_kind == "funding":
        unit = f" {row.currency}" if row.currency else ""
        amount = f", {row.amount:g}{unit}" if row.amount is not None else ""
        post = row.post_money_valuation
        valuation = f" at {post:g}{unit} post-money" if post is not None else ""
        return (f"funding round {row.id}: {row.vendor_id} {row.round_type}{amount}{valuation} "
                f"({row.verification})")
    capacity = f", {row.capacity_mw:g} MW reached" if row.capacity_mw is not None else ""
    return f"deployment {row.id}: {row.chip_id or row.system_label or '?'} {row.status}{capacity}"


def _fact_finding(session: Session, ref_kind: str, row: Any, match: Match) -> Finding:
    # A fact's trust is how far it has been checked (vendor_reported, witnessed, independent).
    day_precise = getattr(row, "published_on_precision", "day") == "day"
    published = day_start(row.published_on) if day_precise else None
    held = row.published_on if day_precise and row.published_on else getattr(row, "as_of", None)
    source = session.get(Source, row.source_id) if row.source_id else None
    return Finding(
        signal_id=match.signal_id,
        side=match.side,
        condition_index=match.condition_index,
        reason=match.reason,
        ref_kind=ref_kind,
        ref_id=str(row.id),
        trust=row.verification,
        source_id=row.source_id,
        title=_fact_title(ref_kind, row),
        url=source.url if source is not None else None,
        published_at=published,
        latest=day_end(held) - timedelta(microseconds=1) if held else None,
    )


def fact_findings(
    session: Session, rules: CompiledRules, ref_kind: str, row: Any, report: EvaluationReport
) -> list[Finding]:
    """Every condition of ``rules`` that the fact ``row`` (a ``ref_kind`` row: ``result``, ``deployment``
    or ``funding``) satisfies; counts the fact and its matches in ``report``. A retracted fact satisfies
    nothing."""
    report.facts += 1
    if getattr(row, "retracted_at", None) is not None:
        return []
    matches = rules.match_fact(FactView(ref_kind, row.id, row.model_dump()))  # type: ignore[arg-type]
    report.matches += len(matches)
    return [_fact_finding(session, ref_kind, row, m) for m in matches]


def facts_for_signal(session: Session, defn: SignalDefinition) -> Iterator[tuple[str, Any]]:
    """``(ref_kind, row)`` for every fact in force (not retracted) of a kind ``defn``'s conditions read,
    in id order."""
    kinds = {c.kind for _s, _i, c in defn.conditions()}
    for ref_kind, table in FACT_TABLES.values():
        if ref_kind in kinds:
            for row in session.scalars(select(table).where(table.retracted_at.is_(None)).order_by(table.id)):
                yield ref_kind, row
