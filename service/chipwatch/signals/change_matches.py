"""Recorded changes of knowledge-base facts read for matching, and what the compiled rules find.

One change is the history rows written together for one fact (one ``fact.changed`` event): the rows
share the fact, the action and the time. Evidence for it names the first history row
(``ref_kind`` ``change``, ``ref_id`` its id). Nothing is written here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import groupby

from sqlalchemy import select
from sqlmodel import Session

from chipwatch.knowledge.models import FactChange
from chipwatch.signals.definition import ChangeCondition, SignalDefinition
from chipwatch.signals.record import EvaluationReport, Finding
from chipwatch.signals.rules import ChangeView, CompiledRules, Match

__all__ = ["change_findings", "change_view", "changes_for_signal"]


def change_view(rows: Sequence[FactChange]) -> ChangeView:
    """The matcher's view of the history rows of one change (same fact, action and time)."""
    first = rows[0]
    fields = {row.field: (row.old_value, row.new_value) for row in rows if row.field is not None}
    return ChangeView(first.kind, first.fact_id, first.action, first.cause, fields)


def _finding(rows: Sequence[FactChange], match: Match) -> Finding:
    first = rows[0]
    return Finding(
        signal_id=match.signal_id,
        side=match.side,
        condition_index=match.condition_index,
        reason=match.reason,
        ref_kind="change",
        ref_id=str(first.id),
        trust=None,
        source_id=None,
        title=f"{first.kind} {first.fact_id} {first.action} ({first.cause})",
        url=None,
        published_at=first.changed_at,
        latest=first.changed_at,
    )


def change_findings(
    rules: CompiledRules, changes: Iterable[Sequence[FactChange]], report: EvaluationReport
) -> list[Finding]:
    """Every change condition of ``rules`` each change satisfies; counts changes and matches in
    ``report`` (as facts)."""
    found: list[Finding] = []
    for rows in changes:
        report.facts += 1
        matches = rules.match_change(change_view(rows))
        report.matches += len(matches)
        found.extend(_finding(rows, m) for m in matches)
    return found


def _one_change(row: FactChange) -> tuple:
    return (row.kind, row.fact_id, row.action, row.changed_at, row.cause_ref)


def changes_for_signal(session: Session, defn: SignalDefinition) -> Iterator[list[FactChange]]:
    """Every recorded change (rows grouped per change, oldest first) of a kind ``defn``'s change
    conditions watch; nothing when it has none."""
    kinds = {c.change.kind for _s, _i, c in defn.conditions() if isinstance(c.change, ChangeCondition)}
    if not kinds:
        return
    stmt = select(FactChange).where(FactChange.kind.in_(sorted(kinds)), FactChange.action != "created")
    rows = session.scalars(stmt.order_by(FactChange.kind, FactChange.fact_id, FactChange.id))
    for _key, group in groupby(rows, key=_one_change):
        yield list(group)
