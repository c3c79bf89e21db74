"""Watch signals: definition, state, history and evidence rows."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import JSON, Index, String, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from chipwatch.kit.time import utcnow
from chipwatch.types import UTCDateTime


class Signal(SQLModel, table=True):
    """A watch question, its machine-checkable conditions and its current state."""

    __tablename__ = "signals"

    id: str = Field(primary_key=True, max_length=64)
    question: str = Field(sa_type=Text)
    description: str | None = Field(default=None, sa_type=Text)
    opened_on: date
    deadline: date | None = None
    on_deadline: str = Field(default="no", max_length=10)
    review: str = Field(default="auto", max_length=10)
    require_fact: bool = Field(
        default=False, description="item matches are evidence only; a knowledge-base fact decides"
    )
    subjects: list[str] = Field(default_factory=list, sa_type=JSON)
    tags: list[str] = Field(default_factory=list, sa_type=JSON)
    yes_when: list[dict[str, Any]] = Field(default_factory=list, sa_type=JSON)
    no_when: list[dict[str, Any]] = Field(default_factory=list, sa_type=JSON)
    status: str = Field(default="open", max_length=16, index=True)
    outcome: str | None = Field(default=None, max_length=10)
    version: int = 0
    resolved_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    known_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    deadline_warned: bool = False
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)
    updated_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)


class SignalHistory(SQLModel, table=True):
    """One transition of a signal: from, to, cause (``rule:<n>`` | ``deadline`` | ``manual``)."""

    __tablename__ = "signal_history"

    id: int | None = Field(default=None, primary_key=True)
    signal_id: str = Field(foreign_key="signals.id", index=True, max_length=64)
    version: int
    from_status: str = Field(max_length=16)
    to_status: str = Field(max_length=16)
    from_outcome: str | None = Field(default=None, max_length=10)
    to_outcome: str | None = Field(default=None, max_length=10)
    cause: str = Field(max_length=32)
    note: str | None = Field(default=None, sa_type=Text)
    evidence_ids: list[int] = Field(default_factory=list, sa_type=JSON)
    known_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)


class Evidence(SQLModel, table=True):
    """An item or fact that satisfied one of a signal's conditions."""

    __tablename__ = "signal_evidence"
    __table_args__ = (
        UniqueConstraint("signal_id", "ref_kind", "ref_id", "side", "condition_index"),
        Index("ix_evidence_signal", "signal_id", "id"),
        # One story is one piece of evidence: a second item with the same link or the same distinctive
        # title (another source carrying the article) joins the row's sources instead of adding a row.
        Index("ux_evidence_story_link", "signal_id", "side", "condition_index", "story_link", unique=True),
        Index("ux_evidence_story_title", "signal_id", "side", "condition_index", "story_title", unique=True),
    )

    id: int | None = Field(default=None, primary_key=True)
    signal_id: str = Field(foreign_key="signals.id", max_length=64)
    ref_kind: str = Field(max_length=16, description="item | result | deployment")
    ref_id: str = Field(max_length=64)
    side: str = Field(max_length=3, description="yes | no")
    condition_index: int
    reason: str | None = Field(default=None, sa_type=Text)
    trust: str | None = Field(default=None, sa_type=String(20))
    source_id: str | None = Field(default=None, max_length=64)
    title: str | None = Field(default=None, sa_type=Text)
    url: str | None = Field(default=None, max_length=2000)
    published_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    recorded_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)
    story_link: str | None = Field(default=None, max_length=64, description="SHA-256 of the normalised link")
    story_title: str | None = Field(
        default=None, max_length=64, description="SHA-256 of the folded title, when distinctive enough"
    )
    sources: list[dict[str, Any]] = Field(
        default_factory=list,
        sa_type=JSON,
        description=(
            "every source that carried the story: source_id, item_id, title, url, trust, published_at"
        ),
    )
