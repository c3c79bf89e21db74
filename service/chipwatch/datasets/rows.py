"""Reading one row's cells with warnings, collecting a file's records, and folding duplicate rows.

A parser reads each row through :class:`Cells`, or, for the large formats, through a column plan made
once per file (:data:`Step`, :func:`read_steps`) straight into the row's plain record (a dict of JSON
values, the form :func:`~chipwatch.datasets.records.to_plain` gives a record). Either way an
unreadable cell becomes None plus a warning naming the column as the file spells it, and a missing
required value raises :class:`RowRejected`, which the :class:`Collector` records as the row's error.
Nothing here raises for a bad row.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from operator import attrgetter, itemgetter
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
_US_DATE = values.US_DATE


class RowRejected(Exception):
    """The row cannot become a record; the message is the reason reported with its row number."""


class UnknownWord(values.CellError):
    """A vocabulary cell whose word is not in the vocabulary: warned as it is, without "read as
    unknown" (an unknown status is unknown, not the nearest known one)."""


# ---------------------------------------------------------------- cell converters to plain values
# Each takes the cell as the file holds it (text for CSV, any JSON value, None when absent) and returns
# its plain value, as the Cells method of the same name followed by to_plain would; raises CellError
# for an unreadable cell, which the caller warns about.


def plain_text(value: Any) -> str | None:
    """Stripped text, None when blank (:meth:`Cells.text`)."""
    if value.__class__ is str:
        return value.strip() or None
    if value is None:
        return None
    return values.text(value)


def _quick_number(value: Any, minimum: float | None) -> float | None:
    """The common cell (plain decimal text or a JSON number, finite, at least ``minimum``) as a float;
    None for anything else (blank words, thousands separators, inf, below the minimum), which takes
    values.number's full path."""
    cls = value.__class__
    if cls is str or cls is float or cls is int:
        try:
            result = float(value)
        except (ValueError, OverflowError):
            return None
        if result - result == 0.0 and (minimum is None or result >= minimum):
            return result
    return None


def plain_number(value: Any) -> float | None:
    """A finite non-negative number or None (:meth:`Cells.number`); raises CellError otherwise."""
    if not value and value != 0:
        return None
    result = _quick_number(value, 0.0)
    return values.number(value) if result is None else result


def plain_integer(value: Any) -> int | None:
    """A whole non-negative number or None (:meth:`Cells.integer`); raises CellError otherwise."""
    if value.__class__ is str or value.__class__ is int:
        try:
            result = int(value)
        except ValueError:
            pass
        else:
            if 0 <= result <= _EXACT_INTEGER:
                return result
    if not value and value != 0:
        return None
    return values.integer(value)


def plain_partial_date(value: Any) -> dict[str, str] | None:
    """``{"value": "YYYY-MM-DD", "precision": ...}`` or None (:meth:`Cells.partial_date`)."""
    if not value and value != 0:
        return None
    if value.__class__ is str and (match := _US_DATE.match(value.strip())):
        # Epoch's common cell, read as values.partial_date reads it, without the PartialDate.
        month, day_of_month, year = match.groups()
        found = values.checked_date(int(year), int(month), int(day_of_month), value.strip())
        return {"value": found.isoformat(), "precision": "day"}
    result = values.partial_date(value)
    return None if result is None else {"value": result.value.isoformat(), "precision": result.precision}


def plain_timestamp(value: Any) -> str | None:
    """ISO 8601 text of an aware time, as orjson writes it, or None (:meth:`Cells.timestamp`)."""
    if not value and value != 0:
        return None
    result = values.timestamp(value)
    return None if result is None else orjson.dumps(result).decode()[1:-1]


def plain_flag(value: Any) -> bool | None:
    """True, False or None (:meth:`Cells.flag`); raises CellError for other text."""
    if not value and value != 0:
        return None
    return values.flag(value)


def plain_links(value: Any) -> list[str]:
    """Every URL in the cell (:meth:`Cells.links`)."""
    return list(values.links(value)) if value else []


def plain_choice(mapping: Mapping[str, str]) -> Callable[[Any], str | None]:
    """A converter to the word ``mapping`` gives for the cell's casefolded text (:meth:`Cells.choice`):
    None when blank; raises :class:`UnknownWord` for a word ``mapping`` lacks."""

    def convert(value: Any) -> str | None:
        raw = plain_text(value)
        if raw is None:
            return None
        result = mapping.get(raw.casefold())
        if result is None:
            raise UnknownWord(f"{raw[:40]!r} is not a known value")
        return result

    return convert


