"""Importing one dataset file (or a batch of one-row files) into the knowledge base, and reading the
imports (services flush, never commit: the CLI command, the API request or the source check owns the
transaction, so an import lands whole or not at all; a dry run is the same work rolled back by its edge).

A batch is the form a real MLPerf submission takes: hundreds of system descriptions or LoadGen log
summaries, one row each. It is one import (one transaction, one version: the SHA-256 over the sorted
digests of its files), each row keyed as a single file's would be, so importing a file on its own and
in a batch writes the same fact; a file that cannot be read is reported by its name.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, insert, select, update
from sqlmodel import Session

from chipwatch.datasets.kinds import DATASET_KINDS, options_from_name, parse_dataset
from chipwatch.datasets.records import DatasetFormatError, ParseResult, to_plain
from chipwatch.imports import apply
from chipwatch.imports.collector import collector_paused
from chipwatch.imports.models import Import
from chipwatch.imports.plan import IMPORT_KINDS, Plan, built_candidates, scopes_of
from chipwatch.imports.resolve import load_resolver
from chipwatch.kit.pagination import keyset_page
from chipwatch.kit.time import utcnow

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``: stages ``parse``, ``build``, ``write``."""

REPORT_LIMIT = 200  # entries kept per report list; the counts are always whole
_COMMIT = re.compile(r"/([0-9a-f]{40})/")


class ImportRefused(ValueError):
    """Nothing was imported: unknown kind, a file of another kind (``missing`` names the columns or fields
    it lacks), no rows, a bad option, or, with ``strict``, bad rows (``skipped``)."""

    def __init__(
        self, reason: str, *, missing: tuple[str, ...] = (), skipped: list[dict[str, Any]] | None = None
    ):
        super().__init__(reason)
        self.reason, self.missing, self.skipped = reason, missing, skipped or []


class ImportNotFound(LookupError):
    """No import has this id."""


@dataclass(frozen=True, slots=True)
class ImportFile:
    """One file of a batch: its name (the path it was found at, read for parser options as a single
    file's name is: an MLPerf system id, a LoadGen run's context) and its bytes."""

    name: str
    data: bytes


@dataclass(slots=True)
class ImportRequest:
    """One file to import: its kind and bytes, where it came from, parser options, and ``strict``
    (refuse the whole file when any row is bad instead of skipping that row).

    ``files`` makes it a batch of files of a one-row kind (``data`` is then unused and ``file_name``
    names the batch, e.g. its directory): see :data:`BATCH_KINDS`.
    """

    kind: str
    data: bytes
    file_name: str | None = None
    url: str | None = None
    source_id: str | None = None
    commit: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    strict: bool = False
    actor: str = "admin"
    files: tuple[ImportFile, ...] = ()


BATCH_KINDS = frozenset(name for name, kind in IMPORT_KINDS.items() if not kind.whole_version)
"""Kinds a batch of files may hold: those whose file describes one row and retires nothing (MLPerf
system descriptions and LoadGen log summaries, benchmark_serving runs)."""


def request_version(request: ImportRequest) -> str:
    """The dataset version of ``request``: SHA-256 of a file's bytes; for a batch, SHA-256 over the
    sorted hex digests of its files (one per line), so the same files in any order are one version."""
    if not request.files:
        return hashlib.sha256(request.data).hexdigest()
    digests = sorted(hashlib.sha256(f.data).hexdigest() for f in request.files)
    return hashlib.sha256("\n".join(digests).encode()).hexdigest()


@dataclass(slots=True)
class _Parsed:
    """What the parse step read, in report form. ``records`` are plain records; ``rows`` their row
    numbers for the plan (a batch numbers its rows across files: ``files`` maps such a number back to
    ``(file name, row in that file)``); issues are report entries (a batch's carry ``file``)."""

    records: list[dict[str, Any]]
    rows: list[int]
    errors: list[dict[str, Any]]
    errors_total: int
    warnings: list[dict[str, Any]]
    warnings_total: int
    duplicates: list[dict[str, Any]]
    duplicates_total: int
    rows_read: int
    files: dict[int, tuple[str, int]] = field(default_factory=dict)


def commit_of(url: str | None) -> str | None:
    """The 40-hex commit a repository URL names (``raw.githubusercontent.com/o/r/<sha>/path``), else None."""
    match = _COMMIT.search(url or "")
    return match[1] if match else None


