"""Sources and items for the API and the CLI: add sources (one, or an OPML list), read them, and the
queries over sources and items. Every function takes a keyword-only ``session`` and never commits.

Checking a source is :mod:`chipwatch.sources.check`; storing its items :mod:`chipwatch.sources.store`.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import Select, bindparam, select
from sqlmodel import Session

from chipwatch import netguard
from chipwatch.config import Settings
from chipwatch.kit.pagination import KeysetQuery, Page, keyset_page
from chipwatch.kit.rows import column_rows, model_columns
from chipwatch.knowledge.checks import entity_exists
from chipwatch.sources.check import SourceSnapshot, is_feed
from chipwatch.sources.errors import InvalidSource, InvalidSourceURL, SourceConflict, SourceNotFound
from chipwatch.sources.links import normalise_link
from chipwatch.sources.mentions import mentions_of
from chipwatch.sources.models import FEED_KINDS, Item, ItemMention, Source
from chipwatch.sources.opml import build_opml, parse_opml
from chipwatch.sources.schemas import ItemDetail, ItemPublic, OpmlImportResult, SourceCreate
from chipwatch.sources.search import SearchPlan, search_plan
from chipwatch.vocab.slugs import slugify
from chipwatch.vocab.trust import Trust

URL_MAX = 2000  # sources.url column width

# Parametrised once: pydantic keeps its generic models in a weak cache, so a ``Page[Source]`` written
# in a function body may be built again (milliseconds) on every call.
SourcePage = Page[Source]


# --------------------------------------------------------------------------------------------------
# Adding sources


def check_source_url(url: str, *, settings: Settings) -> str:
    """``url`` stripped, if it may be watched; raises :class:`~chipwatch.sources.errors.InvalidSourceURL`
    saying why not.

    http(s) with a host is always required. Unless ``allow_private_networks``, a host that resolves to
    an internal address is refused (the fetch checks again on every hop); a host that does not resolve
    now is accepted, since DNS can be down and the fetch's own guard applies later.
    """
    url = url.strip()
    if len(url) > URL_MAX:
        raise InvalidSourceURL(f"URL longer than {URL_MAX} characters")
    try:
        netguard.split_url(url)
        if not settings.allow_private_networks:
            try:
                netguard.check_url(url, allow_private=False)
            except netguard.HostResolutionError:
                pass
    except netguard.BlockedAddressError as exc:
        raise InvalidSourceURL(str(exc)) from exc
    return url


def _slug_from_url(url: str) -> str:
    host = (urlsplit(url).hostname or "").lower().removeprefix("www.").removeprefix("feeds.")
    return slugify(host.rsplit(".", 1)[0] if host.count(".") >= 1 else host) or "feed"


def url_taken(session: Session, url: str, *, besides: str | None = None) -> str | None:
    """Id of a source (other than ``besides``) already watching ``url`` (compared after
    :func:`normalise_link`), or None. A removed source still holds its URL: it can be restored."""
    wanted = normalise_link(url)
    for source_id, existing in session.execute(select(Source.id, Source.url).where(Source.url.is_not(None))):
        if source_id != besides and (existing == url or normalise_link(existing) == wanted):
            return source_id
    return None


def taken_message(session: Session, source_id: str, what: str) -> str:
    """Why a new source conflicts with ``source_id`` (``what``: "already watches <url>"...), saying how
    to bring it back when it was removed."""
    row = session.get(Source, source_id)
    if row is not None and row.removed_at is not None:
        return (f"source {source_id!r} {what}; it was removed at {row.removed_at.isoformat()}: "
                f'PATCH /v1/sources/{source_id} with {{"enabled": true}} to restore it')
    return f"source {source_id!r} {what}"


def reference_problems(*, session: Session, publisher_id: str | None) -> list[tuple[str, str]]:
    """``[("publisher_id", message)]`` when it names no vendor in force, else ``[]``."""
    if publisher_id is None or entity_exists(session=session, kind="vendors", id_=publisher_id):
        return []
    return [("publisher_id", f"no vendor with id {publisher_id!r}")]


def field_problems(*, session: Session, fields: dict[str, Any], settings: Settings) -> list[tuple[str, str]]:
    """``(field, message)`` for each of the source ``fields`` given that the API model cannot refuse: a
    URL that may not be watched (malformed, not http(s), internal), a publisher that is no vendor."""
    problems: list[tuple[str, str]] = []
    if fields.get("url") is not None:
        try:
            check_source_url(fields["url"], settings=settings)
        except InvalidSourceURL as exc:
            problems += exc.problems
    return problems + reference_problems(session=session, publisher_id=fields.get("publisher_id"))


def _free_id(session: Session, base: str) -> str:
    base = base[:58].strip("-") or "feed"
    candidate, n = base, 2
    while session.get(Source, candidate) is not None:
        candidate, n = f"{base}-{n}", n + 1
    return candidate


def create_source(*, session: Session, source_in: SourceCreate, settings: Settings) -> Source:
    """Add a source from ``source_in``; returns the row (flushed). A feed is of kind ``unknown`` until its
    first check detects it; a dataset source has the dataset kind ``source_in`` names.

    The id is ``source_in.id`` when given, else a slug of the name (or of the URL's host for names
    without Latin letters), made unique with ``-2``, ``-3``... Raises
    :class:`~chipwatch.sources.errors.InvalidSource` listing every refused field (a URL that may not be
    watched, an unknown publisher) and :class:`~chipwatch.sources.errors.SourceConflict` when the id is
    taken or another source already watches the same URL. Flushes; never commits.
    """
    problems = field_problems(session=session, fields=source_in.model_dump(), settings=settings)
    if problems:
        raise InvalidSource(problems)
    url = check_source_url(source_in.url, settings=settings)
    taken = url_taken(session, url)
    if taken is not None:
        raise SourceConflict(taken_message(session, taken, f"already watches {url}"))
    if source_in.id:
        if session.get(Source, source_in.id) is not None:
            raise SourceConflict(taken_message(session, source_in.id, "already exists"))
        source_id = source_in.id
    else:
        source_id = _free_id(session, slugify(source_in.name) or _slug_from_url(url))
    source = Source(
        id=source_id,
        name=source_in.name,
        url=url,
        kind=source_in.kind or "unknown",
        trust=source_in.trust,
        language=source_in.language,
        timezone=source_in.timezone,
        publisher_id=source_in.publisher_id,
        check_interval_s=source_in.check_interval_s,
        enabled=source_in.enabled,
        notes=source_in.notes,
    )
    session.add(source)
    session.flush()
    return source


def import_opml(*, session: Session, body: bytes, trust: Trust, settings: Settings) -> OpmlImportResult:
    """Add a source (trust ``trust``) for each feed of an OPML document that is not watched yet.

    Returns the ids created and the feeds skipped with the reason (already watched, refused URL).
    Raises :class:`~chipwatch.sources.errors.FeedParseError` for a malformed, unsafe or non-OPML
    document (nothing is added then). Flushes; never commits.
    """
    created: list[str] = []
    skipped: list[dict[str, str]] = []
    for outline in parse_opml(body):
        source_in = SourceCreate.model_construct(
            url=outline["url"],
            name=(outline["name"] or outline["url"])[:200],
            trust=trust,
            id=None,
            language=None,
            timezone=None,
            publisher_id=None,
            check_interval_s=None,
            enabled=True,
            notes=None,
        )
        try:
            source = create_source(session=session, source_in=source_in, settings=settings)
        except (InvalidSource, SourceConflict) as exc:
            skipped.append({"url": outline["url"], "reason": str(exc)})
            continue
        created.append(source.id)
    return OpmlImportResult.model_validate({"created": created, "skipped": skipped})


# --------------------------------------------------------------------------------------------------
# Reading sources


def get_source(*, session: Session, source_id: str) -> Source | None:
    """The source with id ``source_id`` (with its health fields), or None."""
    return session.get(Source, source_id)


def list_sources(*, session: Session, cursor: str | None, limit: int, removed: bool = False) -> Page[Source]:
    """One page of sources (feeds and seed articles) ordered by id, from ``cursor`` (a previous page's
    ``next_cursor``; a malformed one is a 422 problem naming ``cursor``): the sources in use, or with
    ``removed`` only the removed ones."""
    stmt = select(Source).where(Source.removed_at.is_not(None) if removed else Source.removed_at.is_(None))
    rows, next_cursor = keyset_page(session, stmt, keys=(Source.id,), cursor=cursor, limit=limit)
    return SourcePage(items=rows, next_cursor=next_cursor)


def export_opml(*, session: Session) -> bytes:
    """An OPML 2.0 document (UTF-8) of every checked feed (enabled or not; not removed), ordered by id."""
    in_use = select(Source).where(Source.removed_at.is_(None)).order_by(Source.id)
    feeds = [s for s in session.scalars(in_use) if is_feed(s)]
    return build_opml(feeds, title="chipwatch sources")


def feed_source_ids(
    *, session: Session, source_ids: Sequence[str] | None = None, enabled_only: bool = True
) -> list[str]:
    """Ids of the feeds to check: ``source_ids`` deduplicated (in their order) when given, else every
    feed (kind rss, atom, rdf, json or unknown, with a URL; only enabled ones unless ``enabled_only``
    is False) ordered by id.

    Raises :class:`~chipwatch.sources.errors.SourceNotFound` or
    :class:`~chipwatch.sources.errors.NotAFeed` for a named source that cannot be checked.
    """
    if source_ids is not None:
        ids = list(dict.fromkeys(source_ids))
        for source_id in ids:
            row = session.get(Source, source_id)
            if row is None:
                raise SourceNotFound(source_id)
            SourceSnapshot.of(row)  # raises NotAFeed
        return ids
    stmt = select(Source.id).where(Source.kind.in_(FEED_KINDS), Source.url.is_not(None)).order_by(Source.id)
    if enabled_only:
        stmt = stmt.where(Source.enabled.is_(True))
    return list(session.scalars(stmt))


# --------------------------------------------------------------------------------------------------
# Items


def _item_view(item: Item, mentions: list[ItemMention], model: type[ItemPublic] = ItemPublic) -> ItemPublic:
    data = item.model_dump()
    data["mentions"] = [{"entity_id": m.entity_id, "entity_kind": m.entity_kind} for m in mentions]
    return model.model_validate(data)


_ITEM_COLUMNS = model_columns(Item, ItemPublic, skip=("mentions",))
_ITEM_FIELDS = tuple(c.key for c in _ITEM_COLUMNS)
_ITEMS = select(*_ITEM_COLUMNS)  # built once: statements are immutable, and coercing columns is not free


_MENTIONS_OF = (
    select(ItemMention.item_id, ItemMention.entity_id, ItemMention.entity_kind)
    .where(ItemMention.item_id.in_(bindparam("ids", expanding=True)))
    .order_by(ItemMention.item_id, ItemMention.entity_id)
)


def _mention_views(session: Session, item_ids: Sequence[int]) -> dict[int, list[dict[str, str]]]:
    """``MentionPublic`` dicts of each item id (ordered by entity id), read as columns."""
    found: dict[int, list[dict[str, str]]] = {i: [] for i in item_ids}
    if found:
        for item_id, entity_id, entity_kind in column_rows(session, _MENTIONS_OF, {"ids": list(found)}).all():
            found[item_id].append({"entity_id": entity_id, "entity_kind": entity_kind})
    return found


def list_items(
    *,
    session: Session,
    source_id: str | None = None,
    mentions: str | None = None,
    since: datetime | None = None,
    q: str | None = None,
    cursor: str | None = None,
    limit: int = 50,
) -> dict[str, Any]:
    """One page of items with their mentions, newest first by ``(sort_at, id)``; with ``q``, most relevant
    first by ``(score, id)`` (the most recently stored first among equals).

    Returns ``{"items": [ItemPublic fields as a dict, in the model's order], "next_cursor": str | None}``,
    read as columns (no ORM objects) and JSON-ready for :func:`chipwatch.kit.rows.dump_json`.
    ``sort_at`` is the publication time, or the first-seen time for items without a usable date.
    Filters: ``source_id``; ``mentions`` (an entity id linked through item mentions); ``since`` (aware
    datetime: items at or after it); ``q`` (search: every word of it occurs in the title or the summary,
    compared NFKC-normalised, case-folded and without accents, through the database's trigram index;
    :mod:`chipwatch.sources.search`; a query whose every word is shorter than three characters is
    answered newest first, unranked). ``cursor`` is a previous page's ``next_cursor`` of the same query
    (a malformed one is a 422 problem naming it). Raises
    :class:`~chipwatch.sources.errors.InvalidSource` naming each filter whose id is unknown.
    """
    plan = search_plan(q, dialect=session.get_bind().dialect.name) if q else None
    if plan is None:
        query = _items_query(mentions=bool(mentions), source=bool(source_id), since=since is not None)
        params = {"mentions": mentions, "source_id": source_id, "since": since}
        rows, next_cursor = query.page(session, params, cursor=cursor, limit=limit)
    elif plan.ranked is None:
        # A query of short words only, newest first: its filter is built per query, so the page is too.
        stmt, keys, filters = _filtered(mentions or None, source_id or None, since, walk_mentions=True)
        rows, next_cursor = keyset_page(
            session, stmt.where(*filters, plan.where), keys=keys, cursor=cursor, limit=limit,
            descending=True, row_key=lambda item: (item.sort_at, item.id),
        )
    else:
        _stmt, _keys, filters = _filtered(mentions or None, source_id or None, since, walk_mentions=False)
        rows, next_cursor = _ranked_page(session, plan, filters, cursor=cursor, limit=limit)
    if not rows:
        # Checked only for an empty page: a row found through an id proves it (items name their source
        # by foreign key, mention rows name entities, which are retracted but never deleted).
        _check_filters(session, source_id=source_id, mentions=mentions)
    found = _mention_views(session, [r.id for r in rows])
    items = []
    for row in rows:
        view = dict(zip(_ITEM_FIELDS, row, strict=True))
        view["mentions"] = found[row.id]
        items.append(view)
    return {"items": items, "next_cursor": next_cursor}


_SOURCE_ID = select(Source.id).where(Source.id == bindparam("source_id"))


def _check_filters(session: Session, *, source_id: str | None, mentions: str | None) -> None:
    """Raise :class:`InvalidSource` naming each filter whose id is unknown."""
    unknown = []
    if source_id and column_rows(session, _SOURCE_ID, {"source_id": source_id}).first() is None:
        unknown.append(("source", f"no source with id {source_id!r}"))
    if mentions and not entity_exists(session=session, kind=None, id_=mentions, retracted=True):
        unknown.append(("mentions", f"no entity with id {mentions!r}"))
    if unknown:
        raise InvalidSource(unknown)


def _filtered(
    mentions: str | None, source_id: str | None, since: datetime | None, *, walk_mentions: bool
) -> tuple[Select, tuple[Any, Any], list[Any]]:
    """``(statement, sort keys, filters)`` of a listing's filters; with ``walk_mentions`` a ``mentions``
    filter joins the mention rows and sorts by their own (entity_id, sort_at, item_id) index: one page
    read off its end, each item then fetched by key, never every mentioning item sorted."""
    stmt, keys, filters = _ITEMS, (Item.sort_at, Item.id), []
    if mentions is not None and walk_mentions:
        stmt = _ITEMS.join(ItemMention, ItemMention.item_id == Item.id)
        filters.append(ItemMention.entity_id == mentions)
        keys = (ItemMention.sort_at, ItemMention.item_id)
    elif mentions is not None:
        filters.append(Item.id.in_(select(ItemMention.item_id).where(ItemMention.entity_id == mentions)))
    if source_id is not None:
        filters.append(Item.source_id == source_id)
    if since is not None:
        filters.append(keys[0] >= since)
    return stmt, keys, filters


@functools.cache
def _items_query(*, mentions: bool, source: bool, since: bool) -> KeysetQuery:
    """The newest-first page query of one combination of filters (:func:`_filtered`), built once: the
    values are the bound parameters ``mentions``, ``source_id`` and ``since``."""
    stmt, keys, filters = _filtered(
        bindparam("mentions") if mentions else None,
        bindparam("source_id") if source else None,
        bindparam("since", type_=Item.sort_at.type) if since else None,
        walk_mentions=True,
    )
    return KeysetQuery(stmt.where(*filters), keys=keys, descending=True,
                       row_key=lambda item: (item.sort_at, item.id))


def _ranked_page(
    session: Session, plan: SearchPlan, filters: list, *, cursor: str | None, limit: int
) -> tuple[list[Any], str | None]:
    """One page of a ranked search: the page of ids is chosen on the index (joined to the items only when
    a filter needs them), then those items' columns are read."""
    ranked = plan.ranked_where(filters)
    score, item_id = ranked.selected_columns.score, ranked.selected_columns.item_id
    hits, next_cursor = keyset_page(
        session, ranked, keys=(score, item_id), cursor=cursor, limit=limit, descending=True
    )
    ids = [hit.item_id for hit in hits]
    items = {}
    if ids:
        found = column_rows(session, _ITEMS.where(Item.id.in_(ids))).all()
        items = {row.id: row for row in found}
    return [items[i] for i in ids if i in items], next_cursor


def get_item(*, session: Session, item_id: int) -> ItemDetail | None:
    """One item with its full text and the entities it mentions, or None."""
    item = session.get(Item, item_id)
    if item is None:
        return None
    found = mentions_of(session=session, item_ids=[item.id])
    return _item_view(item, found[item.id], ItemDetail)  # type: ignore[return-value]


__all__ = [
    "check_source_url",
    "create_source",
    "export_opml",
    "feed_source_ids",
    "get_item",
    "get_source",
    "import_opml",
    "list_items",
    "list_sources",
]
