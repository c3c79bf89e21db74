"""Candidates from stored items, and their reads and rejection (services flush, never commit).

:func:`propose_from_items` is the items-stored listener the wiring registers: in the transaction that
stored a check's items it reads each item's title and summary (``extract``), and for every fact found
adds the item to the fact's one candidate (creating it, with a ``candidate.created`` event, when the
fact is new). Accepting is in :mod:`chipwatch.candidates.accept`.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import String, cast, func, or_, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session

from chipwatch.candidates import keys
from chipwatch.candidates.events import emit_candidates_created
from chipwatch.candidates.extract import Proposal, extract
from chipwatch.candidates.lexicon import LexEntry, Lexicon
from chipwatch.candidates.models import Candidate, CandidateItem
from chipwatch.imports.models import Alias
from chipwatch.kit.pagination import keyset_page
from chipwatch.kit.time import as_utc, rfc3339, utcnow
from chipwatch.knowledge.models import ENTITY_TABLES, KB_TABLES, Chip
from chipwatch.sources.models import Item, Source

ITEM_BATCH = 500
"""Items read per query; keeps IN lists well under SQLite's bound-parameter limit."""


class CandidateNotFound(LookupError):
    """No candidate has this id."""

    def __init__(self, candidate_id: int) -> None:
        super().__init__(f"no candidate with id {candidate_id}")
        self.candidate_id = candidate_id


class CandidateDecided(ValueError):
    """The candidate was accepted or rejected already."""


# ---------------------------------------------------------------------------------------------------
# The lexicon, cached while the knowledge base's names stay the same

_lexicon_lock = threading.Lock()
_lexicon_cache: tuple[str, Lexicon] | None = None


def _name_rows(session: Session) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    for kind, table in ENTITY_TABLES.items():
        vendor = table.vendor_id if table is Chip else None
        columns = [table.id, table.name, table.aliases] + ([vendor] if vendor is not None else [])
        stmt = select(*columns).order_by(table.id)
        if hasattr(table, "retracted_at"):
            stmt = stmt.where(table.retracted_at.is_(None))
        for row in session.execute(stmt):
            rows.append((kind, row[0], row[1], tuple(row[2] or ()), row[3] if vendor is not None else None))
    for alias in session.execute(select(Alias.kind, Alias.target_id, Alias.alias).order_by(Alias.id)):
        rows.append((alias[0], alias[1], None, (alias[2],), None))
    return rows


def load_lexicon(*, session: Session) -> Lexicon:
    """A :class:`Lexicon` over every entity's names and aliases and the alias table's entries (an entry
    whose target does not exist is left out), rebuilt only when those names change."""
    global _lexicon_cache
    rows = _name_rows(session)
    fingerprint = hashlib.sha256(repr(rows).encode("utf-8", "surrogatepass")).hexdigest()
    with _lexicon_lock:
        if _lexicon_cache is not None and _lexicon_cache[0] == fingerprint:
            return _lexicon_cache[1]
    known = {(kind, entity_id) for kind, entity_id, name, _a, _v in rows if name is not None}
    entries = [
        LexEntry(entity_id, kind, tuple(n for n in (name, *aliases) if n), vendor)
        for kind, entity_id, name, aliases, vendor in rows
        if name is not None or (kind, entity_id) in known
    ]
    lexicon = Lexicon.build(entries)
    with _lexicon_lock:
        _lexicon_cache = (fingerprint, lexicon)
    return lexicon


# ---------------------------------------------------------------------------------------------------
# Proposing


def _items(session: Session, item_ids: Sequence[int]) -> Iterable[Any]:
    columns = (Item.id, Item.source_id, Item.title, Item.summary, Item.published_at,
               Item.published_is_estimated, Source.trust, Source.publisher_id)
    for start in range(0, len(item_ids), ITEM_BATCH):
        chunk = item_ids[start : start + ITEM_BATCH]
        stmt = select(*columns).join(Source, Source.id == Item.source_id).where(Item.id.in_(chunk))
        yield from session.execute(stmt)


