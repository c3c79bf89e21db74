"""What a knowledge-base row must satisfy beyond its field types, checked whole: every problem is
reported at once, each naming its field (``chip_ids.1``, ``value_min``), so a client fixes a body in
one round.

The API models already refuse wrong types, negative amounts and over-long text (pydantic), and the
request layer refuses NaN and Infinity (:mod:`chipwatch.kit.json_body`); what is left needs the row as
a whole or the database: nulls in required columns, aliases, ranges whose low end exceeds the high end,
and references to ids that do not exist (or were retracted).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import bindparam, select, union_all
from sqlmodel import Session

from chipwatch.kit.rows import column_rows
from chipwatch.knowledge.models import KB_TABLES, Vendor
from chipwatch.vocab.entities import ENTITY_COLLECTIONS

Problem = tuple[str, str]
"""``(field, message)``."""

MAX_ALIAS_CHARS = 200  # the same bound the matcher applies (signals.rules.MAX_PHRASE_CHARS)
MAX_ALIASES = 200
"""Aliases per entity. Every alias becomes phrases in the mention and signal matchers; the busiest real
entity has a dozen, and thousands made every feed check rebuild its matcher for tens of seconds."""

REFERENCES: dict[str, tuple[str | None, bool]] = {
    "vendor_id": ("vendors", False),
    "owner_id": ("vendors", False),
    "developer_id": ("vendors", False),
    "acquirer_id": ("vendors", False),
    "reported_by": ("vendors", False),
    "witnessed_by": ("vendors", False),
    "reproduced_by": ("vendors", False),
    "operator_id": ("vendors", False),
    "platform": ("chips", False),
    "chip_id": ("chips", False),
    "chip_ids": ("chips", True),
    "baseline_ids": ("chips", True),
    "model_ids": ("models", True),
    "benchmark_id": ("benchmarks", False),
    "subject_ids": (None, True),  # any entity kind
}
"""Columns that name other rows, checked on create and update: column -> (kind, is a list)."""

RANGES: dict[str, tuple[tuple[str, str], ...]] = {
    "results": (("value_min", "value_max"),),
    "claims": (("value_min", "value_max"),),
    "deployments": (("units_min", "units_max"),),
}
"""Per kind, ``(low, high)`` column pairs where low must not exceed high."""

_LABELS = {"vendors": "vendor", "chips": "chip", "models": "model", "benchmarks": "benchmark", None: "entity"}


class Invalid(ValueError):
    """A row was refused; ``problems`` lists every ``(field, message)``."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(f"{field}: {message}" for field, message in problems))
        self.problems = problems


def entity_exists(*, session: Session, kind: str | None, id_: str, retracted: bool = False) -> bool:
    """True when ``id_`` is a row of ``kind`` (any named entity kind when ``kind`` is None) that has not
    been retracted (or, with ``retracted``, whether retracted or not). One indexed lookup of the id and
    its retraction time (every kind at once for None), not an ORM object: list filters check their ids
    on every page read."""
    stmt = _RETRACTED_AT[kind]
    found = [at for (at,) in column_rows(session, stmt, {"id": id_}).all()]
    return any(retracted or at is None for at in found)


def _retracted_at(kinds: Iterable[str]) -> Any:
    parts = [select(KB_TABLES[k].retracted_at).where(KB_TABLES[k].id == bindparam("id")) for k in kinds]
    return parts[0] if len(parts) == 1 else union_all(*parts)


# Built once per kind: statements are immutable, and building one costs about as much as running it.
_RETRACTED_AT: dict[str | None, Any] = {
    None: _retracted_at(ENTITY_COLLECTIONS.values()),
    **{kind: _retracted_at([kind]) for kind in KB_TABLES},
}


def _source_exists(session: Session, source_id: str) -> bool:
    # Followed through the provenance column's foreign key, so the knowledge base names no table of
    # the sources domain (which reads the entity tables for mention matching).
    (fk,) = Vendor.__table__.c.source_id.foreign_keys  # type: ignore[attr-defined]
    return session.execute(select(fk.column).where(fk.column == source_id)).first() is not None


