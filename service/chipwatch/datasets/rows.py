"""Reading one row's cells with warnings, collecting a file's records, and folding duplicate rows.

A parser reads each row through :class:`Cells`: an unreadable cell becomes None plus a warning naming
the column as the file spells it, and a missing required value raises :class:`RowRejected`, which the
:class:`Collector` records as the row's error. Nothing here raises for a bad row.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Generic, Literal

import orjson

from chipwatch.datasets import values
from chipwatch.datasets.records import (
    BOOKKEEPING_FIELDS,
    Duplicate,
    ParseResult,
    PartialDate,
    R,
    Record,
    RowIssue,
    fact_fields,
    to_plain,
)

OnConflict = Literal["error", "digest"]

_EXACT_INTEGER = 2**53


class RowRejected(Exception):
    """The row cannot become a record; the message is the reason reported with its row number."""


@dataclass(slots=True)
class Cells:
    """One row's raw values by canonical column name, with the file's own header for messages.

    ``labels`` maps a canonical name to the header the file used; a name the file lacks reads as blank.
    """

    values: Mapping[str, Any]
    row: int
    line: int | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    warnings: list[RowIssue] = field(default_factory=list)

    def raw(self, name: str) -> Any:
        """The value as the file holds it, None when the column is absent."""
        return self.values.get(name)

    def _warn(self, name: str, exc: values.CellError) -> None:
        label = self.labels.get(name, name)
        self.warnings.append(RowIssue(self.row, f"{label}: {exc}; read as unknown", self.line))

    def _read(self, name: str, reader: Callable[[Any], Any]) -> Any:
        value = self.values.get(name)
        if not value and value != 0:  # blank cells are the majority in these datasets
            return None
        try:
            return reader(value)
        except values.CellError as exc:
            self._warn(name, exc)
            return None

    def text(self, name: str) -> str | None:
        """Stripped text, None when blank."""
        value = self.values.get(name)
        if value.__class__ is str:  # the common case of every CSV cell, kept off the general path
            return value.strip() or None
        if value is None:  # an absent JSON field, as common in JSON datasets
            return None
        return values.text(value)

    def required(self, name: str) -> str:
        """Stripped text that must be there; raises RowRejected naming the column when blank."""
        result = values.text(self.values.get(name))
        if result is None:
            raise RowRejected(f"no {self.labels.get(name, name)}")
        return result

    def number(self, name: str, *, minimum: float | None = 0.0) -> float | None:
        """A finite number or None (blank or unreadable, the latter warned)."""
        value = self.values.get(name)
        if not value and value != 0:
            return None
        # Fast path for the common cell, plain decimal text or a JSON number in range; anything else
        # (blank words, thousands separators, inf, below the minimum) takes values.number's full path.
        cls = value.__class__
        if cls is str or cls is float or cls is int:
            try:
                result = float(value)
            except (ValueError, OverflowError):
                pass
            else:
                if result - result == 0.0 and (minimum is None or result >= minimum):
                    return result
        try:
            return values.number(value, minimum=minimum)
        except values.CellError as exc:
            self._warn(name, exc)
            return None

    def integer(self, name: str) -> int | None:
        """A whole non-negative number or None (blank or unreadable, the latter warned)."""
        value = self.values.get(name)
        if value.__class__ is str or value.__class__ is int:
            try:
                result = int(value)
            except ValueError:
                pass
            else:
                # Within a float's exact integers, where values.integer (through float) gives the same.
                if 0 <= result <= _EXACT_INTEGER:
                    return result
        return self._read(name, values.integer)

    def partial_date(self, name: str) -> PartialDate | None:
        """A date with its precision or None (blank or unreadable, the latter warned)."""
        return self._read(name, values.partial_date)

    def day(self, name: str) -> date | None:
        """A full date or None (blank, unreadable or less precise than a day, the latter warned)."""
        return self._read(name, values.day)

    def timestamp(self, name: str) -> datetime | None:
        """An aware datetime or None (blank or unreadable, the latter warned)."""
        return self._read(name, values.timestamp)

    def byte_size(self, name: str) -> int | None:
        """Bytes or None (blank or unreadable, the latter warned)."""
        return self._read(name, values.byte_size)

    def flag(self, name: str) -> bool | None:
        """True, False or None (blank, undecided or unreadable, the latter warned)."""
        return self._read(name, values.flag)

    def choice(self, name: str, mapping: Mapping[str, str]) -> str | None:
        """The vocabulary word ``mapping`` gives for the cell's casefolded text; None when blank or
        not in ``mapping`` (warned: an unknown status is unknown, not the nearest known one)."""
        raw = self.text(name)
        if raw is None:
            return None
        result = mapping.get(raw.casefold())
        if result is None:
            label = self.labels.get(name, name)
            self.warnings.append(RowIssue(self.row, f"{label}: {raw[:40]!r} is not a known value", self.line))
        return result

    def links(self, name: str) -> tuple[str, ...]:
        """Every URL in the cell."""
        value = self.values.get(name)
        return values.links(value) if value else ()


def content_digest(record: Record) -> str:
    """Hex SHA-256 of the record's stated content (:func:`fact_fields`), independent of its position."""
    encoded = orjson.dumps(fact_fields(record), option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(encoded).hexdigest()


def _content_digests(records: list[R]) -> dict[int, str]:
    """:func:`content_digest` of each of ``records`` by ``id(record)``: their plain forms made in one
    pass (one orjson round trip for them all instead of one per record), the digests the same."""
    plains = to_plain(records)
    out: dict[int, str] = {}
    for record, plain in zip(records, plains, strict=True):
        content = {name: value for name, value in plain.items() if name not in BOOKKEEPING_FIELDS}
        out[id(record)] = hashlib.sha256(orjson.dumps(content, option=orjson.OPT_SORT_KEYS)).hexdigest()
    return out


@dataclass(slots=True)
class Collector(Generic[R]):
    """Gathers one file's records, errors and warnings, and folds duplicates into a ParseResult.

    ``on_conflict`` says what a second row with an existing key but different content is: ``error``
    (reported and skipped, the first row stands) or ``digest`` (both are kept, every row sharing that
    key gets ``"<key> #<first 8 hex digits of its content digest>"``; for datasets that publish
    anonymous rows under one shared name and give them no other identity).
    """

    kind: str
    on_conflict: OnConflict = "error"
    records: list[R] = field(default_factory=list)
    errors: list[RowIssue] = field(default_factory=list)
    warnings: list[RowIssue] = field(default_factory=list)
    rows_read: int = 0

    def add(self, cells: Cells, build: Callable[[Cells], R]) -> None:
        """Build a record from ``cells``; a RowRejected becomes the row's error, warnings are kept."""
        self.rows_read += 1
        try:
            record = build(cells)
        except RowRejected as exc:
            self.errors.append(RowIssue(cells.row, str(exc), cells.line))
            return
        self.warnings.extend(cells.warnings)
        self.records.append(record)

    def reject(self, row: int, reason: str, line: int | None = None) -> None:
        """Count a row that could not even be read into cells, with its reason."""
        self.rows_read += 1
        self.errors.append(RowIssue(row, reason, line))

    def result(self) -> ParseResult[R]:
        """The ParseResult: duplicates folded, conflicting keys handled by ``on_conflict``."""
        records, duplicates, conflicts = _fold(self.records, self.on_conflict)
        errors = sorted([*self.errors, *conflicts], key=lambda issue: issue.row)
        return ParseResult(
            kind=self.kind,
            records=tuple(records),
            errors=tuple(errors),
            warnings=tuple(self.warnings),
            duplicates=tuple(duplicates),
            rows_read=self.rows_read,
        )


def _fold(records: list[R], on_conflict: OnConflict) -> tuple[list[R], list[Duplicate], list[RowIssue]]:
    """Drop exact repeats of a key (reported), then resolve keys still shared by different rows.

    Content digests are computed only for rows whose key occurs more than once.
    """
    counts: dict[str, int] = {}
    for record in records:
        counts[record.row_key] = counts.get(record.row_key, 0) + 1
    if all(count == 1 for count in counts.values()):
        return list(records), [], []
    first: dict[tuple[str, str], R] = {}
    kept: list[tuple[R, str]] = []
    duplicates: list[Duplicate] = []
    digests = _content_digests([record for record in records if counts[record.row_key] > 1])
    for record in records:
        digest = digests[id(record)] if counts[record.row_key] > 1 else ""
        seen = first.get((record.row_key, digest))
        if seen is not None:
            duplicates.append(Duplicate(record.row, record.row_key, seen.row))
            continue
        first[(record.row_key, digest)] = record
        kept.append((record, digest))
    distinct: dict[str, int] = {}
    for record, _digest in kept:
        distinct[record.row_key] = distinct.get(record.row_key, 0) + 1
    out, conflicts = _resolve_conflicts(kept, distinct, on_conflict)
    return out, duplicates, conflicts


def _resolve_conflicts(
    kept: list[tuple[R, str]], distinct: dict[str, int], on_conflict: OnConflict
) -> tuple[list[R], list[RowIssue]]:
    out: list[R] = []
    conflicts: list[RowIssue] = []
    first_row: dict[str, int] = {}
    for record, digest in kept:
        if distinct[record.row_key] == 1:
            out.append(record)
        elif on_conflict == "digest":
            # In place: the record is this parse's own, and dataclasses.replace copies every field.
            record.row_key = f"{record.row_key} #{digest[:8]}"
            out.append(record)
        elif record.row_key in first_row:
            reason = f"key {record.row_key!r} repeats row {first_row[record.row_key]} with other values"
            conflicts.append(RowIssue(record.row, reason, record.line))
        else:
            first_row[record.row_key] = record.row
            out.append(record)
    return out, conflicts