Step = tuple[str, "str | None", Any, Callable[..., Any], str]
"""One field of a column plan: ``(field, key, column, convert, label)``. ``convert(cell)`` reads the
cell ``column`` (a CSV column's canonical name or a JSON field); its value is the record's ``field``,
or with a ``key``, the entry ``key`` of the dict ``field`` (kept only when known; the dict is made at
its first step even when every entry is unknown). With ``column`` None, ``convert(get, row, line,
issues)`` reads the row itself (several cells) and appends its own warnings. ``label`` names the column
in a warning."""


def read_steps(
    get: Callable[[str], Any],
    steps: tuple[Step, ...],
    row: int,
    line: int | None,
    issues: list[RowIssue],
    out: dict[str, Any],
) -> dict[str, Any]:
    """Fill ``out`` with the plain value of every step, in order, reading cells with ``get``; an
    unreadable cell is None (or left out of its dict) and a warning in ``issues``. Returns ``out``."""
    text = plain_text
    for name, key, column, convert, label in steps:
        if column is None:
            out[name] = convert(get, row, line, issues)
            continue
        raw = get(column)
        if raw is None or raw == "":
            value = None
        elif convert is text and raw.__class__ is str:  # the most common cell, without a call
            value = raw.strip() or None
        else:
            try:
                value = convert(raw)
            except values.CellError as exc:
                issues.append(RowIssue(row, cell_warning(label, exc), line))
                value = None
        if key is None:
            out[name] = value
        else:
            group = out.get(name)
            if group is None:
                group = out[name] = {}
            if value is not None:
                group[key] = value
    return out


FieldSpec = tuple[str, "str | None", "str | None", Any]
"""One field of a CSV record: ``(field, key, column, convert)``, as a :data:`Step` without its label;
with ``column`` None, ``convert(labels, indexes)`` makes the field's own reader, ``read(cells, row,
line, issues)`` of the row's cell list (absent columns have no index)."""


def named_rows(
    fill: Callable[[list[str], int, int | None, list[RowIssue]], dict[str, Any]],
    indexes: Mapping[str, int],
    labels: Mapping[str, str],
) -> Callable[[list[str], int, int | None, list[RowIssue]], dict[str, Any]]:
    """The row builder of an Epoch CSV whose rows are keyed by their ``name`` column: a blank name
    rejects the row (:class:`RowRejected`, "no <column label>"); otherwise ``fill``'s dict with ``row``,
    ``row_key`` (the name), ``line`` and ``name`` set."""
    name_at, no_name = indexes["name"], f"no {labels['name']}"

    def build(cells: list[str], row: int, line: int | None, issues: list[RowIssue]) -> dict[str, Any]:
        name = cells[name_at].strip()
        if not name:
            raise RowRejected(no_name)
        out = fill(cells, row, line, issues)
        out["row"], out["row_key"], out["line"], out["name"] = row, name, line, name
        return out

    return build


def csv_plan(
    head: tuple[str, ...],
    fields: tuple[FieldSpec, ...],
    indexes: Mapping[str, int],
    labels: Mapping[str, str],
) -> Callable[[list[str], int, int | None, list[RowIssue]], dict[str, Any]]:
    """The plain-record reader of a CSV file whose canonical columns sit at ``indexes``, made once per
    file: ``fill(cells, row, line, issues)`` gives a dict of the ``head`` fields (None, for the caller
    to set) then every field of ``fields`` in order, as :func:`read_steps` would, reading the row's
    cell list by index. A blank cell costs one test: the dict starts as a copy of the all-unknown
    record, text cells are stripped in one loop, and the other cells (the only ones that can warn) are
    read in field order, so warnings come in the same order as the fields."""
    template: dict[str, Any] = dict.fromkeys(head)
    texts: list[tuple[int, str]] = []
    others: list[tuple[str, str | None, int | None, Any, str]] = []
    groups: list[str] = []
    for name, key, column, convert in fields:
        if key is None:
            template[name] = None
        elif name not in template:
            template[name] = None
            groups.append(name)
        if column is None:
            others.append((name, None, None, convert(labels, indexes), ""))
        elif column not in indexes:
            continue  # an optional column this export lacks: unknown, as a blank cell
        elif convert is plain_text and key is None:
            texts.append((indexes[column], name))
        else:
            others.append((name, key, indexes[column], convert, labels.get(column, column)))
    copy = template.copy
    empty_groups = tuple(groups)

    def fill(cells: list[str], row: int, line: int | None, issues: list[RowIssue]) -> dict[str, Any]:
        out = copy()
        for index, name in texts:
            value = cells[index]
            if value:
                out[name] = value.strip() or None
        for name in empty_groups:
            out[name] = {}
        for name, key, index, convert, label in others:
            if index is None:
                out[name] = convert(cells, row, line, issues)
                continue
            value = cells[index]
            if not value:
                continue
            try:
                value = convert(value)
            except values.CellError as exc:
                issues.append(RowIssue(row, cell_warning(label, exc), line))
                continue
            if key is None:
                out[name] = value
            elif value is not None:
                out[name][key] = value
        return out

    return fill


