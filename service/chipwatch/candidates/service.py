"""Candidates from stored items, and their reads and rejection (services flush, never commit).

:func:`propose_from_items` is the items-stored listener the wiring registers: in the transaction that
stored a check's items it reads each item's title and summary (``extract``), and for every fact found
adds the item to the fact's one candidate (creating it, with a ``candidate.created`` event, when the
fact is new). Accepting is in :mod:`chipwatch.candidates.accept`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm.attributes import set_committed_value
from sqlmodel import Session

from chipwatch.candidates import keys
from chipwatch.candidates.events import Carrier, emit_candidates_created
from chipwatch.candidates.extract import Proposal, extract
from chipwatch.candidates.lexicon import LexEntry, Lexicon
from chipwatch.candidates.models import Candidate, CandidateItem
from chipwatch.imports.models import Alias
from chipwatch.kit.pagination import keyset_page
from chipwatch.kit.time import rfc3339, utcnow
from chipwatch.knowledge.models import ENTITY_TABLES, KB_TABLES, Chip, ResultEntity
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
_lexicon_cache: tuple[list[tuple[Any, ...]], Lexicon] | None = None


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
    # The rows themselves are the fingerprint: comparing two lists of tuples runs in C, where the text and
    # hash of every row cost a few milliseconds per call, and a check calls once per batch of items.
    with _lexicon_lock:
        if _lexicon_cache is not None and _lexicon_cache[0] == rows:
            return _lexicon_cache[1]
    known = {(kind, entity_id) for kind, entity_id, name, _a, _v in rows if name is not None}
    entries = [
        LexEntry(entity_id, kind, tuple(n for n in (name, *aliases) if n), vendor)
        for kind, entity_id, name, aliases, vendor in rows
        if name is not None or (kind, entity_id) in known
    ]
    lexicon = Lexicon.build(entries)
    with _lexicon_lock:
        _lexicon_cache = (rows, lexicon)
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
    every feed check: a new candidate is inserted with its counts, verification and corroboration
    already computed from the items that carry it, so only candidates that existed before are updated.
    """
    ids = sorted({int(i) for i in item_ids})
    if not ids:
        return []
    now = now or utcnow()
    lexicon = load_lexicon(session=session)
    chip_vendor = {e.id: e.vendor_id for e in lexicon.entries.values() if e.kind == "chip"}
    read: list[tuple[Proposal, Any, str, str]] = []
    for row in _items(session, ids):
        for p in extract(row.title or "", row.summary, lexicon):
            read.append((p, row, *keys.fact_keys(p.kind, p.fact)))
    if not read:
        return []
    # One read of every candidate a proposal may belong to: under its own key, or under the key its
    # names had before they resolved to the ids an acceptance created (see ``keys.fact_key``).
    by_key: dict[tuple[str, str], Candidate | Filed] = _candidates_by_key(
        session, {(p.kind, k) for p, _r, *both in read for k in both}
    )
    groups: dict[tuple[str, str], list[tuple[Proposal, Any]]] = {}
    for p, row, key, name_key in read:
        if (p.kind, key) not in by_key and (p.kind, name_key) in by_key:
            key = name_key
        groups.setdefault((p.kind, key), []).append((p, row))
    fresh = {k: _merged_fact(group) for k, group in groups.items() if k not in by_key}
    links = {k: _link_values(group, fresh.get(k) or by_key[k].fact, chip_vendor, now)
             for k, group in groups.items()}
    created = _insert_candidates(session, fresh, links, now)
    by_key.update(created)
    # A fact a concurrent check filed first (its insert skipped ours) is a candidate that existed before.
    by_key.update(_candidates_by_key(session, {k for k in fresh if k not in created}))
    touched = _insert_links(session, links, by_key)
    existing = [c for k, c in by_key.items() if k not in created and c.id in touched]
    for c in existing:
        if c.status == "pending":
            missing = {f: v for p, _row in groups[(c.kind, c.fact_key)] for f, v in p.fact.items()
                       if c.fact.get(f) is None and v is not None}
            if missing:
                c.fact = {**c.fact, **missing}
    _recount(session, existing, now)
    accepted = [c for c in existing if c.status == "accepted"]
    if accepted:
        # accept.py builds on this module, so it is imported where it is needed
        from chipwatch.candidates.accept import refresh_accepted

        refresh_accepted(session=session, candidates=accepted, now=now)
    if created:
        news = sorted(created.items(), key=lambda kc: kc[1].id or 0)
        emit_candidates_created(session, [
            (c, [Carrier(v["item_id"], v["source_id"], v["trust"], v["quote"]) for v in links[k].values()])
            for k, c in news
        ])
    return sorted(c.id for c in created.values() if c.id is not None)


def _merged_fact(group: list[tuple[Proposal, Any]]) -> dict[str, Any]:
    """The fact of a new candidate: the first proposal's fields, with those a later one knows and it does
    not."""
    fact = dict(group[0][0].fact)
    for p, _row in group[1:]:
        for field, value in p.fact.items():
            if fact.get(field) is None and value is not None:
                fact[field] = value
    return fact


