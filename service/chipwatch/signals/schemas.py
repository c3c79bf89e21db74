"""API shapes of signals (documented in OpenAPI; the hot board is served from cached bytes).

Named as every domain names its API models: ``<Noun>Public`` for what a read returns, ``<Noun>Page``
for a list answer, ``<Noun><Action>In`` for a request body. A signal definition itself is posted as a
JSON object and validated against ``schema/signal.schema.json`` (``definition.py``), not by a model here.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from chipwatch.kit.pagination import Page
from chipwatch.signals.definition import OnDeadline, Review
from chipwatch.vocab.status import Outcome, Side, Status, WatchHealth


class SignalPublic(BaseModel):
    """A signal on the board: its question, state, deadline and how well its sources are watched."""

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


class EvidenceSource(BaseModel):
    """A source that carried the story an evidence row stands for, with its own copy of it."""

    source_id: str | None
    item_id: int | None
    title: str | None
    url: str | None
    trust: str | None
    published_at: str | None


class EvidencePublic(BaseModel):
    """An item or fact that satisfied one of the signal's conditions. An item's evidence stands for its
    story: ``sources`` lists every source that carried it (the item itself first)."""

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
    sources: list[EvidenceSource] = []


class SignalWithEvidence(SignalPublic):
    """One signal: the board view plus its definition, watched sources and every evidence row."""

    description: str | None
    tags: list[str]
    require_fact: bool
    yes_when: list[dict[str, Any]]
    no_when: list[dict[str, Any]]
    watched_sources: list[str]
    evidence: list[EvidencePublic]


class SignalHistoryPublic(BaseModel):
    """One transition of a signal: from, to, cause, note, deciding evidence and known_at."""

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


SignalPage = Page[SignalPublic]
SignalHistoryPage = Page[SignalHistoryPublic]


class SignalResolveIn(BaseModel):
    """An analyst's resolution: the outcome and why."""

    model_config = ConfigDict(extra="forbid")

    outcome: Outcome
    note: str | None = Field(default=None, max_length=4000, description="why; kept in the history row")


class SignalNoteIn(BaseModel):
    """An analyst's reject or reopen: why."""

    model_config = ConfigDict(extra="forbid")

    note: str | None = Field(default=None, max_length=4000, description="why; kept in the history row")
