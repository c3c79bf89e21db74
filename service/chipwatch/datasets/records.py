"""The shapes every dataset parser returns: records with their row key, row issues, and the parse result.

A record is a dataclass that nothing changes once built: plain values only (str, int, float, bool,
date, datetime, tuples, dicts of those, and the small dataclasses below), so it can be compared
field by field against the previous version of the same row and turned into JSON with :func:`to_plain`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import date
from typing import Any, Generic, Literal, TypeVar

import orjson

DatePrecision = Literal["day", "month", "year"]

BOOKKEEPING_FIELDS = frozenset({"row", "line", "row_key"})
"""Record fields that say where a row sat in its file rather than what it states."""


class DatasetFormatError(ValueError):
    """The input is not a file of the expected kind (wrong columns or fields, not CSV or JSON at all).

    ``missing`` names the required columns or fields the input lacks (empty when the input could not be
    read far enough to look for them); ``kind`` is the dataset kind that was expected.
    """

    def __init__(self, kind: str, reason: str, *, missing: tuple[str, ...] = ()) -> None:
        self.kind = kind
        self.reason = reason
        self.missing = missing
        if missing:
            reason = f"{reason}: missing {', '.join(repr(name) for name in missing)}"
        # MLPerf is read letter by letter ("an em-el-perf"), like a kind opening with a vowel.
        article = "an" if kind[:1] in "aeiou" or kind.startswith("mlperf") else "a"
        super().__init__(f"not {article} {kind} file: {reason}")


@dataclass(frozen=True, slots=True)
class RowIssue:
    """A row that was skipped (an error) or a cell read as unknown (a warning).

    ``row`` is the 1-based position of the record among the file's records (a CSV header is not a
    record); ``line`` is the physical line where a CSV row starts, which differs from ``row`` once a
    quoted cell spans several lines.
    """

    row: int
    reason: str
    line: int | None = None


@dataclass(frozen=True, slots=True)
class Duplicate:
    """A row repeating an earlier row of the same file with the same key and the same content."""

    row: int
    key: str
    first_row: int


@dataclass(frozen=True, slots=True)
class PartialDate:
    """A calendar date known to ``precision``: a month-precision date is stored as its first day."""

    value: date
    precision: DatePrecision = "day"


@dataclass(frozen=True, slots=True, kw_only=True)
class Percentiles:
    """Latency statistics in milliseconds; a statistic the file does not give is None."""

    min_ms: float | None = None
    max_ms: float | None = None
    mean_ms: float | None = None
    std_ms: float | None = None
    p50_ms: float | None = None
    p90_ms: float | None = None
    p95_ms: float | None = None
    p97_ms: float | None = None
    p99_ms: float | None = None
    p99_9_ms: float | None = None

    def is_empty(self) -> bool:
        """True when no statistic is known."""
        return all(getattr(self, f.name) is None for f in dataclasses.fields(self))


# Not frozen: a frozen dataclass's __init__ sets every field through object.__setattr__, which made up a
# third of the time to parse a large file. Records are never changed once a parser has built them.
@dataclass(slots=True, kw_only=True)
class Record:
    """Fields every record carries: where it sat, the key that identifies it across versions, its link.

    ``row_key`` is the dataset's own identity for the row (an Epoch name or Id, an MLPerf ID with model
    and scenario, an InferenceX eval's source path); ``link`` is the row's own URL where the file has one
    (MLPerf ``Details``), else None.
    """

    row: int
    row_key: str
    line: int | None = None
    link: str | None = None


R = TypeVar("R", bound="Record | dict[str, Any]")


@dataclass(frozen=True, slots=True)
class ParseResult(Generic[R]):
    """What a parser read from one file.

    ``records`` are the good rows in file order, one per key (records, or for the large formats their
    plain form: a dict as :func:`to_plain` gives, the parser's record class naming its fields);
    ``errors`` are rows skipped with their reason; ``warnings`` are cells read as unknown;
    ``duplicates`` are rows that repeated an earlier row exactly and were folded into it;
    ``rows_read`` counts every record position in the file.
    """

    kind: str
    records: tuple[R, ...]
    errors: tuple[RowIssue, ...] = ()
    warnings: tuple[RowIssue, ...] = ()
    duplicates: tuple[Duplicate, ...] = ()
    rows_read: int = 0

    def by_key(self) -> dict[str, R]:
        """Records by their row key."""
        return {
            record["row_key"] if record.__class__ is dict else record.row_key: record  # type: ignore[index, union-attr]
            for record in self.records
        }


def to_plain(value: Any) -> Any:
    """``value`` as JSON-ready data: dataclasses become dicts, dates and times ISO 8601 text, tuples
    lists.

    Parsers never put NaN or infinity in a record, so the result is strict JSON. orjson does the walk:
    it reads dataclasses (slots included) and dates natively, several times faster than a recursive walk.
    """
    return orjson.loads(orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS))


def fact_fields(record: Record | dict[str, Any]) -> dict[str, Any]:
    """The record's stated content as plain data, without where it sat in the file (row, line, key).
    ``record`` is a record or already its plain form (what the large formats' parsers give).

    Two versions of a row are the same fact unchanged exactly when these dicts are equal; a field-by-field
    diff of them is the row's change.
    """
    plain = record if record.__class__ is dict else to_plain(record)
    return {name: value for name, value in plain.items() if name not in BOOKKEEPING_FIELDS}
