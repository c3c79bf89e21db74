"""Storing a feed's entries: each story once, changed stories updated in place.

Two halves: a pure decision over plain values, and a thin writer that applies it.

* :func:`item_candidates` (pure): the parsed entries with their dedup keys (guid, normalised link,
  content hash), entries repeated verbatim in the document dropped, and which keys can be trusted.
* :func:`decide` (pure): given those candidates and the stored rows that share a key with one of them,
  a :class:`StorePlan`: rows to insert, changes to stored rows, entries unchanged.
* :func:`store_items` (the writer): loads the stored rows by key, calls both, applies the plan.
"""

from __future__ import annotations

import hashlib
import logging
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import select
from sqlmodel import Session

from chipwatch.sources.links import normalise_link
from chipwatch.sources.models import Item, Source
from chipwatch.sources.parse import ParsedEntry, ParsedFeed

logger = logging.getLogger(__name__)

# Column widths of the items table (PostgreSQL enforces them; SQLite does not).
GUID_MAX, LINK_MAX, AUTHOR_MAX = 1000, 2000, 500
IN_CHUNK = 500  # bound on IN (...) list sizes


# --------------------------------------------------------------------------------------------------
# Keys


def content_hash(title: str, body: str) -> str:
    """SHA-256 hex digest identifying an item's text, for de-duplication when guid and link differ.

    Both parts are NFKC-normalised, whitespace-collapsed and case-folded first, so re-wrapped or
    re-cased copies of the same text hash the same.
    """

    def norm(text: str) -> str:
        return " ".join(unicodedata.normalize("NFKC", text or "").split()).casefold()

    return hashlib.sha256(f"{norm(title)}\n{norm(body)}".encode()).hexdigest()


def item_content_hash(entry: ParsedEntry) -> str:
    """The third dedup key: a digest of the entry's title, body and publication date.

    The title is always part of it: a body alone does not make a story (feeds repeat one long
    boilerplate description, or a teaser, under different posts), so two entries with different titles
    are never one item by content. A story re-published under a new slug and guid with the same title,
    body and date still matches its stored item and updates it. An estimated (missing) date hashes as
    empty.
    """
    body = entry.content or entry.summary or ""
    date = entry.published_at.isoformat() if entry.published_at and not entry.published_is_estimated else ""
    return content_hash(f"{date}\n{entry.title}", body)


def _text(value: str | None) -> str | None:
    # PostgreSQL text cannot hold NUL characters; feeds occasionally carry them.
    return value.replace("\x00", "") if value else value


def _key(value: str | None, width: int) -> str | None:
    """A dedup key that fits its column: a longer one is replaced by its digest (still unique)."""
    value = _text(value)
    if not value:
        return None
    if len(value) <= width:
        return value
    return "sha256:" + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(slots=True)
class Candidate:
    """One entry as it would be stored: the item columns it sets (``ITEM_COLUMNS``; guid, normalised
    link and content hash are also its dedup keys) and which keys may match.

    ``use_guid``/``use_link`` are False for a guid or link shared by several entries of the document
    (not trusted), and for a link that is the site's home page.
    """

    guid: str | None
    link: str | None
    link_norm: str | None
    content_hash: str
    title: str
    summary: str | None
    content: str | None
    author: str | None
    published_at: datetime | None
    published_is_estimated: bool
    published_precision: str | None
    published_reason: str | None
    use_guid: bool = True
    use_link: bool = True


# The columns of an item a feed entry sets: a new item gets them all (with its source and first-seen
# time), a matched one those that differ.
ITEM_COLUMNS = (
    "guid",
    "link",
    "link_norm",
    "content_hash",
    "title",
    "summary",
    "content",
    "author",
    "published_at",
    "published_is_estimated",
    "published_precision",
    "published_reason",
)


@dataclass(slots=True)
class Candidates:
    """:func:`item_candidates`'s answer: the candidates, entries dropped as verbatim repeats, and one
    readable warning per distrusted key."""

    items: list[Candidate] = field(default_factory=list)
    duplicates: int = 0
    warnings: list[str] = field(default_factory=list)

    def keys(self) -> tuple[set[str], set[str], set[str]]:
        """``(guids, normalised links, content hashes)`` that stored rows may match on."""
        return (
            {c.guid for c in self.items if c.use_guid and c.guid},
            {c.link_norm for c in self.items if c.use_link and c.link_norm},
            {c.content_hash for c in self.items},
        )


