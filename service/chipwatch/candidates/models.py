"""Tables of candidate facts: one row per fact proposed from news items, and the items that carry it
(their API models are in :mod:`chipwatch.candidates.schemas`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal, get_args

from sqlalchemy import JSON, Float, Index, String, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from chipwatch.kit.time import utcnow
from chipwatch.types import UTCDateTime

CandidateStatus = Literal["pending", "accepted", "rejected"]
CANDIDATE_STATUSES: tuple[CandidateStatus, ...] = get_args(CandidateStatus)


class Candidate(SQLModel, table=True):
    """A fact read from news items, waiting for an analyst (``pending``), made a fact (``accepted``) or
    turned down for good (``rejected``: the same fact read again joins this row and stays rejected).

    ``fact_key`` identifies the fact whatever item it was read from (see ``candidates.keys``), so one
    fact is one row however many items or sources carry it. ``fact`` holds the proposed fields (the
    shape of ``candidates.extract.extract`` for ``kind``). ``verification`` is the level the carrying
    sources' trust allows and ``independent_sources`` how many distinct sources other than the subject's
    own carried it. ``corroborates_*`` names the knowledge-base fact it matches when it was proposed;
    ``fact_kind``/``fact_id`` the fact accepting it created or updated.
    """

    __tablename__ = "candidates"
    __table_args__ = (
        UniqueConstraint("kind", "fact_key", name="uq_candidates_kind_fact_key"),
        Index("ix_candidates_status_kind", "status", "kind", "id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    kind: str = Field(max_length=16, description="funding | acquisition | deployment | benchmark | launch")
    fact_key: str = Field(max_length=64, description="SHA-256 of the fact's identity")
    status: CandidateStatus = Field(default="pending", sa_type=String(16))
    fact: dict[str, Any] = Field(default_factory=dict, sa_type=JSON)
    confidence: float = Field(default=0.0, sa_type=Float)
    verification: str = Field(default="vendor_reported", max_length=20)
    independent_sources: int = 0
    corroborates_kind: str | None = Field(default=None, max_length=32)
    corroborates_id: str | None = Field(default=None, max_length=64)
    fact_kind: str | None = Field(default=None, max_length=32, description="knowledge-base kind written")
    fact_id: str | None = Field(default=None, max_length=64, description="knowledge-base fact written")
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)
    updated_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)
    decided_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    decided_by: str | None = Field(default=None, max_length=64)
    note: str | None = Field(default=None, sa_type=Text)


class CandidateItem(SQLModel, table=True):
    """One item that carries a candidate: the words the fact was read from and how far its source is
    independent of the fact's subject."""

    __tablename__ = "candidate_items"
    __table_args__ = (UniqueConstraint("candidate_id", "item_id", name="uq_candidate_items_item"),)

    id: int | None = Field(default=None, primary_key=True)
    candidate_id: int = Field(foreign_key="candidates.id", index=True)
    item_id: int = Field(foreign_key="items.id", index=True)
    source_id: str = Field(max_length=64)
    trust: str = Field(max_length=12)
    independent: bool = Field(description="the source is neither a vendor's feed nor the subject's own")
    part: str = Field(max_length=8, description="title | summary")
    span_start: int
    span_end: int
    quote: str = Field(sa_type=Text, description="the words the fact was read from")
    confidence: float = Field(default=0.0, sa_type=Float)
    published_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    added_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)
