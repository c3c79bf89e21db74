"""Stored news items read for matching, and what the compiled rules find in them.

Reads items with their source's trust level, hands each to ``CompiledRules.match_item`` once, and turns
every satisfied condition into a ``Finding`` for the writer (``record.py``). Nothing is written here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import and_, or_, select
from sqlmodel import Session

from chipwatch.kit.time import rfc3339
from chipwatch.signals.definition import ItemCondition, SignalDefinition
from chipwatch.signals.record import EvaluationReport, Finding, day_start
from chipwatch.signals.rules import CompiledRules, ItemView, Match
from chipwatch.sources.dates import publication_bounds
from chipwatch.sources.models import Item, Source
from chipwatch.text.stories import story_keys

__all__ = ["ITEM_BATCH", "item_findings", "items_by_id", "items_for_signal"]

ITEM_BATCH = 500
"""Items read per query; keeps IN lists well under SQLite's bound-parameter limit."""

_ITEM_COLUMNS = (
    Item.id,
    Item.source_id,
    Item.title,
    Item.summary,
    Item.content,
    Item.link,
    Item.link_norm,
    Item.published_at,
    Item.published_is_estimated,
    Item.published_precision,
    Item.published_reason,
    Item.first_seen_at,
    Source.trust,
)


def _item_text(summary: str | None, content: str | None) -> str:
    # Feeds often repeat the summary as the start of the content: read it once.
    summary, content = summary or "", content or ""
    if not content or summary in content:
        return content or summary
    if content in summary:
        return summary
    return f"{summary}\n{content}"


def _item_view(row: Any) -> ItemView:
    # The rules compare the earliest instant the stored date allows (a month's first day; for a time read
    # without a zone, 14 hours before it): a date condition never holds on a guess.
    earliest, _latest = publication_bounds(row.published_at, row.published_precision, row.published_reason)
    return ItemView(
        id=row.id,
        source_id=row.source_id,
        source_trust=row.trust,
        title=row.title or "",
        text=_item_text(row.summary, row.content),
        published_at=earliest,
        published_is_estimated=bool(row.published_is_estimated),
    )


def _latest(row: Any, published: datetime | None) -> datetime:
    """The latest an item can have been published: its date; for a date that allows a span (a month, a
    time read without a zone; see :func:`~chipwatch.sources.dates.publication_bounds`), the span's end
    capped by when the item was first seen; without a date, when it was first seen."""
    if published is None:
        return row.first_seen_at
    _earliest, latest = publication_bounds(published, row.published_precision, row.published_reason)
    assert latest is not None
    return published if latest == published else min(latest, row.first_seen_at)


def _item_finding(row: Any, match: Match) -> Finding:
    estimated = bool(row.published_is_estimated)
    published = None if estimated or row.published_at is None else row.published_at
    story_link, story_title = story_keys(row.link_norm, row.title)
    carrier = {
        "source_id": row.source_id,
        "item_id": row.id,
        "title": row.title or None,
        "url": row.link,
        "trust": row.trust,
        "published_at": rfc3339(published),
    }
    return Finding(
        signal_id=match.signal_id,
        side=match.side,
        condition_index=match.condition_index,
        reason=match.reason,
        ref_kind="item",
        ref_id=str(row.id),
        trust=row.trust,
        source_id=row.source_id,
        title=row.title or None,
        url=row.link,
        published_at=published,
        latest=_latest(row, published),
        story_link=story_link,
        story_title=story_title,
        carrier=carrier,
    )


def item_findings(rules: CompiledRules, rows: Iterable[Any], report: EvaluationReport) -> list[Finding]:
    """Every condition of ``rules`` that the item ``rows`` satisfy (rows from ``items_by_id`` or
    ``items_for_signal``); counts the items read and the matches in ``report``."""
    found = []
    for row in rows:
        report.items += 1
        for match in rules.match_item(_item_view(row)):
            found.append(_item_finding(row, match))
    report.matches += len(found)
    return found


def items_by_id(session: Session, item_ids: Sequence[int]) -> Iterator[Any]:
    """The stored items with these ids, each with its source's trust, read ``ITEM_BATCH`` at a time."""
    for start in range(0, len(item_ids), ITEM_BATCH):
        chunk = item_ids[start : start + ITEM_BATCH]
        stmt = select(*_ITEM_COLUMNS).join(Source, Source.id == Item.source_id).where(Item.id.in_(chunk))
        yield from session.execute(stmt)


def _item_prefilter(conditions: list[ItemCondition]) -> Any:
    """A SQL condition no item matching any of ``conditions`` can fail (``None``: no filter).

    It only states what each condition demands of the source and the publication date, so it never
    hides a match; the compiled rules still decide every row it lets through.
    """
    alternatives = []
    for cond in conditions:
        parts = []
        if cond.sources:
            parts.append(Item.source_id.in_(cond.sources))
        if cond.source_trust:
            parts.append(Source.trust.in_(cond.source_trust))
        if cond.published_after is not None:
            # An estimated publication date never satisfies published_after (see rules.ItemView).
            parts.append(Item.published_at >= day_start(cond.published_after))
            parts.append(Item.published_is_estimated.is_(False))
        if not parts:
            return None
        alternatives.append(and_(*parts))
    return or_(*alternatives) if alternatives else None


def items_for_signal(session: Session, defn: SignalDefinition) -> Iterator[Any]:
    """Every stored item that could satisfy one of ``defn``'s item conditions, in id order.

    Narrowed in SQL by what the conditions demand of the source and the date, never by text; nothing
    when the signal has no item condition.
    """
    conditions = [c.item for _s, _i, c in defn.conditions() if c.item is not None]
    if not conditions:
        return
    stmt = select(*_ITEM_COLUMNS).join(Source, Source.id == Item.source_id).order_by(Item.id)
    narrowing = _item_prefilter(conditions)
    if narrowing is not None:
        stmt = stmt.where(narrowing)
    yield from session.execute(stmt.execution_options(yield_per=ITEM_BATCH))