def _check_kind(request: ImportRequest) -> None:
    if request.kind not in IMPORT_KINDS:
        raise ImportRefused(
            f"unknown dataset kind {request.kind!r}; expected one of {', '.join(DATASET_KINDS)}"
        )
    if request.files and request.kind not in BATCH_KINDS:
        raise ImportRefused(
            f"{request.kind} files are whole versions, imported one at a time; a batch of files can be"
            f" of {', '.join(sorted(BATCH_KINDS))}"
        )


def _parse_file(request: ImportRequest, name: str | None, data: bytes) -> ParseResult[Any]:
    options = {**(options_from_name(request.kind, name) if name else {}), **request.options}
    allowed = set(DATASET_KINDS[request.kind].options)
    try:
        return parse_dataset(request.kind, data, **{k: v for k, v in options.items() if k in allowed})
    except DatasetFormatError as exc:
        raise ImportRefused(str(exc), missing=exc.missing) from exc
    except ValueError as exc:
        raise ImportRefused(str(exc)) from exc


def _issues(issues: Any, file: str | None = None) -> list[dict[str, Any]]:
    where = {} if file is None else {"file": file}
    return [{**where, "row": issue.row, "reason": issue.reason} for issue in list(issues)[:REPORT_LIMIT]]


def _plain_records(parsed: ParseResult[Any]) -> list[dict[str, Any]]:
    """The parsed records in plain form: the large formats' parsers give them so already."""
    records = list(parsed.records)
    return records if records and records[0].__class__ is dict else to_plain(records)


def _parse(request: ImportRequest) -> _Parsed:
    _check_kind(request)
    if request.files:
        return _parse_batch(request)
    parsed = _parse_file(request, request.file_name or (request.url or "").rsplit("?", 1)[0], request.data)
    if not parsed.records and not parsed.errors:
        # An empty version would retire every fact the dataset gave: refused, never applied.
        raise ImportRefused(f"the {request.kind} file holds no rows: refused rather than retiring every row")
    records = _plain_records(parsed)
    return _Parsed(
        records=records,
        rows=[r["row"] for r in records],
        errors=_issues(parsed.errors),
        errors_total=len(parsed.errors),
        warnings=_issues(parsed.warnings),
        warnings_total=len(parsed.warnings),
        duplicates=[
            {"row": d.row, "key": d.key, "first_row": d.first_row}
            for d in list(parsed.duplicates)[:REPORT_LIMIT]
        ],
        duplicates_total=len(parsed.duplicates),
        rows_read=parsed.rows_read,
    )


def _parse_batch(request: ImportRequest) -> _Parsed:
    """Every file of a batch parsed as a single file would be. A file that is not of the kind is one
    error naming the file (what it lacks included); a row key two files give is one fact: the later
    file is a duplicate when its row says the same, else an error."""
    out = _Parsed([], [], [], 0, [], 0, [], 0, 0)
    first_of: dict[str, tuple[str, dict[str, Any]]] = {}
    refused = 0
    for file in sorted(request.files, key=lambda f: f.name):
        try:
            parsed = _parse_file(request, file.name, file.data)
        except ImportRefused as refusal:
            missing = {"missing": list(refusal.missing)} if refusal.missing else {}
            out.errors.append({"file": file.name, "row": None, "reason": refusal.reason, **missing})
            refused += 1
            continue
        out.rows_read += parsed.rows_read
        out.errors += _issues(parsed.errors, file.name)
        out.warnings += _issues(parsed.warnings, file.name)
        out.warnings_total += len(parsed.warnings)
        out.duplicates_total += len(parsed.duplicates)
        out.duplicates += [
            {"file": file.name, "row": d.row, "key": d.key, "first_row": d.first_row}
            for d in parsed.duplicates
        ]
        for record in _plain_records(parsed):
            key, content = record["row_key"], {k: v for k, v in record.items() if k not in ("row", "line")}
            earlier = first_of.get(key)
            if earlier is not None:
                entry = {"file": file.name, "row": record["row"], "key": key, "first_file": earlier[0]}
                if earlier[1] == content:
                    out.duplicates.append(entry)
                    out.duplicates_total += 1
                else:
                    out.errors.append(
                        {**entry, "reason": f"row key {key!r} is also given, differently, by {earlier[0]}"}
                    )
                continue
            first_of[key] = (file.name, content)
            number = len(out.records) + 1
            out.records.append(record)
            out.rows.append(number)
            out.files[number] = (file.name, record["row"])
    if refused == len(request.files):
        reason = f"no file of the batch is a {request.kind} file"
        raise ImportRefused(reason, skipped=out.errors[:REPORT_LIMIT])
    if not out.records and not out.errors:
        raise ImportRefused(f"the batch of {request.kind} files holds no rows")
    out.errors_total = len(out.errors)
    out.errors, out.warnings, out.duplicates = (
        out.errors[:REPORT_LIMIT], out.warnings[:REPORT_LIMIT], out.duplicates[:REPORT_LIMIT]
    )
    return out