def _link_values(
    group: list[tuple[Proposal, Any]], fact: dict[str, Any], chip_vendor: dict[str, str | None], now: datetime
) -> dict[int, dict[str, Any]]:
    """The ``candidate_items`` values (but the candidate id) of each item carrying one fact: item id ->
    values, the first proposal an item made of the fact."""
    out: dict[int, dict[str, Any]] = {}
    for p, row in group:
        if row.id in out:
            continue
        subjects = keys.subjects(p.kind, fact, chip_vendor) | keys.subjects(p.kind, p.fact, chip_vendor)
        out[row.id] = {
            "item_id": row.id, "source_id": row.source_id, "trust": row.trust,
            "independent": keys.is_independent(row.trust, row.publisher_id, subjects),
            "part": p.span.part, "span_start": p.span.start, "span_end": p.span.end, "quote": p.span.text,
            "confidence": p.confidence,
            "published_at": None if row.published_is_estimated else row.published_at,
            "added_at": now,
        }
    return out


def _insert(session: Session, table: Any, rows: list[dict[str, Any]], *returning: str) -> list[Any]:
    """``INSERT ... ON CONFLICT DO NOTHING`` of ``rows`` as one executemany of a Core insert (the ORM's
    per-row bookkeeping costs more than the statement); a row a concurrent check wrote first is skipped.

    Returns the ``returning`` columns of the rows inserted (none of a skipped row), so the caller needs
    no query to learn which rows are new: SQLite (3.35 and later) and PostgreSQL both return them.
    """
    if not rows:
        return []
    insert = postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert
    stmt = insert(table.__table__).on_conflict_do_nothing()
    if not returning:
        session.execute(stmt, rows)
        return []
    columns = [table.__table__.c[name] for name in returning]
    return list(session.execute(stmt.returning(*columns), rows))


def _candidates_by_key(session: Session, wanted: set[tuple[str, str]]) -> dict[tuple[str, str], Candidate]:
    out: dict[tuple[str, str], Candidate] = {}
    fact_keys = sorted({key for _kind, key in wanted})
    for start in range(0, len(fact_keys), ITEM_BATCH):
        stmt = select(Candidate).where(Candidate.fact_key.in_(fact_keys[start : start + ITEM_BATCH]))
        for candidate in session.scalars(stmt.execution_options(populate_existing=True)):
            if (candidate.kind, candidate.fact_key) in wanted:
                out[(candidate.kind, candidate.fact_key)] = candidate
    return out


@dataclass(frozen=True, slots=True)
class Filed:
    """A candidate a check has just inserted, as its row's values (what its item links and its
    ``candidate.created`` event read): a table object per new candidate would cost more than the insert."""

    id: int
    kind: str
    fact_key: str
    status: str
    fact: dict[str, Any]
    confidence: float
    verification: str
    independent_sources: int
    corroborates_kind: str | None
    corroborates_id: str | None
    created_at: datetime


_FILED_COLUMNS = [f.name for f in fields(Filed)][1:]


def _insert_candidates(
    session: Session,
    facts: dict[tuple[str, str], dict[str, Any]],
    links: dict[tuple[str, str], dict[int, dict[str, Any]]],
    now: datetime,
) -> dict[tuple[str, str], Filed]:
    """Insert a candidate for each new fact, its counts, verification, confidence and corroboration
    computed from ``links`` (the items carrying it); returns the candidates this call created (as
    :class:`Filed` values, not table objects).

    When a concurrent check filed the same fact first, its row (and its ``candidate.created`` event)
    stands, this insert skips it and leaves it out of what it returns; the caller treats it as a
    candidate that existed before.
    """
    if not facts:
        return {}
    corroborated = _corroborations(session, facts)
    rows = []
    for (kind, key), fact in facts.items():
        carriers = links[(kind, key)].values()
        independent = len({v["source_id"] for v in carriers if v["independent"]})
        best = max(v["confidence"] for v in carriers)
        kb_kind, kb_id = corroborated.get((kind, key), (None, None))
        rows.append({
            "kind": kind, "fact_key": key, "status": "pending", "fact": fact,
            "confidence": keys.confidence(best, independent),
            "verification": keys.allowed_verification(independent), "independent_sources": independent,
            "corroborates_kind": kb_kind, "corroborates_id": kb_id, "fact_kind": None, "fact_id": None,
            "created_at": now, "updated_at": now, "decided_at": None, "decided_by": None, "note": None,
        })
    inserted = {(kind, key): ident for ident, kind, key in _insert(session, Candidate, rows, "id", "kind",
                                                                  "fact_key")}
    return {
        (row["kind"], row["fact_key"]): Filed(inserted[(row["kind"], row["fact_key"])],
                                              *(row[name] for name in _FILED_COLUMNS))
        for row in rows if (row["kind"], row["fact_key"]) in inserted
    }


def _insert_links(
    session: Session,
    links: dict[tuple[str, str], dict[int, dict[str, Any]]],
    by_key: dict[tuple[str, str], Candidate | Filed],
) -> set[int]:
    """Link each item to its fact's candidate (once: a link that exists is skipped by its unique key);
    returns the candidates that gained an item."""
    rows = [
        {"candidate_id": by_key[k].id, **values}
        for k, carriers in links.items() for values in carriers.values()
    ]
    return {candidate_id for (candidate_id,) in _insert(session, CandidateItem, rows, "candidate_id")}