def _candidate(entry: ParsedEntry) -> Candidate:
    link = _text(entry.link)
    if link is not None and len(link) > LINK_MAX:
        link = None  # a cut-off URL would point nowhere; link_norm (a digest then) still dedups
    return Candidate(
        guid=_key(entry.guid, GUID_MAX),
        link=link,
        link_norm=_key(normalise_link(entry.link), LINK_MAX) if entry.link else None,
        content_hash=item_content_hash(entry),
        title=_text(entry.title) or "",
        summary=_text(entry.summary) or None,
        content=_text(entry.content) or None,
        author=(_text(entry.author) or "")[:AUTHOR_MAX] or None,
        published_at=entry.published_at,
        published_is_estimated=entry.published_is_estimated,
        published_precision=entry.published_precision,
        published_reason=_text(entry.published_reason) or None,
    )


def item_candidates(entries: Iterable[ParsedEntry], *, feed_link: str | None = None) -> Candidates:
    """The entries of one document as :class:`Candidates` (pure).

    An entry identical in guid, link and content to an earlier one is counted in ``duplicates`` and
    left out. A guid or normalised link shared by several entries is not trusted as a key; nor is a
    link that is the feed's home page (``feed_link``) or any site root.
    """
    found = Candidates()
    seen: set[tuple[str | None, str | None, str]] = set()
    for entry in entries:
        candidate = _candidate(entry)
        identity = (candidate.guid, candidate.link_norm, candidate.content_hash)
        if identity in seen:
            found.duplicates += 1
            continue
        seen.add(identity)
        found.items.append(candidate)
    guid_counts = Counter(c.guid for c in found.items if c.guid)
    link_counts = Counter(c.link_norm for c in found.items if c.link_norm)
    home = normalise_link(feed_link) if feed_link else None
    for guid, count in guid_counts.items():
        if count > 1:
            found.warnings.append(
                f"guid {guid[:200]!r} is shared by {count} entries; matching them by link or content instead"
            )
    for c in found.items:
        c.use_guid = bool(c.guid) and guid_counts[c.guid] == 1
        c.use_link = (
            bool(c.link_norm)
            and link_counts[c.link_norm] == 1
            and c.link_norm != home
            and urlsplit(c.link_norm).path not in ("", "/")
        )
    return found


# --------------------------------------------------------------------------------------------------
# The decision


@dataclass(slots=True)
class ItemChange:
    """Columns of stored item ``item_id`` to set: ``{column: new value}``, only those that differ."""

    item_id: int
    changes: dict[str, Any]


@dataclass(slots=True)
class StorePlan:
    """What to write for one document: ``inserts`` (column values of new items, without source and
    first-seen time), ``updates``, and how many entries were ``unchanged`` or verbatim ``duplicates``."""

    inserts: list[dict[str, Any]] = field(default_factory=list)
    updates: list[ItemChange] = field(default_factory=list)
    unchanged: int = 0
    duplicates: int = 0


def _match(candidates: list[Candidate], stored: Sequence[Item]) -> list[Item | None]:
    """The stored row each candidate matches, or None: guid first, then link, then content hash.

    A stored row is matched by at most one candidate; a guid or link key that names several stored
    rows is ambiguous and matches none of them.
    """
    by_guid: dict[str, list[Item]] = defaultdict(list)
    by_link: dict[str, list[Item]] = defaultdict(list)
    by_hash: dict[str, list[Item]] = defaultdict(list)
    for row in sorted({row.id: row for row in stored}.values(), key=lambda r: r.id or 0):
        if row.guid:
            by_guid[row.guid].append(row)
        if row.link_norm:
            by_link[row.link_norm].append(row)
        by_hash[row.content_hash].append(row)
    claimed: set[int | None] = set()

    def take(rows: list[Item], *, unique: bool) -> Item | None:
        free = [r for r in rows if r.id not in claimed]
        if not free or (unique and len(rows) > 1):
            return None
        claimed.add(free[0].id)
        return free[0]

    matches: list[Item | None] = [None] * len(candidates)
    for i, c in enumerate(candidates):  # guids first, so a link or content match never steals a guid's item
        if c.use_guid and c.guid:
            matches[i] = take(by_guid.get(c.guid, []), unique=True)
    for i, c in enumerate(candidates):
        if matches[i] is None and c.use_link and c.link_norm:
            matches[i] = take(by_link.get(c.link_norm, []), unique=True)
    for i, c in enumerate(candidates):
        if matches[i] is None:
            matches[i] = take(by_hash.get(c.content_hash, []), unique=False)
    return matches