def value_problems(*, kind: str, data: dict[str, Any], merged: dict[str, Any] | None = None) -> list[Problem]:
    """Problems of ``data`` (the fields written) that need no database: a null in a required column,
    an empty, oversize or surplus alias, and, on ``merged`` (the whole row after the write, default
    ``data``), a range whose low end exceeds its high end."""
    table = KB_TABLES[kind]
    problems: list[Problem] = []
    for field, value in data.items():
        column = table.__table__.columns.get(field)  # type: ignore[attr-defined]
        if value is None and column is not None and not column.nullable:
            problems.append((field, "must not be null"))
    aliases = data.get("aliases") or []
    if len(aliases) > MAX_ALIASES:
        problems.append(("aliases", f"at most {MAX_ALIASES} aliases; got {len(aliases)}"))
    for i, alias in enumerate(aliases[: MAX_ALIASES + 1]):
        if not isinstance(alias, str) or not alias.strip() or len(alias) > MAX_ALIAS_CHARS:
            message = f"must be non-empty text of at most {MAX_ALIAS_CHARS} characters"
            problems.append((f"aliases.{i}", message))
    whole = data if merged is None else merged
    for low, high in RANGES.get(kind, ()):
        lo, hi = whole.get(low), whole.get(high)
        if lo is not None and hi is not None and lo > hi:
            field = low if low in data else high
            problems.append((field, f"{low} ({lo:g}) exceeds {high} ({hi:g})"))
    return problems


def _references(data: dict[str, Any]) -> Iterable[tuple[str, str | None, str]]:
    """``(field, kind, id)`` for every reference in ``data``; list elements are named with their index."""
    for column, value in data.items():
        ref = REFERENCES.get(column)
        if ref is None or value is None:
            continue
        kind, is_list = ref
        if is_list:
            for i, ref_id in enumerate(value):
                yield f"{column}.{i}", kind, ref_id
        else:
            yield column, kind, value


def reference_problems(*, session: Session, data: dict[str, Any]) -> list[Problem]:
    """One problem per field of ``data`` naming a row that does not exist or was retracted (sources for
    ``source_id``)."""
    problems: list[Problem] = []
    source_id = data.get("source_id")
    if source_id is not None and not _source_exists(session, source_id):
        problems.append(("source_id", f"no source with id {source_id!r}"))
    for field, kind, ref_id in _references(data):
        if entity_exists(session=session, kind=kind, id_=ref_id):
            continue
        label = _LABELS.get(kind, kind or "entity")
        if entity_exists(session=session, kind=kind, id_=ref_id, retracted=True):
            problems.append((field, f"{label} {ref_id!r} was retracted"))
        else:
            problems.append((field, f"no {label} with id {ref_id!r}"))
    return problems


def field_problems(
    *, session: Session, kind: str, fields: dict[str, Any], row_id: str | None = None
) -> list[Problem]:
    """Every problem of ``fields`` (some fields of a ``kind`` row, as the API models type them) that
    :func:`check_row` would find; ``row_id`` names the row a change applies to, whose stored values then
    complete the checks across fields (a new ``value_min`` against the stored ``value_max``)."""
    row = session.get(KB_TABLES[kind], row_id) if row_id is not None else None
    merged = {**row.model_dump(), **fields} if row is not None else None
    problems = value_problems(kind=kind, data=fields, merged=merged)
    return problems + reference_problems(session=session, data=fields)


def check_row(
    *, session: Session, kind: str, data: dict[str, Any], merged: dict[str, Any] | None = None
) -> None:
    """Raise :class:`Invalid` with every problem of ``data`` (the fields written; ``merged``: the whole
    row after the write, for the checks across fields); nothing when there is none."""
    problems = value_problems(kind=kind, data=data, merged=merged)
    problems += reference_problems(session=session, data=data)
    if problems:
        raise Invalid(problems)


__all__ = [
    "MAX_ALIASES",
    "MAX_ALIAS_CHARS",
    "RANGES",
    "REFERENCES",
    "Invalid",
    "check_row",
    "entity_exists",
    "field_problems",
    "reference_problems",
    "value_problems",
]
