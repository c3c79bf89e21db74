"""Stored news items read for matching, and what the compiled rules find in them.

Reads items with their source's trust level, hands each to ``CompiledRules.match_item`` once, and turns
every satisfied condition into a ``Finding`` for the writer (``record.py``). Nothing is written here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, func, or_, select
from sqlmodel import Session

from chipwatch.kit.time import as_utc, rfc3339
from chipwatch.knowledge.models import ENTITY_TABLES, KB_TABLES, FactChange
from chipwatch.seed_state import SeedDigest
from chipwatch.signals.definition import ItemCondition, SignalDefinition
from chipwatch.signals.record import EvaluationReport, Finding, day_start
from chipwatch.signals.rules import CompiledRules, ItemView, Match
from chipwatch.sources.dates import publication_bounds
from chipwatch.sources.models import Item, ItemMention, Source
from chipwatch.text.stories import story_keys

__all__ = [
    "ITEM_BATCH",
    "MENTION_LINK_SLACK",
    "item_findings",
    "items_by_id",
    "items_for_signal",
    "mention_horizons",
    "newest_item_id",
]

# History kinds of the named entities (vendors, chips, models, benchmarks): the tables mentions link.
_ENTITY_KINDS = tuple(kind for kind, table in KB_TABLES.items() if table in ENTITY_TABLES.values())

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


MENTION_LINK_SLACK = timedelta(hours=1)
"""How long after an entity's names change an item may still be linked with the old names: a feed
check reads the names when it starts and links its items when it stores them, minutes later at most."""


def mention_horizons(session: Session, entity_ids: Iterable[str]) -> dict[str, datetime]:
    """For each of ``entity_ids``: the time after which a stored item's mention rows were linked with the
    entity's current names: its last write, plus :data:`MENTION_LINK_SLACK`. A write is a change in its
    history (API, import, accepted candidate) or the seed load that last wrote it; an entity with
    neither is absent, since its mention rows cannot be trusted to be complete."""
    ids = sorted(set(entity_ids))
    if not ids:
        return {}
    changed = (
        select(FactChange.fact_id, func.max(FactChange.changed_at))
        .where(FactChange.kind.in_(_ENTITY_KINDS), FactChange.fact_id.in_(ids))
        .group_by(FactChange.fact_id)
    )
    # Any seed kind: a row of another kind with the same id only moves the horizon later (safe).
    seeded = (
        select(SeedDigest.row_id, func.max(SeedDigest.loaded_at))
        .where(SeedDigest.row_id.in_(ids))
        .group_by(SeedDigest.row_id)
    )
    horizons: dict[str, datetime] = {}
    for stmt in (changed, seeded):
        for entity_id, at in session.execute(stmt):
            at = as_utc(at) + MENTION_LINK_SLACK
            horizons[entity_id] = max(at, horizons.get(entity_id, at))
    return horizons


def _linked_to(entity_id: str, horizons: Mapping[str, datetime]) -> Any:
    """Items the mention index links to ``entity_id``, plus every item linked before the entity's names
    took their current form (those are read and matched as if not narrowed); None: no narrowing."""
    horizon = horizons.get(entity_id)
    if horizon is None:
        return None
    linked = Item.id.in_(select(ItemMention.item_id).where(ItemMention.entity_id == entity_id))
    return or_(linked, func.coalesce(Item.updated_at, Item.first_seen_at) < horizon)


def _item_prefilter(conditions: list[ItemCondition], horizons: Mapping[str, datetime]) -> Any:
    """A SQL condition no item matching any of ``conditions`` can fail (``None``: no filter).

    It states what each condition demands of the source and the publication date, and of the entities
    named (through the mention index, where it is complete: :func:`mention_horizons`), so it never hides a
    match; the compiled rules still decide every row it lets through.
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
        for entity_id in cond.mentions_all or ():
            linked = _linked_to(entity_id, horizons)
            if linked is not None:
                parts.append(linked)
        if cond.mentions_any:
            any_of = [_linked_to(entity_id, horizons) for entity_id in cond.mentions_any]
            if all(linked is not None for linked in any_of):
                parts.append(or_(*any_of))
        if not parts:
            return None
        alternatives.append(and_(*parts))
    return or_(*alternatives) if alternatives else None


def items_for_signal(
    session: Session, defn: SignalDefinition, *, written_after: tuple[int, datetime] | None = None
) -> Iterator[Any]:
    """Every stored item that could satisfy one of ``defn``'s item conditions, in id order.

    Narrowed in SQL by what the conditions demand of the source, the date and the entities named (the
    mention index), never by text; nothing when the signal has no item condition. With
    ``written_after=(max_id, since)``, only items added after ``max_id`` or stored or updated at or after
    ``since`` (what a read snapshot taken then may have missed).
    """
    conditions = [c.item for _s, _i, c in defn.conditions() if c.item is not None]
    if not conditions:
        return
    stmt = select(*_ITEM_COLUMNS).join(Source, Source.id == Item.source_id).order_by(Item.id)
    named = {e for cond in conditions for e in (*(cond.mentions_all or ()), *(cond.mentions_any or ()))}
    narrowing = _item_prefilter(conditions, mention_horizons(session, named))
    if narrowing is not None:
        stmt = stmt.where(narrowing)
    if written_after is not None:
        max_id, since = written_after
        stmt = stmt.where(or_(Item.id > max_id, func.coalesce(Item.updated_at, Item.first_seen_at) >= since))
    yield from session.execute(stmt.execution_options(yield_per=ITEM_BATCH))


def newest_item_id(session: Session) -> int:
    """The highest item id stored (0 for none): where a read snapshot's items end."""
    return session.execute(select(func.max(Item.id))).scalar_one_or_none() or 0