def propose_from_items(
    *, session: Session, item_ids: Iterable[int], now: datetime | None = None
) -> list[int]:
    """Read the stored items ``item_ids`` for facts and file each under its candidate; returns the ids
    of the candidates created (each announced by ``candidate.created``).

    The items-stored listener (``chipwatch.sources.hooks``): runs in the check's transaction, so the
    candidates commit or roll back with the items. Reading an item again adds nothing new. The writes
    are batched (a few statements per call, whatever the number of items), since this runs inside
    every feed check.
    """
    ids = sorted({int(i) for i in item_ids})
    if not ids:
        return []
    now = now or utcnow()
    lexicon = load_lexicon(session=session)
    chip_vendor = {e.id: e.vendor_id for e in lexicon.entries.values() if e.kind == "chip"}
    found: list[tuple[Proposal, Any, str]] = []
    for row in _items(session, ids):
        for proposal in extract(row.title or "", row.summary, lexicon):
            found.append((proposal, row, keys.fact_key(proposal.kind, proposal.fact)))
    if not found:
        return []
    found = _known_by_name(session, found)
    created = _insert_candidates(session, found, now)
    by_key = _candidates_by_key(session, {(p.kind, key) for p, _row, key in found})
    touched = _insert_links(session, found, by_key, chip_vendor, now)
    for p, _row, key in found:
        candidate = by_key[(p.kind, key)]
        if candidate.id in touched and candidate.status == "pending":
            missing = {k: v for k, v in p.fact.items() if candidate.fact.get(k) is None}
            if missing:
                candidate.fact = {**candidate.fact, **missing}
    _recount(session, [c for c in by_key.values() if c.id in touched], now)
    accepted = [c for c in by_key.values() if c.id in touched and c.status == "accepted"]
    if accepted:
        # accept.py builds on this module, so it is imported where it is needed
        from chipwatch.candidates.accept import refresh_accepted

        refresh_accepted(session=session, candidates=accepted, now=now)
    fresh = [c for c in by_key.values() if c.id in created]
    if fresh:
        _corroborations(session, fresh)
        links = item_links(session, [c.id for c in fresh])
        emit_candidates_created(session, [(c, links[c.id]) for c in sorted(fresh, key=lambda c: c.id or 0)])
    return sorted(created)


def _insert(session: Session, table: Any, rows: list[dict[str, Any]]) -> None:
    """``INSERT ... ON CONFLICT DO NOTHING`` of ``rows`` as one executemany of a Core insert (the ORM's
    per-row bookkeeping costs more than the statement); a row a concurrent check wrote first is skipped."""
    if rows:
        insert = postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert
        session.execute(insert(table.__table__).on_conflict_do_nothing(), rows)


def _candidates_by_key(session: Session, wanted: set[tuple[str, str]]) -> dict[tuple[str, str], Candidate]:
    out: dict[tuple[str, str], Candidate] = {}
    fact_keys = sorted({key for _kind, key in wanted})
    for start in range(0, len(fact_keys), ITEM_BATCH):
        stmt = select(Candidate).where(Candidate.fact_key.in_(fact_keys[start : start + ITEM_BATCH]))
        for candidate in session.scalars(stmt.execution_options(populate_existing=True)):
            if (candidate.kind, candidate.fact_key) in wanted:
                out[(candidate.kind, candidate.fact_key)] = candidate
    return out


def _known_by_name(
    session: Session, found: list[tuple[Proposal, Any, str]]
) -> list[tuple[Proposal, Any, str]]:
    """File a proposal under the candidate its names had before they resolved to ids, when there is
    one and none under its own key (see ``keys.fact_key``)."""
    own = _candidates_by_key(session, {(p.kind, key) for p, _row, key in found})
    old = {(p.kind, keys.fact_key(p.kind, p.fact, names_only=True)) for p, _row, key in found}
    earlier = _candidates_by_key(session, old - set(own))
    out = []
    for p, row, key in found:
        name_key = keys.fact_key(p.kind, p.fact, names_only=True)
        if (p.kind, key) not in own and (p.kind, name_key) in earlier:
            key = name_key
        out.append((p, row, key))
    return out


def _insert_candidates(session: Session, found: list[tuple[Proposal, Any, str]], now: datetime) -> set[int]:
    """Insert a candidate for each fact not filed yet; returns the ids this call created.

    Created here means stamped with this call's ``now``: when a concurrent check filed the same fact
    first, its row (and its ``candidate.created`` event) stands and this insert skips it.
    """
    wanted = {(p.kind, key) for p, _row, key in found}
    existing = _candidates_by_key(session, wanted)
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for p, _row, key in found:
        if (p.kind, key) not in existing and (p.kind, key) not in rows:
            rows[(p.kind, key)] = {
                "kind": p.kind, "fact_key": key, "status": "pending", "fact": p.fact,
                "confidence": p.confidence,
                "verification": "vendor_reported", "independent_sources": 0, "corroborates_kind": None,
                "corroborates_id": None, "fact_kind": None, "fact_id": None, "created_at": now,
                "updated_at": now, "decided_at": None, "decided_by": None, "note": None,
            }
    if not rows:
        return set()
    _insert(session, Candidate, list(rows.values()))
    filed = _candidates_by_key(session, set(rows))
    return {c.id for c in filed.values() if c.id is not None and as_utc(c.created_at) == now}


