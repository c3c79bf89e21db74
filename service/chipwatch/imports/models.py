"""Tables of the imports domain: imports (one per applied or refused file), aliases (names -> ids), and
rows waiting for an alias (their API models are in :mod:`chipwatch.imports.schemas`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from sqlalchemy import JSON, Index, String, Text, UniqueConstraint, event
from sqlmodel import Field, SQLModel

from chipwatch.datasets.hardware_names import hardware_tokens
from chipwatch.kit.time import utcnow
from chipwatch.types import UTCDateTime

ImportStatus = Literal["applied", "refused"]
AliasKind = Literal["chip", "vendor", "model"]
ALIAS_KINDS: tuple[AliasKind, ...] = ("chip", "vendor", "model")


class Import(SQLModel, table=True):
    """One import of one dataset file: what it was, where it came from, and what it did.

    ``sha256`` is the dataset version (digest of the bytes); ``commit`` the repository commit where the
    URL names one. Counts: ``inserted``, ``updated``, ``unchanged``, ``retired``, ``restored`` facts;
    ``skipped`` bad rows; ``waiting`` rows held until an alias resolves their names; ``duplicates``
    rows folded into an earlier identical row. ``report`` keeps the details (rows with reasons,
    warnings, duplicates, unresolved names, the facts changed). A ``refused`` import wrote nothing else.
    """

    __tablename__ = "imports"

    id: int | None = Field(default=None, primary_key=True)
    kind: str = Field(max_length=32, index=True)
    status: ImportStatus = Field(default="applied", sa_type=String(16))
    source_id: str | None = Field(default=None, foreign_key="sources.id", max_length=64, index=True)
    url: str | None = Field(default=None, max_length=2000)
    file_name: str | None = Field(default=None, max_length=300)
    sha256: str = Field(max_length=64)
    commit: str | None = Field(default=None, max_length=64)
    scopes: list[str] = Field(default_factory=list, sa_type=JSON, description="MLPerf rounds the file holds")
    strict: bool = False
    actor: str | None = Field(default=None, max_length=64)
    started_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)
    finished_at: datetime | None = Field(default=None, sa_type=UTCDateTime)
    rows_read: int = 0
    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    retired: int = 0
    restored: int = 0
    skipped: int = 0
    waiting: int = 0
    duplicates: int = 0
    error: str | None = Field(default=None, sa_type=Text, description="why a refused import was refused")
    report: dict[str, Any] = Field(default_factory=dict, sa_type=JSON)


class AliasBase(SQLModel):
    kind: AliasKind = Field(sa_type=String(16), description="chip | vendor | model")
    alias: str = Field(max_length=200, description="a name as datasets write it")
    target_id: str = Field(max_length=64, description="id of the chip, vendor or model it names")
    note: str | None = Field(default=None, sa_type=Text)


class Alias(AliasBase, table=True):
    """A name -> id entry of the alias table, compared by tokens (see chipwatch.datasets.hardware_names).

    ``tokens`` is the name's comparable form; one alias per kind and token sequence.
    """

    __tablename__ = "aliases"
    __table_args__ = (UniqueConstraint("kind", "tokens", name="uq_aliases_kind_tokens"),)

    id: str = Field(primary_key=True, max_length=64)
    tokens: str = Field(default="", max_length=400)
    origin: str = Field(default="seed", max_length=16, description="seed | api")
    created_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)
    updated_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)


@event.listens_for(Alias, "before_insert")
@event.listens_for(Alias, "before_update")
def _set_tokens(_mapper, _connection, alias: Alias) -> None:
    # A column rather than an expression so that the unique constraint refuses a second alias that
    # compares equal (``MI300X`` and ``mi300x``), whichever path wrote it (API or seed load).
    alias.tokens = " ".join(hardware_tokens(alias.alias))


class WaitingRow(SQLModel, table=True):
    """A dataset row held back because a name in it maps to no id; applied once an alias resolves it.

    ``record`` is the parsed row as JSON; ``names`` the unresolved names: ``[{name, kind, reason}]``.
    """

    __tablename__ = "waiting_rows"
    __table_args__ = (Index("ix_waiting_rows_key", "dataset", "row_key"),)

    id: int | None = Field(default=None, primary_key=True)
    dataset: str = Field(max_length=32)
    dataset_scope: str | None = Field(default=None, max_length=64)
    row_key: str = Field(max_length=400)
    import_id: int = Field(foreign_key="imports.id", index=True)
    dataset_version: str = Field(max_length=64)
    record: dict[str, Any] = Field(default_factory=dict, sa_type=JSON)
    names: list[dict[str, Any]] = Field(default_factory=list, sa_type=JSON)
    since: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)
