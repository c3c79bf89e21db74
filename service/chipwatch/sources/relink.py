"""Relinking mentions: when an entity's names change, the items stored before are matched again.

A feed check links the items it stores with the names the knowledge base has then
(:func:`chipwatch.sources.mentions.link_mentions`); an alias added later (``PATCH /v1/chips/{id}``, a
seed or an accepted candidate), a new entity, a retraction or a restore would otherwise reach only the
items stored after it, and ``items?mentions=`` and the signals narrowed through the mention index would
miss the earlier ones.

Every such change is in the fact history (``fact_history``: a ``created``, ``retracted`` or
``restored`` entity, or an ``updated`` name or aliases), so the work is found there, not announced:
:func:`request_relinks` records one :class:`~chipwatch.sources.models.MentionRelink` per entity whose
names changed since the newest change already covered, and :func:`relink_batch` reads the next
``RELINK_BATCH`` stored items in a read transaction (matching them with the entities' current names
there, outside the write lock) and writes their mention rows for those entities in a short write
transaction. The ``sources.relink_mentions`` job runs batches until every relink has reached the newest
item. A relink whose entity changes again starts over; one interrupted goes on from where it was.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import delete, func, insert, or_, select
from sqlmodel import Session

from chipwatch.config import Settings
from chipwatch.db import session_scope
from chipwatch.kit.time import utcnow
from chipwatch.knowledge.models import ENTITY_TABLES, KB_TABLES, FactChange
from chipwatch.sources.mentions import IN_CHUNK, item_text
from chipwatch.sources.models import Item, ItemMention, MentionRelink
from chipwatch.text.entities import Entity, EntityIndex

__all__ = [
    "RELINK_BATCH",
    "RelinkReport",
    "relink_batch",
    "relink_mentions_job",
    "relink_pending",
    "request_relinks",
]

log = logging.getLogger("chipwatch.sources")

RELINK_BATCH = 2000
"""Items read and relinked per write transaction: a few tens of milliseconds of write lock."""
NAME_FIELDS = ("name", "aliases")
"""The fields of an entity that mention matching reads."""

# History kinds of the entities mentions link (vendors, chips, models, benchmarks) and their kind names.
_KINDS = {kb: kind for kb, table in KB_TABLES.items() for kind, t in ENTITY_TABLES.items() if t is table}


def request_relinks(*, session: Session) -> list[str]:
    """Record a relink for every entity whose names changed after the newest change already covered;
    returns their ids. A relink already recorded for the entity starts over from the first item.

    Reads the fact history past the newest ``history_id`` covered (a range of its primary key).
    Flushes; never commits.
    """
    covered = session.execute(select(func.max(MentionRelink.history_id))).scalar_one_or_none() or 0
    stmt = (
        select(FactChange.fact_id, func.max(FactChange.id))
        .where(
            FactChange.id > covered,
            FactChange.kind.in_(sorted(_KINDS)),
            or_(
                FactChange.action.in_(("created", "retracted", "restored")),
                FactChange.field.in_(NAME_FIELDS),
            ),
        )
        .group_by(FactChange.fact_id)
    )
    now = utcnow()
    requested = []
    for entity_id, history_id in session.execute(stmt).all():
        relink = session.get(MentionRelink, entity_id)
        if relink is None:
            relink = MentionRelink(entity_id=entity_id, history_id=history_id)
        relink.history_id, relink.next_item_id, relink.requested_at, relink.done_at = history_id, 0, now, None
        session.add(relink)
        requested.append(entity_id)
    session.flush()
    return sorted(requested)


def _current_names(session: Session, entity_ids: Sequence[str]) -> tuple[list[Entity], dict[str, str]]:
    """The entities among ``entity_ids`` in force (a retracted one names nothing) and each id's kind."""
    wanted = sorted(set(entity_ids))
    parts = [
        select(table.id, table.name, table.aliases).where(table.id.in_(wanted), table.retracted_at.is_(None))
        for table in ENTITY_TABLES.values()
    ]
    kinds_by_table = list(ENTITY_TABLES)
    names: dict[str, list[str]] = {}
    kinds: dict[str, str] = {}
    for n, stmt in enumerate(parts):
        for entity_id, name, aliases in session.execute(stmt):
            kinds.setdefault(entity_id, kinds_by_table[n])
            names.setdefault(entity_id, []).extend([name, *(aliases or [])])
    return [Entity(id=i, names=tuple(n)) for i, n in sorted(names.items())], kinds


@dataclass(slots=True)
class RelinkReport:
    """What relinking did: ``items`` read, mention rows ``linked`` (written) and ``unlinked`` (deleted
    rows that no longer match), ``finished`` the entities whose relink reached the newest item."""

    items: int = 0
    linked: int = 0
    unlinked: int = 0
    finished: list[str] | None = None