def run_import(
    *, session: Session, request: ImportRequest, now: datetime | None = None, progress: Progress | None = None
) -> Import:
    """Import ``request``'s file in ``session``'s transaction; returns the flushed :class:`Import` row.

    A batch (``request.files``) is imported the same way, as one version of its rows.
    Parse -> build each record with its names resolved -> decide against the facts earlier versions
    wrote -> write inserts, field-by-field updates (history and ``fact.changed``), retirements and rows
    waiting for an alias -> evaluate signals over the written facts. Raises :class:`ImportRefused`
    before writing anything when the file is refused (with ``strict``, when any row is bad).
    """
    with collector_paused():
        return _run_import(session=session, request=request, now=now, progress=progress)


def _run_import(
    *, session: Session, request: ImportRequest, now: datetime | None, progress: Progress | None
) -> Import:
    now = now or utcnow()
    note = progress or (lambda stage, done, total: None)
    parsed = _parse(request)
    note("parse", parsed.rows_read, parsed.rows_read)
    if request.strict and parsed.errors:
        raise ImportRefused(
            f"{parsed.errors_total} bad rows and --strict: nothing imported", skipped=parsed.errors
        )
    kind = IMPORT_KINDS[request.kind]
    candidates = built_candidates(
        kind, zip(parsed.rows, parsed.records, strict=True), load_resolver(session=session), {}
    )
    note("build", len(candidates), len(candidates))
    version = request_version(request)
    scopes = scopes_of(candidates) if kind.whole_version else None
    plan = apply.plan_import(
        session=session, kb_kind=kind.kb_kind, dataset=request.kind, candidates=candidates, scopes=scopes
    )
    imp = _new_import(request, version, now, parsed.rows_read, scopes_of(candidates))
    _insert_import(session, imp)
    note("write", 0, len(plan.inserts) + len(plan.updates))
    applied = apply.write_plan(
        session=session, plan=plan, imp=imp, version=version, kb_kind=kind.kb_kind, at=now
    )
    apply.replace_waiting(session=session, plan=plan, imp=imp, version=version, scopes=scopes, at=now)
    note("write", len(plan.inserts) + len(plan.updates), len(plan.inserts) + len(plan.updates))
    _finish(imp, parsed, plan, applied, candidates, request)
    _update_import(session, imp)
    session.flush()  # whatever the fact and change listeners left pending
    return imp


# The import record is written through Core: the ORM's unit of work cost more than the rest of a
# one-row import's statements together. The Import returned is not in the session.
_FINISHED = (
    "inserted", "updated", "unchanged", "retired", "restored", "skipped", "waiting", "duplicates",
    "finished_at", "report",
)


@functools.cache
def _import_writes() -> tuple[Any, Any]:
    table = Import.__table__  # type: ignore[attr-defined]
    finish = update(table).where(table.c.id == bindparam("import_id"))
    return insert(table), finish


def _insert_import(session: Session, imp: Import) -> None:
    """Insert ``imp`` (not added to the session) and set its id."""
    statement, _finish_statement = _import_writes()
    columns = Import.__table__.columns  # type: ignore[attr-defined]
    values = {column.name: getattr(imp, column.name) for column in columns if column.name != "id"}
    imp.id = session.connection().execute(statement, values).inserted_primary_key[0]


def _update_import(session: Session, imp: Import) -> None:
    """Write the counts, finish time and report :func:`_finish` set on ``imp``."""
    _statement, finish = _import_writes()
    values = {name: getattr(imp, name) for name in _FINISHED}
    session.connection().execute(finish, {"import_id": imp.id, **values})


def _new_import(
    request: ImportRequest, version: str, now: datetime, rows_read: int, scopes: set[str | None]
) -> Import:
    return Import(
        kind=request.kind,
        source_id=request.source_id,
        url=request.url,
        file_name=(request.file_name or "")[:300] or None,
        sha256=version,
        commit=request.commit or commit_of(request.url),
        strict=request.strict,
        actor=request.actor,
        started_at=now,
        rows_read=rows_read,
        scopes=sorted(s for s in scopes if s is not None),
    )