def _recount(session: Session, candidates: Sequence[Candidate], now: datetime) -> None:
    """Independent sources, the verification they allow and the confidence, from the linked items."""
    if not candidates:
        return
    by_id = {c.id: c for c in candidates}
    ids = sorted(i for i in by_id if i is not None)
    rows: list[dict[str, Any]] = []
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
            independent = int(n or 0)
            counted = {
                "independent_sources": independent,
                "verification": keys.allowed_verification(independent),
                "confidence": keys.confidence(float(best or 0.0), independent),
                "updated_at": now,
            }
            rows.append({"b_id": candidate_id, **{f"b_{name}": value for name, value in counted.items()}})
            candidate = by_id[candidate_id]
            for name, value in counted.items():
                set_committed_value(candidate, name, value)  # written below, as the row now holds it
    # One executemany for every candidate instead of an ORM flush of each (its change tracking costs more
    # than the statement); the objects hold the written values, so nothing reads a stale count.
    session.flush()
    if rows:
        table = Candidate.__table__
        session.execute(
            update(table).where(table.c.id == bindparam("b_id")).values(
                {name[2:]: bindparam(name) for name in rows[0] if name != "b_id"}
            ),
            rows,
        )


def _corroborations(
    session: Session, facts: dict[tuple[str, str], dict[str, Any]]
) -> dict[tuple[str, str], tuple[str, str]]:
    """The knowledge-base fact (kind, id) that already states each new fact, for those one does: one
    query per fact kind for the rows that could match (same company, chip or operator)."""
    by_kind: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for (kind, key), fact in facts.items():
        by_kind.setdefault(kind, []).append((key, fact))
    out: dict[tuple[str, str], tuple[str, str]] = {}
    for kind, group in by_kind.items():
        # Rows by the entity a match must share, so each fact is tested against its own subject's rows
        # (in id order, as the query returns them), not against every row of the batch.
        rows: dict[Any, list[Any]] = {}
        for row in _kb_rows(session, kind, [fact for _key, fact in group]):
            for subject in _row_subjects(kind, row):
                rows.setdefault(subject, []).append(row)
        for key, fact in group:
            mine = rows.get(_fact_subject(kind, fact), ())
            match = next((row for row in mine if keys.corroborates(kind, fact, row)), None)
            if match is not None:
                out[(kind, key)] = (keys.KB_KIND[kind], match.id)
    return out


def _fact_subject(kind: str, fact: dict[str, Any]) -> Any:
    """What a knowledge-base row must name to state ``fact`` (see ``keys.corroborates``)."""
    if kind in ("funding", "acquisition"):
        return fact.get("vendor_id")
    if kind == "deployment":
        return (fact.get("chip_id"), fact.get("operator_id"))
    return fact.get("chip_id")


def _row_subjects(kind: str, row: Any) -> list[Any]:
    """The :func:`_fact_subject` values a knowledge-base row of ``kind``'s table can match."""
    if kind in ("funding", "acquisition"):
        return [row.vendor_id]
    if kind == "deployment":
        return [(row.chip_id, row.operator_id)]
    if kind == "benchmark":
        return list(dict.fromkeys(row.chip_ids or []))
    return [row.id]


def _kb_rows(session: Session, kind: str, facts: Sequence[dict[str, Any]]) -> list[Any]:
    """The knowledge-base rows of ``kind``'s table in force that name an entity of ``facts``."""
    table = KB_TABLES[keys.KB_KIND[kind]]
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
        # Through the results' chip index, not the text of every result's chip list.
        named = select(ResultEntity.result_id).where(
            ResultEntity.role == "chip", ResultEntity.entity_id.in_(chips)
        )
        where = table.id.in_(named) if chips else None
    else:
        ids = sorted({f["chip_id"] for f in facts if f.get("chip_id")})
        where = table.id.in_(ids) if ids else None
    if where is None:
        return []
    # The columns the match reads (``keys.corroborates``, ``_row_subjects``) as plain rows: table objects
    # would cost their loading and identity map for every row of a subject a check names.
    stmt = select(*(getattr(table, name) for name in _KB_COLUMNS[kind])).where(where)
    for column in ("retracted_at", "retired_at"):
        if hasattr(table, column):
            stmt = stmt.where(getattr(table, column).is_(None))
    return list(session.execute(stmt.order_by(table.id)))


_FUNDING_COLUMNS = (
    "id", "round_type", "vendor_id", "acquirer_id", "currency", "amount", "post_money_valuation"
)
_KB_COLUMNS: dict[str, tuple[str, ...]] = {
    "funding": _FUNDING_COLUMNS,
    "acquisition": _FUNDING_COLUMNS,
    "deployment": ("id", "chip_id", "operator_id", "capacity_mw", "capacity_mw_target", "units_min"),
    "benchmark": ("id", "chip_ids", "unit", "value", "value_max"),
    "launch": ("id",),
}


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
