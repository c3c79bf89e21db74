"""Mentions: linking stored items to the knowledge-base entities their text names.

The matching itself is :class:`chipwatch.text.entities.EntityIndex` (Latin names and aliases on word
boundaries, CJK ones as substrings); this module keeps one index over every entity, brought up to date
entity by entity when names change, writes the ``item_mentions`` rows of stored items, and reads them
back for the API.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import delete, literal, select, text, union_all
from sqlmodel import Session

from chipwatch.knowledge.models import ENTITY_TABLES
from chipwatch.sources.models import Item, ItemMention
from chipwatch.text.entities import Entity, EntityIndex

IN_CHUNK = 500  # bound on IN (...) list sizes


@dataclass(frozen=True, slots=True)
class _MatcherEntry:
    fingerprint: str
    matcher: EntityIndex
    kinds: dict[str, str]


_matcher_lock = threading.Lock()
_matcher_cache: _MatcherEntry | None = None


def entity_matcher(*, session: Session) -> tuple[EntityIndex, dict[str, str]]:
    """``(EntityIndex over every knowledge-base entity, {entity id: kind})``.

    Kinds are those of :data:`chipwatch.knowledge.models.ENTITY_TABLES` (``vendor``, ``chip``,
    ``model``, ``benchmark``); an id used by two kinds is one entity named by both lists of names (kind
    from the first table). The compiled matcher is cached keyed on a digest of every id, name and
    alias; when the names change, the cached index is updated for the entities whose names changed
    (milliseconds), not built again.
    """
    global _matcher_cache
    rows = [tuple(row) for row in session.execute(_entity_names_query())]
    fingerprint = hashlib.sha256(repr(rows).encode("utf-8", "surrogatepass")).hexdigest()
    with _matcher_lock:
        cached = _matcher_cache
        if cached is not None and cached.fingerprint == fingerprint:
            return cached.matcher, cached.kinds
    names: dict[str, list[str]] = {}
    kinds: dict[str, str] = {}
    for _rank, kind, entity_id, name, aliases in rows:
        kinds.setdefault(entity_id, kind)
        names.setdefault(entity_id, []).extend([name, *(aliases or [])])
    entities = [Entity(id=i, names=n) for i, n in sorted(names.items())]
    matcher = cached.matcher.updated(entities) if cached is not None else EntityIndex(entities)
    with _matcher_lock:
        _matcher_cache = _MatcherEntry(fingerprint, matcher, kinds)
    return matcher, kinds


@functools.cache
def _entity_names_query():
    """Every entity's names in one round trip (this runs in every check that stored something),
    ordered so that the digest is stable and the first table listed names an id's kind."""
    # A retracted entity is withdrawn: items are no longer linked to it.
    parts = [
        select(literal(rank).label("rank"), literal(kind).label("kind"), t.id, t.name, t.aliases).where(
            t.retracted_at.is_(None)
        )
        for rank, (kind, t) in enumerate(ENTITY_TABLES.items())
    ]
    return union_all(*parts).order_by(text("rank"), text("id"))


def item_text(item: Item) -> str:
    """The text mentions are looked for in: title, summary and content."""
    return "\n".join(part for part in (item.title, item.summary, item.content) if part)


def link_mentions(*, session: Session, items: Sequence[Item]) -> int:
    """Replace the mention rows of ``items`` (flushed, with ids) with the entities their text names.

    Returns the number of mention rows written. Flushes; never commits.
    """
    ids = [i.id for i in items if i.id is not None]
    if not ids:
        return 0
    matcher, kinds = entity_matcher(session=session)
    for start in range(0, len(ids), IN_CHUNK):
        session.execute(delete(ItemMention).where(ItemMention.item_id.in_(ids[start : start + IN_CHUNK])))
    rows = []
    for item in items:
        for entity_id in sorted(matcher.entities_in(item_text(item))):
            rows.append(
                ItemMention(
                    item_id=item.id,
                    entity_id=entity_id,
                    entity_kind=kinds.get(entity_id, ""),
                    sort_at=item.sort_at,
                )
            )
    session.add_all(rows)
    session.flush()
    return len(rows)


def mentions_of(*, session: Session, item_ids: Sequence[int]) -> dict[int, list[ItemMention]]:
    """Mention rows of each item id (ordered by entity id); items without mentions map to ``[]``."""
    found: dict[int, list[ItemMention]] = {i: [] for i in item_ids}
    ids = list(item_ids)
    for start in range(0, len(ids), IN_CHUNK):
        stmt = (
            select(ItemMention)
            .where(ItemMention.item_id.in_(ids[start : start + IN_CHUNK]))
            .order_by(ItemMention.item_id, ItemMention.entity_id)
        )
        for row in session.scalars(stmt):
            found[row.item_id].append(row)
    return found


__all__ = ["entity_matcher", "item_text", "link_mentions", "mentions_of"]
