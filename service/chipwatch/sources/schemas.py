"""API models of the sources domain: what the source and item endpoints take and answer."""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Field, SQLModel

from chipwatch.vocab.slugs import Slug
from chipwatch.vocab.trust import Trust


class SourceCreate(SQLModel):
    """``POST /v1/sources``: a feed to watch. ``id`` defaults to a slug of ``name``."""

    url: str = Field(min_length=1, max_length=2000, description="the feed's http(s) address")
    name: str = Field(min_length=1, max_length=200)
    trust: Trust = "press"
    id: Slug | None = Field(default=None, description="readable slug; derived from name if absent")
    language: str | None = Field(default=None, max_length=8, description="BCP 47 language tag")
    publisher_id: Slug | None = Field(default=None, description="vendor id of the publisher")
    check_interval_s: int | None = Field(
        default=None, ge=60, le=7 * 86400, description="fixed interval in seconds; null = adaptive"
    )
    enabled: bool = True
    notes: str | None = Field(default=None, max_length=5000)


class CheckOutcomePublic(SQLModel):
    """The outcome of ``POST /v1/sources/{id}/check``."""

    source_id: str
    status: str = Field(description="ok | not_modified | error")
    http_status: int | None = None
    new_items: int
    updated_items: int
    error: str | None = None
    next_check_at: datetime | None = None


class MentionPublic(SQLModel):
    """An entity an item names."""

    entity_id: str
    entity_kind: str


class ItemPublic(SQLModel):
    """A stored feed item in lists. ``published_at`` is null when the feed gave no usable date
    (``published_is_estimated``); ``sort_at`` (publication or first-seen time) orders the list."""

    id: int
    source_id: str
    guid: str | None
    link: str | None
    title: str
    summary: str | None
    author: str | None
    published_at: datetime | None
    published_is_estimated: bool
    first_seen_at: datetime
    updated_at: datetime | None
    sort_at: datetime
    mentions: list[MentionPublic] = []


class ItemDetail(ItemPublic):
    """One item with its full text."""

    content: str | None = None


class OpmlSkipped(SQLModel):
    url: str
    reason: str


class OpmlImportResult(SQLModel):
    """``POST /v1/sources/opml``: ids of the sources added, and the feeds left out with the reason."""

    created: list[str]
    skipped: list[OpmlSkipped]


__all__ = [
    "CheckOutcomePublic",
    "ItemDetail",
    "ItemPublic",
    "MentionPublic",
    "OpmlImportResult",
    "OpmlSkipped",
    "SourceCreate",
]
