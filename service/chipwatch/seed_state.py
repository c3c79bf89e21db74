"""What the last seed load wrote, row by row, so that a later load tells a seed file's change from an edit.

A seed load applies a seeded row only where its seed entry changed since the last load. A row changed
since then by anything else (an analyst through the API, an import, an accepted candidate) keeps that
change; when the seed entry changed too, the load reports a conflict (in its summary and, for a
knowledge-base fact, in the fact's history) and still keeps the edit. An analyst who wants the seed's
value sets it through the API; the row then equals its seed entry and follows the seed file again.

Per row the ``seed_digests`` table keeps two SHA-256 digests of canonical JSON of the seeded columns:
``seed_sha256`` of the entry as last loaded, and ``row_sha256`` of the row as that load left it, read
back from the database, so each comparison is between values from the same place (YAML with YAML,
database with database). An empty ``row_sha256`` means "edited since, kept".
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

import sqlalchemy as sa
from pydantic_core import to_jsonable_python
from sqlmodel import Field, Session, SQLModel

from chipwatch.kit.time import utcnow
from chipwatch.knowledge.models import FactChange
from chipwatch.types import UTCDateTime

Outcome = Literal["insert", "unchanged", "update", "keep_edit", "conflict"]
EDITED = ""
"""``row_sha256`` of a row whose edit a load kept: it matches no digest, so the row counts as edited
until it equals its seed entry again."""


class SeedDigest(SQLModel, table=True):
    """The seed entry and the row as the last seed load of ``kind`` left them (SHA-256, hex)."""

    __tablename__ = "seed_digests"

    kind: str = Field(primary_key=True, max_length=32, description="seed kind, e.g. results, signals")
    row_id: str = Field(primary_key=True, max_length=200)
    seed_sha256: str = Field(max_length=64)
    row_sha256: str = Field(max_length=64, description="empty: an edit was kept over a seed change")
    loaded_at: datetime = Field(default_factory=utcnow, sa_type=UTCDateTime)


def values_digest(values: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of ``values`` as canonical JSON: keys sorted at every level, dates as ISO text."""
    text = json.dumps(
        to_jsonable_python(dict(values)), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _shown(value: Any) -> str:
    return json.dumps(to_jsonable_python(value), ensure_ascii=False)


@dataclass(frozen=True)
class SeedConflict:
    """A row both its seed entry and an edit changed since the last load; the edit was kept.

    ``fields`` maps each differing column to ``(kept value, the seed entry's value)``.
    """

    kind: str
    row_id: str
    fields: dict[str, tuple[Any, Any]]

    def __str__(self) -> str:
        parts = [f"{name} kept {_shown(v[0])} (seed says {_shown(v[1])})" for name, v in self.fields.items()]
        return f"{self.kind} {self.row_id}: " + "; ".join(parts)


@dataclass
class KindReport:
    """What a load did to one kind: ids inserted and updated, rows already equal, ids whose edits were
    kept while their seed entry stayed the same, and conflicts (seed entry and row both changed)."""

    inserted: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: int = 0
    kept: list[str] = field(default_factory=list)
    conflicts: list[SeedConflict] = field(default_factory=list)


@dataclass
class SeedReport:
    """The outcome of a seed load: the files read and, per kind in load order, what changed."""

    files: list[str] = field(default_factory=list)
    kinds: dict[str, KindReport] = field(default_factory=dict)

    def counts(self) -> dict[str, dict[str, int]]:
        """``{kind: {"inserted": n, "updated": n, "unchanged": n}}`` for every kind."""
        return {
            kind: {"inserted": len(r.inserted), "updated": len(r.updated), "unchanged": r.unchanged}
            for kind, r in self.kinds.items()
        }

    @property
    def changed(self) -> bool:
        """True when the load inserted or updated at least one row."""
        return any(r.inserted or r.updated for r in self.kinds.values())

    @property
    def conflicts(self) -> list[SeedConflict]:
        """Every conflict of the load, kinds in load order."""
        return [c for r in self.kinds.values() for c in r.conflicts]

    def touched(self, kind: str) -> list[str]:
        """Ids of ``kind`` inserted or updated by this load (what signal evaluation should look at)."""
        report = self.kinds.get(kind)
        return [*report.inserted, *report.updated] if report else []

    def __str__(self) -> str:
        totals = {
            key: sum(c[key] for c in self.counts().values()) for key in ("inserted", "updated", "unchanged")
        }
        text = (
            f"{totals['inserted']} inserted, {totals['updated']} updated, {totals['unchanged']} unchanged"
        )
        kept = sum(len(r.kept) for r in self.kinds.values())
        if kept:
            text += f", {kept} edited since seeded (kept)"
        if self.conflicts:
            text += f", {len(self.conflicts)} conflicting with an edit (edit kept)"
        return f"{text} from {len(self.files)} files"

    def summary(self) -> str:
        """One line per kind, e.g. ``results: 17 inserted, 0 updated, 0 unchanged``, then one line per
        conflict."""
        lines = []
        for kind, r in self.kinds.items():
            line = f"{kind}: {len(r.inserted)} inserted, {len(r.updated)} updated, {r.unchanged} unchanged"
            if r.kept:
                line += f", {len(r.kept)} edited since seeded (kept)"
            if r.conflicts:
                line += f", {len(r.conflicts)} conflicts (edit kept)"
            lines.append(line)
        return "\n".join([*lines, *(f"conflict: {c}" for c in self.conflicts)])


class SeedLedger:
    """The digests of one kind's seeded rows: what the last load left, and what this load leaves.

    ``edited_ids`` are rows that have history of a change other than a seed's (API, import, candidate):
    for a row seeded before digests were kept, the only sign of an edit.
    """

    def __init__(self, session: Session, kind: str, *, fact_kind: str | None) -> None:
        self.kind = kind
        self.stored = {
            d.row_id: d for d in session.scalars(sa.select(SeedDigest).where(SeedDigest.kind == kind))
        }
        self.edited_ids: set[str] = set()
        if fact_kind is not None:
            self.edited_ids = set(
                session.scalars(
                    sa.select(FactChange.fact_id)
                    .where(FactChange.kind == fact_kind, FactChange.cause != "seed")
                    .distinct()
                )
            )
        self._written: dict[str, str] = {}  # row id -> seed digest; row digest read back at save()
        self._kept: dict[str, str] = {}  # row id -> seed digest of a conflict; row stays EDITED

    def decide(self, row_id: str, seeded: Mapping[str, Any], row: Any) -> tuple[Outcome, dict[str, tuple]]:
        """What to do with the row ``row_id`` (None: not in the database) given its seed entry's
        ``seeded`` column values; returns the outcome and ``{column: (row value, seed value)}`` of the
        columns that differ."""
        seed_sha = values_digest(seeded)
        if row is None:
            self._written[row_id] = seed_sha
            return "insert", {}
        differs = {c: (getattr(row, c), v) for c, v in seeded.items() if getattr(row, c) != v}
        stored = self.stored.get(row_id)
        if not differs:
            if stored is None or stored.seed_sha256 != seed_sha or stored.row_sha256 == EDITED:
                self._written[row_id] = seed_sha
            return "unchanged", {}
        if stored is None:
            edited = row_id in self.edited_ids
        elif stored.seed_sha256 == seed_sha:
            return "keep_edit", differs
        else:
            edited = stored.row_sha256 != values_digest({c: getattr(row, c) for c in seeded})
        if edited:
            self._kept[row_id] = seed_sha
            return "conflict", differs
        self._written[row_id] = seed_sha
        return "update", differs

    def save(self, session: Session, model: type[SQLModel], columns: tuple[str, ...]) -> None:
        """Store this load's digests (after the rows were flushed): rows written or confirmed get the
        digest of the row as read back from the database; rows whose edit was kept get ``EDITED``."""
        now = utcnow()
        digests = {row_id: (seed_sha, EDITED) for row_id, seed_sha in self._kept.items()}
        if self._written:
            id_column = model.id  # type: ignore[attr-defined]
            stmt = sa.select(model).where(id_column.in_(list(self._written)))
            for row in session.scalars(stmt.execution_options(populate_existing=True)):
                row_sha = values_digest({c: getattr(row, c) for c in columns})
                digests[row.id] = (self._written[row.id], row_sha)  # type: ignore[attr-defined]
        for row_id, (seed_sha, row_sha) in digests.items():
            digest = self.stored.get(row_id) or SeedDigest(kind=self.kind, row_id=row_id, seed_sha256="",
                                                           row_sha256="")
            digest.seed_sha256, digest.row_sha256, digest.loaded_at = seed_sha, row_sha, now
            session.add(digest)
        session.flush()