def _unresolved(candidates: list) -> list[dict[str, Any]]:
    names: dict[tuple[str, str], dict[str, Any]] = {}
    for candidate in candidates:
        for holds, group in ((True, candidate.built.waiting), (False, candidate.built.unresolved)):
            for name in group:
                entry = names.setdefault(
                    (name.kind, name.name),
                    {
                        "name": name.name,
                        "kind": name.kind,
                        "reason": name.reason,
                        "rows": 0,
                        "holds_rows": holds,
                    },
                )
                entry["rows"] += 1
    return sorted(names.values(), key=lambda e: (-e["rows"], e["kind"], e["name"]))[:REPORT_LIMIT]


def _finish(
    imp: Import, parsed: _Parsed, plan: Plan, applied: apply.Applied, candidates: list, request: ImportRequest
) -> None:
    untouched = [
        fact_id
        for fact_id, _b, _d in plan.updates
        if fact_id not in applied.changed and fact_id not in plan.restores
    ]
    imp.inserted, imp.updated, imp.unchanged = (
        len(plan.inserts),
        len(applied.changed),
        plan.unchanged + len(untouched),
    )
    imp.retired, imp.restored = len(applied.retired), len(plan.restores)
    imp.skipped = parsed.errors_total + len(plan.skipped)
    imp.waiting, imp.duplicates = len(plan.waiting), parsed.duplicates_total
    imp.finished_at = utcnow()
    skipped = parsed.errors + [_row_issue(parsed, row, reason) for row, reason in plan.skipped]
    imp.report = {
        "skipped": skipped[:REPORT_LIMIT],
        "warnings": parsed.warnings,
        "warnings_total": parsed.warnings_total,
        "duplicates": parsed.duplicates,
        "unresolved": _unresolved(candidates),
        "changed": [
            {"id": fact_id, "fields": fields}
            for fact_id, fields in list(applied.changed.items())[:REPORT_LIMIT]
        ],
        "retired": applied.retired[:REPORT_LIMIT],
        "restored": sorted(plan.restores)[:REPORT_LIMIT],
        "kb_kind": IMPORT_KINDS[imp.kind].kb_kind,
    }
    if request.files:
        imp.report["files"] = len(request.files)
        imp.report["file_names"] = sorted(f.name for f in request.files)[:REPORT_LIMIT]


def _row_issue(parsed: _Parsed, row: int, reason: str) -> dict[str, Any]:
    """A report entry for row ``row`` of the plan: a batch's names its file and the row in it."""
    if row in parsed.files:
        file, file_row = parsed.files[row]
        return {"file": file, "row": file_row, "reason": reason}
    return {"row": row, "reason": reason}


def record_refusal(*, session: Session, request: ImportRequest, refusal: ImportRefused) -> Import:
    """Record a refused import (its own transaction, after the import's rolled back) so that
    ``GET /v1/imports`` lists every attempt; returns the flushed row."""
    imp = Import(
        kind=request.kind[:32],
        status="refused",
        source_id=request.source_id,
        url=request.url,
        file_name=(request.file_name or "")[:300] or None,
        sha256=request_version(request),
        commit=request.commit or commit_of(request.url),
        strict=request.strict,
        actor=request.actor,
        finished_at=utcnow(),
        error=refusal.reason,
        skipped=len(refusal.skipped),
        report={"skipped": refusal.skipped, "missing": list(refusal.missing)},
    )
    session.add(imp)
    session.flush()
    return imp


def list_imports(*, session: Session, kind: str | None, cursor: str | None, limit: int) -> dict[str, Any]:
    """One page of imports, newest first: ``{"items": [Import], "next_cursor": str | None}``."""
    stmt = select(Import)
    if kind is not None:
        stmt = stmt.where(Import.kind == kind)
    rows, next_cursor = keyset_page(
        session, stmt, keys=(Import.id,), cursor=cursor, limit=limit, descending=True
    )
    return {"items": rows, "next_cursor": next_cursor}


def get_import(*, session: Session, import_id: int) -> Import:
    """The import ``import_id``; raises :class:`ImportNotFound`."""
    row = session.get(Import, import_id)
    if row is None:
        raise ImportNotFound(import_id)
    return row