def _changes(c: Candidate, row: Item) -> dict[str, Any]:
    """The columns of ``row`` that ``c`` changes: ``{column: new value}``."""
    wanted: dict[str, Any] = {
        # A link that differs only in tracking parameters, case or fragment (same normalised form) is
        # left as stored: some feeds rotate such parameters on every fetch.
        "link": c.link if c.link_norm != row.link_norm else row.link,
        "link_norm": c.link_norm,
        "content_hash": c.content_hash,
        "title": c.title,
        "summary": c.summary,
        "content": c.content,
        "author": c.author,
    }
    if c.use_guid or not row.guid:
        wanted["guid"] = c.guid if c.guid else row.guid
    if c.published_at is not None or row.published_at is None:
        # A stored date is kept when the entry's is unknown now; an unknown one gets the latest reason.
        wanted["published_at"] = c.published_at
        wanted["published_is_estimated"] = c.published_at is None
        wanted["published_precision"] = c.published_precision
        wanted["published_reason"] = c.published_reason
    return {name: value for name, value in wanted.items() if getattr(row, name) != value}


def decide(candidates: Candidates, stored: Sequence[Item]) -> StorePlan:
    """What to write for ``candidates`` given the ``stored`` rows of the same source (pure).

    ``stored`` must hold at least every row of the source that shares a trusted key with a candidate
    (:meth:`Candidates.keys`); other rows are harmless. Each candidate matches a stored row by guid,
    else by normalised link, else by content hash (see :func:`_match`). A match whose fields differ
    becomes an :class:`ItemChange` (a story re-published under a new slug keeps its row); an
    unmatched candidate becomes an insert (``published_at`` None and ``published_is_estimated`` True
    when the entry had no usable date). The same document decided again against what it stored
    yields no inserts and no changes. Only the item columns of ``stored`` are read (rows, or any
    objects with those attributes); no session is touched.
    """
    plan = StorePlan(duplicates=candidates.duplicates)
    for c, row in zip(candidates.items, _match(candidates.items, stored), strict=True):
        if row is None:
            plan.inserts.append({name: getattr(c, name) for name in ITEM_COLUMNS})
        elif changes := _changes(c, row):
            assert row.id is not None  # stored rows have ids
            plan.updates.append(ItemChange(item_id=row.id, changes=changes))
        else:
            plan.unchanged += 1
    return plan


# --------------------------------------------------------------------------------------------------
# The writer


@dataclass(slots=True)
class StoreResult:
    """Rows added and rows changed by :func:`store_items`; ``unchanged`` counts entries already stored
    as they are; ``duplicates`` counts entries repeated verbatim within the same document."""

    new: list[Item] = field(default_factory=list)
    updated: list[Item] = field(default_factory=list)
    unchanged: int = 0
    duplicates: int = 0


def _stored_rows(session: Session, source_id: str, candidates: Candidates) -> dict[int, Item]:
    """The source's stored items sharing a key with a candidate, by id."""
    rows: dict[int, Item] = {}
    guids, links, hashes = candidates.keys()
    for column, values in ((Item.guid, guids), (Item.link_norm, links), (Item.content_hash, hashes)):
        ordered = sorted(values)
        for start in range(0, len(ordered), IN_CHUNK):
            chunk = ordered[start : start + IN_CHUNK]
            for row in session.scalars(select(Item).where(Item.source_id == source_id, column.in_(chunk))):
                rows[row.id] = row
    return rows


def store_items(*, session: Session, source: Source, feed: ParsedFeed, now: datetime) -> StoreResult:
    """Store ``feed``'s entries for ``source``: each story once, changed stories updated in place.

    Decides with :func:`item_candidates` and :func:`decide`, then applies the plan: new items get
    ``first_seen_at = now``, changed items ``updated_at = now``, and ``source.items_count`` grows by the
    number added. Fetching the same document again adds and changes nothing. Flushes; never commits.
    """
    candidates = item_candidates(feed.entries, feed_link=feed.link)
    for warning in candidates.warnings:
        logger.warning("source %s: %s", source.id, warning, extra={"source_id": source.id})
    result = StoreResult(duplicates=candidates.duplicates)
    if not candidates.items:
        return result
    stored = _stored_rows(session, source.id, candidates)
    plan = decide(candidates, list(stored.values()))
    for values in plan.inserts:
        item = Item(source_id=source.id, first_seen_at=now, **values)
        session.add(item)
        result.new.append(item)
    for change in plan.updates:
        item = stored[change.item_id]
        for name, value in change.changes.items():
            setattr(item, name, value)
        item.updated_at = now
        result.updated.append(item)
    result.unchanged = plan.unchanged
    source.items_count += len(result.new)
    session.flush()
    return result


__all__ = [
    "Candidate",
    "Candidates",
    "ItemChange",
    "StorePlan",
    "StoreResult",
    "content_hash",
    "decide",
    "item_candidates",
    "item_content_hash",
    "store_items",
]