def _insert_links(
    session: Session,
    found: list[tuple[Proposal, Any, str]],
    by_key: dict[tuple[str, str], Candidate],
    chip_vendor: dict[str, str | None],
    now: datetime,
) -> set[int]:
    """Link each item to its fact's candidate (once); returns the candidates that gained an item."""
    rows: dict[tuple[int, int], dict[str, Any]] = {}
    for p, row, key in found:
        candidate = by_key[(p.kind, key)]
        subjects = keys.subjects(p.kind, candidate.fact, chip_vendor)
        subjects |= keys.subjects(p.kind, p.fact, chip_vendor)
        rows.setdefault((candidate.id, row.id), {
            "candidate_id": candidate.id, "item_id": row.id, "source_id": row.source_id, "trust": row.trust,
            "independent": keys.is_independent(row.trust, row.publisher_id, subjects),
            "part": p.span.part, "span_start": p.span.start, "span_end": p.span.end, "quote": p.span.text,
            "confidence": p.confidence,
            "published_at": None if row.published_is_estimated else row.published_at,
            "added_at": now,
        })
    item_ids = sorted({item_id for _c, item_id in rows})
    linked: set[tuple[int, int]] = set()
    for start in range(0, len(item_ids), ITEM_BATCH):
        stmt = select(CandidateItem.candidate_id, CandidateItem.item_id).where(
            CandidateItem.item_id.in_(item_ids[start : start + ITEM_BATCH])
        )
        linked.update((c, i) for c, i in session.execute(stmt))
    new = [values for pair, values in rows.items() if pair not in linked]
    _insert(session, CandidateItem, new)
    return {values["candidate_id"] for values in new}


def _recount(session: Session, candidates: Sequence[Candidate], now: datetime) -> None:
    """Independent sources, the verification they allow and the confidence, from the linked items."""
    if not candidates:
        return
    by_id = {c.id: c for c in candidates}
    ids = sorted(i for i in by_id if i is not None)
    for start in range(0, len(ids), ITEM_BATCH):
        stmt = (
            select(
                CandidateItem.candidate_id,
                func.count(func.distinct(CandidateItem.source_id)).filter(CandidateItem.independent.is_(True)),
                func.max(CandidateItem.confidence),
            )
            .where(CandidateItem.candidate_id.in_(ids[start : start + ITEM_BATCH]))
            .group_by(CandidateItem.candidate_id)
        )
        for candidate_id, n, best in session.execute(stmt):
            candidate = by_id[candidate_id]
            candidate.independent_sources = int(n or 0)
            candidate.verification = keys.allowed_verification(candidate.independent_sources)
            candidate.confidence = keys.confidence(float(best or 0.0), candidate.independent_sources)
            candidate.updated_at = now
            session.add(candidate)
    session.flush()


def _corroborations(session: Session, candidates: Sequence[Candidate]) -> None:
    """Point each new candidate at the knowledge-base fact that already states it, if one does: one
    query per fact kind for the rows that could match (same company, chip or operator)."""
    by_kind: dict[str, list[Candidate]] = {}
    for candidate in candidates:
        by_kind.setdefault(candidate.kind, []).append(candidate)
    for kind, group in by_kind.items():
        rows = _kb_rows(session, kind, group)
        for candidate in group:
            match = next((row for row in rows if keys.corroborates(kind, candidate.fact, row)), None)
            if match is not None:
                candidate.corroborates_kind, candidate.corroborates_id = keys.KB_KIND[kind], match.id
                session.add(candidate)
    session.flush()


def _kb_rows(session: Session, kind: str, candidates: Sequence[Candidate]) -> list[Any]:
    """The knowledge-base rows of ``kind``'s table in force that name an entity of ``candidates``."""
    table = KB_TABLES[keys.KB_KIND[kind]]
    facts = [c.fact for c in candidates]
    if kind in ("funding", "acquisition"):
        ids = sorted({f["vendor_id"] for f in facts if f.get("vendor_id")})
        where = table.vendor_id.in_(ids) if ids else None
    elif kind == "deployment":
        chips = sorted({f["chip_id"] for f in facts if f.get("chip_id")})
        operators = sorted({f["operator_id"] for f in facts if f.get("operator_id")})
        where = (
            or_(table.chip_id.in_(chips), table.operator_id.in_(operators)) if chips or operators else None
        )
    elif kind == "benchmark":
        chips = sorted({f["chip_id"] for f in facts if f.get("chip_id")})
        where = or_(*(cast(table.chip_ids, String).like(f'%"{c}"%') for c in chips)) if chips else None
    else:
        ids = sorted({f["chip_id"] for f in facts if f.get("chip_id")})
        where = table.id.in_(ids) if ids else None
    if where is None:
        return []
    stmt = select(table).where(where)
    for column in ("retracted_at", "retired_at"):
        if hasattr(table, column):
            stmt = stmt.where(getattr(table, column).is_(None))
    return list(session.scalars(stmt.order_by(table.id)))


# ---------------------------------------------------------------------------------------------------
# Reads


