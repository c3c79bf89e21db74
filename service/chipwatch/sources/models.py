"""Tables: sources (feeds, pages, reports, seed articles), their fetched items and entity mentions.

The API models are in :mod:`chipwatch.sources.schemas`."""

from __future__ import annotations

from datetime import datetime
from typing import Literal, get_args

from sqlalchemy import Index, String, Text, UniqueConstraint, event, inspect, select, update
from sqlmodel import Field, SQLModel

from chipwatch.kit.time import utcnow
from chipwatch.text.search import fold_for_search
from chipwatch.types import UTCDateTime
from chipwatch.vocab.trust import Trust

SourceKind = Literal[
    "rss", "atom", "rdf", "json", "unknown", "article", "report", "page",
    # dataset files, polled like feeds and imported (chipwatch.datasets.kinds lists their parsers)
    "epoch-ml-hardware", "epoch-gpu-clusters", "epoch-funding-rounds", "mlperf-inference-summary",
    "mlperf-system", "mlperf-log-summary", "inferencex-evals", "benchmark-serving",
]
FEED_KINDS = ("rss", "atom", "rdf", "json", "unknown")
DatasetSourceKind = Literal[
    "epoch-ml-hardware", "epoch-gpu-clusters", "epoch-funding-rounds", "mlperf-inference-summary",
    "mlperf-system", "mlperf-log-summary", "inferencex-evals", "benchmark-serving",
]
DATASET_SOURCE_KINDS: tuple[str, ...] = get_args(DatasetSourceKind)


def _ts(**kw):
    return Field(sa_type=UTCDateTime, **kw)


class SourceBase(SQLModel):
    name: str = Field(max_length=200)
    url: str | None = Field(default=None, max_length=2000)
    kind: SourceKind = Field(default="unknown", sa_type=String(32), description="detected for feeds")
    trust: Trust = Field(default="press", sa_type=String(12))
    language: str | None = Field(default=None, max_length=8)
    timezone: str | None = Field(
        default=None,
        max_length=64,
        description="IANA zone of the source (Asia/Shanghai): reads dates written without a zone or with an "
        "ambiguous abbreviation (CST)",
    )
    publisher_id: str | None = Field(default=None, max_length=64, description="vendor id, if any")
    check_interval_s: int | None = Field(default=None, description="fixed interval; null = adaptive")
    enabled: bool = True
    notes: str | None = Field(default=None, sa_type=Text)


class Source(SourceBase, table=True):
    __tablename__ = "sources"
    __table_args__ = (Index("ix_sources_due", "enabled", "next_check_at"),)

    id: str = Field(primary_key=True, max_length=64)
    created_at: datetime = _ts(default_factory=utcnow)
    last_checked_at: datetime | None = _ts(default=None)
    last_success_at: datetime | None = _ts(default=None)
    last_status: str | None = Field(default=None, max_length=32, description="ok | not_modified | error")
    last_http_status: int | None = None
    last_error: str | None = Field(default=None, sa_type=Text)
    consecutive_failures: int = 0
    next_check_at: datetime | None = _ts(default=None)
    etag: str | None = Field(default=None, max_length=512)
    last_modified: str | None = Field(default=None, max_length=128)
    effective_interval_s: int | None = None
    interval_reason: str | None = Field(
        default=None,
        max_length=500,
        description="why the source is checked every effective_interval_s, and next at next_check_at",
    )
    permanent_redirects: int = Field(default=0, description="consecutive checks that saw 301/308 only")
    redirect_target: str | None = Field(default=None, max_length=2000)
    claimed_until: datetime | None = _ts(default=None)
    claimed_by: str | None = Field(default=None, max_length=64)
    removed_at: datetime | None = _ts(
        default=None,
        description="when an analyst removed it (DELETE): no longer checked or listed; its items stay",
    )
    items_count: int = 0
    last_body_sha256: str | None = Field(
        default=None,
        max_length=64,
        description="SHA-256 of the last body that parsed; an identical 200 answer is not parsed again",
    )


