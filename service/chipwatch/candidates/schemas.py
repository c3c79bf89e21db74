"""API models of candidate facts (``<Noun>Public`` for reads, ``<Noun><Action>In`` for bodies)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from chipwatch.candidates.models import CandidateStatus
from chipwatch.vocab.slugs import Slug
from chipwatch.vocab.verification import Verification


class CandidateItemPublic(BaseModel):
    """An item that carries the candidate: where it came from and the words the fact was read from."""

    item_id: int
    source_id: str
    trust: str
    independent: bool = Field(description="neither a vendor's feed nor published by the fact's subject")
    title: str | None
    url: str | None
    published_at: str | None
    part: str = Field(description="title | summary: the text the span indexes")
    span: list[int] = Field(description="[start, end) character offsets in that text")
    quote: str = Field(description="the words the fact was read from")
    confidence: float


class CorroborationRef(BaseModel):
    """A knowledge-base fact: its kind (API path segment) and id."""

    kind: str
    id: str


class CandidatePublic(BaseModel):
    """A fact read from news items, with every item that carries it.

    ``fact`` holds the proposed fields (by kind: see ``GET /v1/candidates``); ``corroborates`` the
    knowledge-base fact it matches, if any; ``fact_ref`` the fact accepting it created or updated.
    """

    id: int
    kind: str
    status: CandidateStatus
    fact: dict[str, Any]
    confidence: float = Field(description="0 to 1: the reading's confidence, raised by independent sources")
    verification: Verification = Field(description="what the carrying sources' trust allows")
    independent_sources: int
    corroborates: CorroborationRef | None
    fact_ref: CorroborationRef | None
    items: list[CandidateItemPublic]
    created_at: str
    updated_at: str
    decided_at: str | None
    decided_by: str | None
    note: str | None


class CandidatePage(BaseModel):
    """A page of candidates, newest first."""

    items: list[CandidatePublic]
    next_cursor: str | None = None


class CandidateAcceptIn(BaseModel):
    """Optional edits made while accepting: corrected fields, the new fact's id, the chip a launched
    name is another name of, a verification no higher than the sources allow, a note."""

    model_config = ConfigDict(extra="forbid")

    fact: dict[str, Any] | None = Field(
        default=None, description="fields of the proposed fact to correct (same names as in fact)"
    )
    fact_id: Slug | None = Field(default=None, description="id of the fact to create (default: derived)")
    alias_of: Slug | None = Field(
        default=None, description="launch only: the known chip this name is another name of (adds an alias)"
    )
    verification: Verification | None = Field(
        default=None, description="at most the level the sources allow (422 otherwise)"
    )
    note: str | None = Field(default=None, max_length=2000)


class CandidateRejectIn(BaseModel):
    """Why the candidate is rejected (kept with it)."""

    model_config = ConfigDict(extra="forbid")

    note: str | None = Field(default=None, max_length=2000)