def item_links(session: Session, candidate_ids: Sequence[int]) -> dict[int, list[CandidateItem]]:
    """The item links of each candidate id, oldest first (``[]`` for a candidate without any)."""
    found: dict[int, list[CandidateItem]] = {i: [] for i in candidate_ids}
    if candidate_ids:
        stmt = select(CandidateItem).where(CandidateItem.candidate_id.in_(list(candidate_ids)))
        for link in session.scalars(stmt.order_by(CandidateItem.id)):
            found[link.candidate_id].append(link)
    return found


def candidate_views(session: Session, candidates: Sequence[Candidate]) -> list[dict[str, Any]]:
    """``CandidatePublic`` dicts for ``candidates``, each with its items (title and link from the item)."""
    links = item_links(session, [c.id for c in candidates if c.id is not None])
    item_ids = sorted({link.item_id for rows in links.values() for link in rows})
    items = {
        row.id: row
        for start in range(0, len(item_ids), ITEM_BATCH)
        for row in session.execute(
            select(Item.id, Item.title, Item.link).where(Item.id.in_(item_ids[start : start + ITEM_BATCH]))
        )
    }
    out = []
    for c in candidates:
        out.append({
            "id": c.id, "kind": c.kind, "status": c.status, "fact": c.fact, "confidence": c.confidence,
            "verification": c.verification, "independent_sources": c.independent_sources,
            "corroborates": (
                {"kind": c.corroborates_kind, "id": c.corroborates_id} if c.corroborates_id else None
            ),
            "fact_ref": {"kind": c.fact_kind, "id": c.fact_id} if c.fact_id else None,
            "items": [
                {
                    "item_id": link.item_id, "source_id": link.source_id, "trust": link.trust,
                    "independent": link.independent,
                    "title": items[link.item_id].title if link.item_id in items else None,
                    "url": items[link.item_id].link if link.item_id in items else None,
                    "published_at": rfc3339(link.published_at), "part": link.part,
                    "span": [link.span_start, link.span_end], "quote": link.quote,
                    "confidence": link.confidence,
                }
                for link in links.get(c.id or 0, [])
            ],
            "created_at": rfc3339(c.created_at), "updated_at": rfc3339(c.updated_at),
            "decided_at": rfc3339(c.decided_at), "decided_by": c.decided_by, "note": c.note,
        })
    return out


def list_candidates(
    *, session: Session, status: str | None, kind: str | None, cursor: str | None, limit: int
) -> dict[str, Any]:
    """One page of candidates, newest first: ``{"items": [CandidatePublic dict], "next_cursor"}``.

    ``status`` and ``kind`` filter (None: any). Raises a 422 ApiError for a malformed cursor.
    """
    stmt = select(Candidate)
    if status is not None:
        stmt = stmt.where(Candidate.status == status)
    if kind is not None:
        stmt = stmt.where(Candidate.kind == kind)
    rows, next_cursor = keyset_page(session, stmt, keys=(Candidate.id,), cursor=cursor, limit=limit,
                                    descending=True)
    return {"items": candidate_views(session, rows), "next_cursor": next_cursor}


def get_candidate(*, session: Session, candidate_id: int) -> Candidate:
    """The candidate ``candidate_id``; raises :class:`CandidateNotFound`."""
    candidate = session.get(Candidate, candidate_id)
    if candidate is None:
        raise CandidateNotFound(candidate_id)
    return candidate


def candidate_view(*, session: Session, candidate_id: int) -> dict[str, Any]:
    """One candidate as ``CandidatePublic`` (dict); raises :class:`CandidateNotFound`."""
    return candidate_views(session, [get_candidate(session=session, candidate_id=candidate_id)])[0]


def reject_candidate(
    *,
    session: Session,
    candidate_id: int,
    note: str | None,
    actor: str = "admin",
    now: datetime | None = None,
) -> dict[str, Any]:
    """Reject a pending candidate for good: the same fact read again joins it and stays rejected.

    Returns the candidate view. Raises :class:`CandidateNotFound` or :class:`CandidateDecided`.
    """
    candidate = get_candidate(session=session, candidate_id=candidate_id)
    if candidate.status != "pending":
        raise CandidateDecided(f"candidate {candidate_id} is {candidate.status} already")
    now = now or utcnow()
    candidate.status, candidate.decided_at, candidate.decided_by = "rejected", now, actor
    candidate.note, candidate.updated_at = note, now
    session.add(candidate)
    session.flush()
    return candidate_view(session=session, candidate_id=candidate_id)


__all__ = [
    "CandidateDecided",
    "CandidateNotFound",
    "candidate_view",
    "candidate_views",
    "get_candidate",
    "item_links",
    "list_candidates",
    "load_lexicon",
    "propose_from_items",
    "reject_candidate",
]