def relink_batch(settings: Settings | None = None, *, batch: int = RELINK_BATCH) -> RelinkReport | None:
    """Relink the next ``batch`` stored items for every unfinished relink; ``None`` when none is left.

    The items are read and matched with the entities' current names in a read transaction; the write
    transaction replaces those items' mention rows of those entities, skipping an item updated meanwhile
    (its own store linked it with the current names) and a relink that another run advanced or that a
    newer change restarted (compared on ``history_id`` and ``next_item_id``).
    """
    with session_scope(settings, write=False) as session:
        pending = list(session.scalars(select(MentionRelink).where(MentionRelink.done_at.is_(None))))
        if not pending:
            return None
        start = min(r.next_item_id for r in pending)
        rows = session.execute(
            select(Item.id, Item.title, Item.summary, Item.content, Item.sort_at, Item.updated_at)
            .where(Item.id > start)
            .order_by(Item.id)
            .limit(batch)
        ).all()
        entities, kinds = _current_names(session, [r.entity_id for r in pending])
    index = EntityIndex(entities)
    found = {row.id: index.entities_in(item_text(row)) for row in rows}
    seen = {(r.entity_id, r.history_id, r.next_item_id) for r in pending}
    last = rows[-1].id if rows else start
    report = RelinkReport(items=len(rows), finished=[])
    with session_scope(settings) as session:
        updated = _updated_since_read(session, rows)
        for relink in session.scalars(
            _for_update(session, select(MentionRelink).where(MentionRelink.done_at.is_(None)))
        ):
            if (relink.entity_id, relink.history_id, relink.next_item_id) not in seen:
                continue  # advanced by another run, or restarted by a newer change: decided next time
            ids = [row.id for row in rows if row.id > relink.next_item_id and row.id not in updated]
            report.unlinked += _replace(session, relink.entity_id, kinds, rows, ids, found)
            report.linked += sum(relink.entity_id in found[i] for i in ids)
            relink.next_item_id = max(relink.next_item_id, last)
            if len(rows) < batch:
                relink.done_at = utcnow()
                report.finished.append(relink.entity_id)
            session.add(relink)
    return report


def _for_update(session: Session, stmt):
    # PostgreSQL: a second worker running the job waits here, then sees the advanced cursor and skips.
    return stmt.with_for_update() if session.get_bind().dialect.name == "postgresql" else stmt


def _updated_since_read(session: Session, rows: Sequence) -> set[int]:
    """Ids among ``rows`` whose stored ``updated_at`` is no longer the one read."""
    read = {row.id: row.updated_at for row in rows}
    ids = list(read)
    changed = set()
    for start in range(0, len(ids), IN_CHUNK):
        chunk = ids[start : start + IN_CHUNK]
        stmt = select(Item.id, Item.updated_at).where(Item.id.in_(chunk))
        for item_id, updated_at in session.execute(stmt):
            if updated_at != read[item_id]:
                changed.add(item_id)
    return changed | (set(ids) - _existing(session, ids))


def _existing(session: Session, ids: list[int]) -> set[int]:
    out: set[int] = set()
    for start in range(0, len(ids), IN_CHUNK):
        out.update(session.scalars(select(Item.id).where(Item.id.in_(ids[start : start + IN_CHUNK]))))
    return out


def _replace(
    session: Session, entity_id: str, kinds: dict[str, str], rows: Sequence, ids: list[int], found: dict
) -> int:
    """Make the mention rows of ``entity_id`` for the items ``ids`` those ``found`` says; returns how many
    rows were deleted and not written back."""
    if not ids:
        return 0
    deleted = 0
    for start in range(0, len(ids), IN_CHUNK):
        chunk = ids[start : start + IN_CHUNK]
        result = session.execute(
            delete(ItemMention).where(ItemMention.entity_id == entity_id, ItemMention.item_id.in_(chunk))
        )
        deleted += result.rowcount or 0
    sort_at = {row.id: row.sort_at for row in rows}
    values = [
        {"item_id": i, "entity_id": entity_id, "entity_kind": kinds.get(entity_id, ""),
         "sort_at": sort_at[i]}
        for i in ids
        if entity_id in found[i]
    ]
    if values:
        session.execute(insert(ItemMention.__table__), values)
    return max(0, deleted - len(values))


def relink_pending(settings: Settings | None = None, *, budget_s: float = 20.0) -> RelinkReport:
    """Record the relinks the fact history calls for, then run batches until none is left or
    ``budget_s`` seconds have passed (the next run goes on). The code path of the
    ``sources.relink_mentions`` job, usable from a CLI or a test; returns the summed report."""
    with session_scope(settings) as session:
        requested = request_relinks(session=session)
    if requested:
        log.info("relinking mentions", extra={"entities": requested})
    total = RelinkReport(finished=[])
    deadline = time.monotonic() + budget_s
    while time.monotonic() < deadline:
        report = relink_batch(settings)
        if report is None:
            break
        total.items += report.items
        total.linked += report.linked
        total.unlinked += report.unlinked
        total.finished.extend(report.finished or [])
    return total


async def relink_mentions_job(settings: Settings) -> RelinkReport:
    """The ``sources.relink_mentions`` job: :func:`relink_pending` in a worker thread."""
    return await asyncio.to_thread(relink_pending, settings)