class Item(SQLModel, table=True):
    """One feed entry, stored once (dedup by guid, then normalised link, then content hash)."""

    __tablename__ = "items"
    __table_args__ = (
        Index("ix_items_source_guid", "source_id", "guid"),
        Index("ix_items_source_link", "source_id", "link_norm"),
        Index("ix_items_source_hash", "source_id", "content_hash"),
        Index("ix_items_published", "published_at"),
        Index("ix_items_sort", "sort_at", "id"),
        # Ends in id so that a source's newest-first page (sort_at, id) walks this index on PostgreSQL
        # too, where an index does not carry the row id as SQLite's does.
        Index("ix_items_source_sort", "source_id", "sort_at", "id"),
        # What a signal's write transaction reads after its read snapshot: items stored or updated since.
        Index("ix_items_first_seen", "first_seen_at"),
        Index("ix_items_updated", "updated_at"),
    )

    id: int | None = Field(default=None, primary_key=True)
    source_id: str = Field(foreign_key="sources.id", max_length=64)
    guid: str | None = Field(default=None, max_length=1000)
    link: str | None = Field(default=None, max_length=2000)
    link_norm: str | None = Field(default=None, max_length=2000)
    content_hash: str = Field(max_length=64)
    title: str = Field(default="", sa_type=Text)
    summary: str | None = Field(default=None, sa_type=Text)
    content: str | None = Field(default=None, sa_type=Text)
    author: str | None = Field(default=None, max_length=500)
    published_at: datetime | None = _ts(default=None)
    published_is_estimated: bool = False
    published_precision: str | None = Field(
        default=None,
        max_length=8,
        description="second | minute | day | week | month | year: published_at is the start of that period",
    )
    published_reason: str | None = Field(
        default=None, sa_type=Text, description="how the date was read, or why it is unknown"
    )
    first_seen_at: datetime = _ts(default_factory=utcnow)
    updated_at: datetime | None = _ts(default=None)
    sort_at: datetime = _ts(
        default_factory=utcnow,
        description="published_at, or first_seen_at when the feed gave no usable date: the listing order",
    )
    search_title: str = Field(default="", sa_type=Text, description="title folded for search")
    search_summary: str = Field(default="", sa_type=Text, description="summary folded for search")


@event.listens_for(Item, "before_insert")
@event.listens_for(Item, "before_update")
def _set_sort_at(_mapper, _connection, item: Item) -> None:
    # Kept as a column (not an expression) so that newest-first listings and the adaptive interval's
    # "recent items of this source" read an index instead of sorting every item.
    item.sort_at = item.published_at or item.first_seen_at


@event.listens_for(Item, "before_insert")
def _fold_for_search_on_insert(_mapper, _connection, item: Item) -> None:
    # The search index (SQLite FTS5, PostgreSQL pg_trgm) reads these columns: stored folded, so that the
    # database finds "JALAPEÑO" and "120MW" in "Jalapen\u0303o" and "１２０ＭＷ" (chipwatch.text.search).
    item.search_title = fold_for_search(item.title)
    item.search_summary = fold_for_search(item.summary)


@event.listens_for(Item, "before_update")
def _fold_for_search_on_update(_mapper, _connection, item: Item) -> None:
    state = inspect(item)
    if state.attrs.title.history.has_changes():
        item.search_title = fold_for_search(item.title)
    if state.attrs.summary.history.has_changes():
        item.search_summary = fold_for_search(item.summary)


class ItemMention(SQLModel, table=True):
    """An item names a knowledge-base entity (by name or alias)."""

    __tablename__ = "item_mentions"
    __table_args__ = (
        UniqueConstraint("item_id", "entity_id"),
        # items?mentions=X newest first walks this index from its end and stops after one page, for a
        # rare entity and a common one alike: no sort of every item that mentions X.
        Index("ix_mentions_entity_sort", "entity_id", "sort_at", "item_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    item_id: int = Field(foreign_key="items.id", index=True)
    entity_id: str = Field(max_length=64)
    entity_kind: str = Field(max_length=16)
    sort_at: datetime = _ts(
        default=None, description="the item's sort_at, copied so that a mention listing reads one index"
    )


class MentionRelink(SQLModel, table=True):
    """An entity whose names changed after items were linked: the stored items are matched again with
    its current names, a batch at a time (``chipwatch.sources.relink``).

    ``history_id`` is the newest ``fact_history`` row of a name change this relink covers (a later one
    starts it over); ``next_item_id`` is where the pass has got to (items with a larger id are still to
    be read); ``done_at`` is set when the pass reached the newest item.
    """

    __tablename__ = "mention_relinks"

    entity_id: str = Field(primary_key=True, max_length=64)
    history_id: int
    next_item_id: int = 0
    requested_at: datetime = _ts(default_factory=utcnow)
    done_at: datetime | None = _ts(default=None)


@event.listens_for(ItemMention, "before_insert")
def _copy_item_sort_at(_mapper, connection, mention: ItemMention) -> None:
    # The item's value, read when the writer did not give it (link_mentions does).
    if mention.sort_at is None:
        mention.sort_at = connection.scalar(select(Item.sort_at).where(Item.id == mention.item_id))


@event.listens_for(Item, "after_update")
def _follow_sort_at(_mapper, connection, item: Item) -> None:
    # A corrected publication date moves the item in every listing, the mention listings included.
    if inspect(item).attrs.sort_at.history.has_changes():
        connection.execute(
            update(ItemMention).where(ItemMention.item_id == item.id).values(sort_at=item.sort_at)
        )
