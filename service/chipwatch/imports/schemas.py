"""API models of the imports domain: import reports, aliases, unresolved names."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field
from sqlmodel import SQLModel

from chipwatch.imports.models import AliasBase, AliasKind, ImportStatus


class ImportPublic(SQLModel):
    """One import: kind, the dataset version (``sha256`` of the bytes, ``url``, ``commit`` where the URL
    names one), row counts, and ``report``: ``skipped`` rows with reasons, ``warnings`` (cells read as
    unknown; the first 200 of ``warnings_total``), ``duplicates``, ``unresolved`` names with the rows
    they hold, ``changed`` facts with their fields, ``retired`` ids. ``dry_run`` is true for a report of
    an import that was rolled back (its ``id`` is then null)."""

    id: int | None = None
    kind: str
    status: ImportStatus
    dry_run: bool = False
    source_id: str | None = None
    url: str | None = None
    file_name: str | None = None
    sha256: str
    commit: str | None = None
    scopes: list[str] = []
    strict: bool = False
    actor: str | None = None
    started_at: datetime
    finished_at: datetime | None = None
    rows_read: int = 0
    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    retired: int = 0
    restored: int = 0
    skipped: int = 0
    waiting: int = 0
    duplicates: int = 0
    error: str | None = None
    report: dict[str, Any] = {}


class ImportUrl(BaseModel):
    """``POST /v1/imports`` with a JSON body: the dataset kind, the URL to fetch, and parser options
    (``hardware`` and ``accelerator_count`` for a benchmark_serving run; a file name to read the MLPerf
    context from when the URL's own path does not give it)."""

    kind: str = Field(max_length=32, description="dataset kind, e.g. epoch-ml-hardware")
    url: str = Field(max_length=2000, description="http(s) URL of the file")
    hardware: str | None = Field(default=None, max_length=200)
    accelerator_count: int | None = Field(default=None, ge=1, le=1_000_000)
    file_name: str | None = Field(default=None, max_length=300)
    commit: str | None = Field(default=None, max_length=64, pattern=r"^[0-9a-f]{7,64}$")


class AliasCreate(AliasBase):
    """A new alias: ``alias`` (a name as datasets write it) names the chip, vendor or model ``target_id``."""

    model_config = {"extra": "forbid"}  # type: ignore[assignment]


class AliasUpdate(BaseModel):
    """Fields of an alias to change."""

    model_config = {"extra": "forbid"}

    alias: str | None = Field(default=None, max_length=200)
    target_id: str | None = Field(default=None, max_length=64)
    note: str | None = None


class AliasPublic(AliasBase):
    """An alias with its id, comparable ``tokens``, origin (``seed`` or ``api``) and times."""

    id: str
    tokens: str
    origin: str
    created_at: datetime
    updated_at: datetime


class AliasChange(BaseModel):
    """An alias after a change, and the waiting rows it let through: ``applied`` (rows that became
    facts), ``still_waiting`` (rows other names still hold)."""

    alias: AliasPublic
    applied: int = 0
    still_waiting: int = 0


class UnresolvedName(BaseModel):
    """A name that maps to no id: its kind, why, the datasets it came from and the rows it holds."""

    name: str
    kind: AliasKind
    reason: str
    datasets: list[str]
    rows_waiting: int
    example_row_keys: list[str]