def cell_warning(label: str, exc: values.CellError) -> str:
    """The warning an unreadable cell gets, naming its column as the file does."""
    if exc.__class__ is UnknownWord:
        return f"{label}: {exc}"
    return f"{label}: {exc}; read as unknown"


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
        result = _quick_number(value, minimum)
        if result is not None:
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


def content_digest(record: Record | dict[str, Any]) -> str:
    """Hex SHA-256 of the record's stated content (:func:`fact_fields`), independent of its position."""
    encoded = orjson.dumps(fact_fields(record), option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(encoded).hexdigest()


def _content_digests(records: list[Any]) -> dict[int, str]:
    """:func:`content_digest` of each of ``records`` (dataclasses or plain dicts) by ``id(record)``:
    their plain forms made in one pass (one orjson round trip for them all instead of one per record),
    the digests the same."""
    plains = records if records and records[0].__class__ is dict else to_plain(records)
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

    def add_plain(
        self,
        build: Callable[[Any, int, int | None, list[RowIssue]], Any],
        cells: Any,
        row: int,
        line: int | None = None,
    ) -> None:
        """Add the plain record ``build(cells, row, line, issues)`` returns; a RowRejected becomes the
        row's error, the warnings it appended to ``issues`` are kept when the row is."""
        self.rows_read += 1
        issues: list[RowIssue] = []
        try:
            record = build(cells, row, line, issues)
        except RowRejected as exc:
            self.errors.append(RowIssue(row, str(exc), line))
            return
        if issues:
            self.warnings += issues
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


def _key_of(records: list[Any]) -> Callable[[Any], str]:
    if records and records[0].__class__ is dict:
        return itemgetter("row_key")
    return attrgetter("row_key")


def _fold(records: list[R], on_conflict: OnConflict) -> tuple[list[R], list[Duplicate], list[RowIssue]]:
    """Drop exact repeats of a key (reported), then resolve keys still shared by different rows.

    Records are dataclasses or plain dicts (one kind per file). Content digests are computed only for
    rows whose key occurs more than once.
    """
    key_of = _key_of(records)
    counts: dict[str, int] = {}
    for record in records:
        key = key_of(record)
        counts[key] = counts.get(key, 0) + 1
    if all(count == 1 for count in counts.values()):
        return list(records), [], []
    row_of = itemgetter("row") if key_of.__class__ is itemgetter else attrgetter("row")
    first: dict[tuple[str, str], R] = {}
    kept: list[tuple[R, str]] = []
    duplicates: list[Duplicate] = []
    digests = _content_digests([record for record in records if counts[key_of(record)] > 1])
    for record in records:
        key = key_of(record)
        digest = digests[id(record)] if counts[key] > 1 else ""
        seen = first.get((key, digest))
        if seen is not None:
            duplicates.append(Duplicate(row_of(record), key, row_of(seen)))
            continue
        first[(key, digest)] = record
        kept.append((record, digest))
    distinct: dict[str, int] = {}
    for record, _digest in kept:
        distinct[key_of(record)] = distinct.get(key_of(record), 0) + 1
    out, conflicts = _resolve_conflicts(kept, distinct, on_conflict)
    return out, duplicates, conflicts


def _resolve_conflicts(
    kept: list[tuple[R, str]], distinct: dict[str, int], on_conflict: OnConflict
) -> tuple[list[R], list[RowIssue]]:
    out: list[R] = []
    conflicts: list[RowIssue] = []
    first_row: dict[str, int] = {}
    for record, digest in kept:
        plain = record.__class__ is dict
        key = record["row_key"] if plain else record.row_key
        if distinct[key] == 1:
            out.append(record)
        elif on_conflict == "digest":
            # In place: the record is this parse's own, and dataclasses.replace copies every field.
            if plain:
                record["row_key"] = f"{key} #{digest[:8]}"
            else:
                record.row_key = f"{key} #{digest[:8]}"
            out.append(record)
        elif key in first_row:
            row, line = (record["row"], record["line"]) if plain else (record.row, record.line)
            reason = f"key {key!r} repeats row {first_row[key]} with other values"
            conflicts.append(RowIssue(row, reason, line))
        else:
            first_row[key] = record["row"] if plain else record.row
            out.append(record)
    return out, conflicts
