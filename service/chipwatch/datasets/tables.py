"""Opening a dataset file: CSV with columns found by header name, or JSON; refusing the wrong kind.

Columns are matched by name, never by position, after folding case and whitespace, and each column may
carry several accepted headers because exports of the same dataset name some columns differently.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from operator import itemgetter
from typing import Any

import orjson

from chipwatch.datasets.records import DatasetFormatError, ParseResult, R, RowIssue
from chipwatch.datasets.rows import Cells, Collector, OnConflict

_SPACES = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Column:
    """A column a parser reads: its canonical name, the headers it may appear under, whether the file
    must have it to be recognised as the dataset."""

    name: str
    headers: tuple[str, ...]
    required: bool = False


@lru_cache(maxsize=4096)
def fold_header(header: str) -> str:
    """A header compared by name: casefolded, byte-order mark dropped, runs of whitespace as one space.
    Cached: every version of a dataset repeats its headers."""
    return _SPACES.sub(" ", header.replace("\ufeff", "")).strip().casefold()


def decode_text(data: bytes | str, kind: str) -> str:
    """``data`` as text: UTF-8 with or without a byte-order mark. Raises DatasetFormatError otherwise."""
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DatasetFormatError(kind, f"not UTF-8 text (byte {exc.start})") from None


def _column_indexes(header: Sequence[str], columns: Sequence[Column], kind: str) -> dict[str, int]:
    positions: dict[str, int] = {}
    for index, name in enumerate(header):
        positions.setdefault(fold_header(name), index)
    found: dict[str, int] = {}
    missing: list[str] = []
    for column in columns:
        index = next((positions[f] for f in _folded_headers(column) if f in positions), None)
        if index is not None:
            found[column.name] = index
        elif column.required:
            missing.append(column.headers[0])
    if missing:
        raise DatasetFormatError(kind, "the header lacks required columns", missing=tuple(missing))
    return found


@cache
def _folded_headers(column: Column) -> tuple[str, ...]:
    # A parser's columns are module constants: fold their headers once per process, not once per file.
    return tuple(fold_header(h) for h in column.headers)


def _getter(indexes: tuple[int, ...]) -> Callable[[Sequence[str]], tuple[str, ...]]:
    """One call returning the cells at ``indexes`` as a tuple (itemgetter gives a bare cell for one)."""
    if len(indexes) > 1:
        return itemgetter(*indexes)
    return lambda cells: tuple(cells[i] for i in indexes)


@dataclass(frozen=True, slots=True)
class BadRow:
    """A CSV row that could not be split into cells under the header, with the reason."""

    row: int
    line: int
    reason: str


def _open_csv(data: bytes | str, columns: Sequence[Column], kind: str):
    reader = csv.reader(io.StringIO(decode_text(data, kind), newline=""))
    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise DatasetFormatError(kind, f"malformed CSV: {exc}") from None
    if not header or not any(cell.strip() for cell in header):
        raise DatasetFormatError(kind, "there is no header row")
    indexes = _column_indexes(header, columns, kind)
    labels = {name: header[index].strip() for name, index in indexes.items()}
    return reader, header, indexes, labels


def read_csv(data: bytes | str, columns: Sequence[Column], *, kind: str) -> Iterator[Cells | BadRow]:
    """Each data row of a CSV file as :class:`Cells` keyed by canonical column name.

    A row whose cell count differs from the header's comes back as a :class:`BadRow` instead: its cells
    cannot be trusted to sit under the right headers. Blank lines are skipped. Raises
    DatasetFormatError (before yielding anything) when the text is not UTF-8, there is no header, or the
    header lacks a required column; and if the CSV itself is malformed.
    """
    reader, header, indexes, labels = _open_csv(data, columns, kind)
    return (
        item if item.__class__ is BadRow else Cells(item[0], item[1], item[2], labels)
        for item in _rows(reader, header, indexes, kind)
    )


def _rows(reader, header: Sequence[str], indexes: Mapping[str, int], kind: str):
    """``(cells by canonical name, row, line)`` of each data row, or a BadRow."""
    # The file's column plan, made once: the canonical names and one getter of their cells.
    names = tuple(indexes)
    pick = _getter(tuple(indexes.values()))
    for item in _raw_rows(reader, len(header), kind):
        yield item if item.__class__ is BadRow else (dict(zip(names, pick(item[0]))), item[1], item[2])  # noqa: B905


def _raw_rows(reader, width: int, kind: str):
    """``(the row's cells, row, line)`` of each data row, or a BadRow."""
    row = 0
    while True:
        line = reader.line_num + 1
        try:
            cells = next(reader, None)
        except csv.Error as exc:
            raise DatasetFormatError(kind, f"malformed CSV at line {line}: {exc}") from None
        if cells is None:
            return
        if not cells or not any(cell.strip() for cell in cells):
            continue
        row += 1
        if len(cells) != width:
            yield BadRow(row, line, f"{len(cells)} cells under a header of {width}")
            continue
        yield cells, row, line


def collect_csv(
    data: bytes | str,
    columns: Sequence[Column],
    build: Callable[[Cells], R],
    *,
    kind: str,
    on_conflict: OnConflict = "error",
) -> ParseResult[R]:
    """Every row of a CSV file built into a record by ``build``, collected into a ParseResult.

    Raises DatasetFormatError as :func:`read_csv` does; bad rows are errors in the result.
    """
    collector: Collector[R] = Collector(kind, on_conflict)
    for item in read_csv(data, columns, kind=kind):
        if isinstance(item, BadRow):
            collector.reject(item.row, item.reason, item.line)
        else:
            collector.add(item, build)
    return collector.result()


PlainBuild = Callable[[list[str], int, "int | None", list[RowIssue]], dict[str, Any]]


def collect_csv_plain(
    data: bytes | str,
    columns: Sequence[Column],
    plan: Callable[[Mapping[str, int], Mapping[str, str]], PlainBuild],
    *,
    kind: str,
    on_conflict: OnConflict = "error",
) -> ParseResult[dict[str, Any]]:
    """Every row of a CSV file as a plain record, collected into a ParseResult.

    ``plan(indexes, labels)`` is called once per file with the position and the header of each
    canonical column the file has, and returns the row builder: ``build(cells, row, line, issues)``
    gives the plain record of the row's cell list, appends its warnings to ``issues``, and raises
    RowRejected for a row that cannot be one (see :func:`~chipwatch.datasets.rows.csv_plan`). Raises
    DatasetFormatError as :func:`read_csv` does.
    """
    reader, header, indexes, labels = _open_csv(data, columns, kind)
    build = plan(indexes, labels)
    collector: Collector[dict[str, Any]] = Collector(kind, on_conflict)
    add = collector.add_plain
    for item in _raw_rows(reader, len(header), kind):
        if item.__class__ is BadRow:
            collector.reject(item.row, item.reason, item.line)
        else:
            add(build, *item)
    return collector.result()


def load_json(data: bytes | str, *, kind: str) -> Any:
    """The decoded JSON document. Raises DatasetFormatError when ``data`` is not JSON."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise DatasetFormatError(kind, f"not JSON ({exc})") from None


def json_records(data: bytes | str, *, kind: str, required: Sequence[str]) -> list[Any]:
    """The elements of a JSON array of objects, after checking that the fields in ``required`` occur.

    A field counts as present when any element has it, so a file is refused only when it lacks the field
    altogether (a file of another kind); an element lacking it is a bad row for the parser to report.
    Raises DatasetFormatError when the document is not a non-empty array or lacks required fields.
    """
    document = load_json(data, kind=kind)
    if not isinstance(document, list):
        raise DatasetFormatError(kind, f"expected a JSON array of records, found a {type(document).__name__}")
    if not document:
        raise DatasetFormatError(kind, "the array holds no records", missing=tuple(required))
    present: set[str] = set()
    for element in document:
        if isinstance(element, dict):
            present.update(element)
    missing = tuple(name for name in required if name not in present)
    if missing:
        raise DatasetFormatError(kind, "the records lack required fields", missing=missing)
    return document


def json_object(data: bytes | str, *, kind: str, required: Sequence[str]) -> dict[str, Any]:
    """A JSON object that has every field in ``required``. Raises DatasetFormatError otherwise."""
    document = load_json(data, kind=kind)
    if not isinstance(document, dict):
        raise DatasetFormatError(kind, f"expected a JSON object, found a {type(document).__name__}")
    missing = tuple(name for name in required if name not in document)
    if missing:
        raise DatasetFormatError(kind, "the object lacks required fields", missing=missing)
    return document
