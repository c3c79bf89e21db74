"""API models of the sources domain: what the source and item endpoints take and answer."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import field_validator
from sqlmodel import Field, SQLModel

from chipwatch.sources.models import DatasetSourceKind
from chipwatch.vocab.slugs import Slug
from chipwatch.vocab.trust import Trust


class SourceCreate(SQLModel):
    """``POST /v1/sources``: a feed to watch. ``id`` defaults to a slug of ``name``."""

    url: str = Field(min_length=1, max_length=2000, description="the feed's http(s) address")
    name: str = Field(min_length=1, max_length=200)
    trust: Trust = "press"
    id: Slug | None = Field(default=None, description="readable slug; derived from name if absent")
    language: str | None = Field(default=None, max_length=8, description="BCP 47 language tag")
    timezone: str | None = Field(
        default=None,
        max_length=64,
        description="IANA time zone of the source (Asia/Shanghai): the zone its dates are read in when they "
        "carry none, and which an ambiguous abbreviation (CST, IST) means",
    )
    publisher_id: Slug | None = Field(default=None, description="vendor id of the publisher")
    check_interval_s: int | None = Field(
        default=None, ge=60, le=7 * 86400, description="fixed interval in seconds; null = adaptive"
    )
    enabled: bool = True
    notes: str | None = Field(default=None, max_length=5000)
    kind: DatasetSourceKind | None = Field(
        default=None,
        description="a dataset kind makes it a dataset source, polled and imported (docs/datasets.md); "
        "absent for a feed, whose kind the first check detects",
    )

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str | None) -> str | None:
        return check_timezone(value)


def check_timezone(value: str | None) -> str | None:
    """``value`` if it is an IANA zone name zoneinfo knows (``Asia/Shanghai``), else ``ValueError``;
    ``None`` stays ``None``."""
    if value is None:
        return None
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ValueError(f"{value!r} is not an IANA time zone name (such as Asia/Shanghai)") from None
    return value


class SourceUpdate(SQLModel):
    """``PATCH /v1/sources/{id}``: the fields to change (absent ones stay). A new ``url`` forgets the
    old one's validators and is checked at once; ``enabled: false`` stops the checks (the source stays
    listed), ``enabled: true`` checks it at once and brings back a removed source; a new
    ``check_interval_s`` (null: adaptive) takes effect from the last check."""

    model_config = {"extra": "forbid"}

    url: str | None = Field(default=None, min_length=1, max_length=2000, description="the feed's address")
    name: str | None = Field(default=None, min_length=1, max_length=200)
    trust: Trust | None = None
    language: str | None = Field(default=None, max_length=8, description="BCP 47 language tag")
    timezone: str | None = Field(default=None, max_length=64, description="IANA zone, e.g. Asia/Shanghai")
    publisher_id: Slug | None = Field(default=None, description="vendor id of the publisher")
    check_interval_s: int | None = Field(
        default=None, ge=60, le=7 * 86400, description="fixed interval in seconds; null = adaptive"
    )
    enabled: bool | None = None
    notes: str | None = Field(default=None, max_length=5000)

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str | None) -> str | None:
        return check_timezone(value)


class CheckOutcomePublic(SQLModel):
    """The outcome of ``POST /v1/sources/{id}/check``."""

    source_id: str
    status: str = Field(description="ok | not_modified | error")
    http_status: int | None = None
    new_items: int
    updated_items: int
    import_id: int | None = Field(
        None,
        description="a dataset source: the import its changed file made (GET /v1/imports/{id}; a refused "
        "one when status is error); null when the file had not changed",
    )
    error: str | None = None
    next_check_at: datetime | None = None


class MentionPublic(SQLModel):
    """An entity an item names."""

    entity_id: str
    entity_kind: str


class ItemPublic(SQLModel):
    """A stored feed item in lists. ``published_at`` is null when the feed gave no date that can be read
    with confidence (``published_is_estimated``; ``published_reason`` says why); ``published_precision``
    says how precise it is (``month``: the first instant of that month); ``sort_at`` (publication or
    first-seen time) orders the list."""

    id: int
    source_id: str
    guid: str | None
    link: str | None
    title: str
    summary: str | None
    author: str | None
    published_at: datetime | None
    published_is_estimated: bool
    published_precision: str | None = None
    published_reason: str | None = None
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
    "SourceUpdate",
    "check_timezone",
]
