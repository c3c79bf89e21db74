"""API shapes of signals (documented in OpenAPI; the hot board is served from cached bytes)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from chipwatch.signals.definition import OnDeadline, Review
from chipwatch.vocab.status import Outcome, Side, Status, WatchHealth


class SignalSummary(BaseModel):
    id: str
    question: str
    status: Status
    outcome: Outcome | None
    version: int
    review: Review
    opened_on: str
    deadline: str | None
    on_deadline: OnDeadline
    resolved_at: str | None
    known_at: str | None
    subjects: list[str]
    watch_health: WatchHealth


class EvidencePublic(BaseModel):
    id: int
    ref_kind: str
    ref_id: str
    side: Side
    condition_index: int
    reason: str | None
    trust: str | None
    source_id: str | None
    title: str | None
    url: str | None
    published_at: str | None
    recorded_at: str


class SignalDetail(SignalSummary):
    description: str | None
    tags: list[str]
    yes_when: list[dict[str, Any]]
    no_when: list[dict[str, Any]]
    watched_sources: list[str]
    evidence: list[EvidencePublic]


class HistoryEntry(BaseModel):
    id: int
    version: int
    from_status: Status
    to_status: Status
    from_outcome: Outcome | None
    to_outcome: Outcome | None
    cause: str
    note: str | None
    evidence_ids: list[int]
    known_at: str | None
    at: str


class SignalPage(BaseModel):
    items: list[SignalSummary]
    next_cursor: str | None


class HistoryPage(BaseModel):
    items: list[HistoryEntry]
    next_cursor: str | None


class ResolveIn(BaseModel):
    """An analyst's resolution: the outcome and why."""

    model_config = ConfigDict(extra="forbid")

    outcome: Outcome
    note: str | None = Field(default=None, max_length=4000, description="why; kept in the history row")


class NoteIn(BaseModel):
    """An analyst's reject or reopen: why."""

    model_config = ConfigDict(extra="forbid")

    note: str | None = Field(default=None, max_length=4000, description="why; kept in the history row")
