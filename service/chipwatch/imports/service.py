"""Importing one dataset file into the knowledge base, and reading the imports (services flush, never
commit: the CLI command, the API request or the source check owns the transaction, so an import lands
whole or not at all; a dry run is the same work rolled back by its edge)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlmodel import Session

from chipwatch.datasets.kinds import DATASET_KINDS, options_from_name, parse_dataset
from chipwatch.datasets.records import DatasetFormatError, ParseResult, to_plain
from chipwatch.imports import apply
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


@dataclass(slots=True)
class ImportRequest:
    """One file to import: its kind and bytes, where it came from, parser options, and ``strict``
    (refuse the whole file when any row is bad instead of skipping that row)."""

    kind: str
    data: bytes
    file_name: str | None = None
    url: str | None = None
    source_id: str | None = None
    commit: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    strict: bool = False
    actor: str = "admin"


def commit_of(url: str | None) -> str | None:
    """The 40-hex commit a repository URL names (``raw.githubusercontent.com/o/r/<sha>/path``), else None."""
    match = _COMMIT.search(url or "")
    return match[1] if match else None


def _parse(request: ImportRequest) -> ParseResult[Any]:
    if request.kind not in IMPORT_KINDS:
        raise ImportRefused(
            f"unknown dataset kind {request.kind!r}; expected one of {', '.join(DATASET_KINDS)}"
        )
    name = request.file_name or (request.url or "").rsplit("?", 1)[0]
    options = {**(options_from_name(request.kind, name) if name else {}), **request.options}
    allowed = set(DATASET_KINDS[request.kind].options)
    try:
        parsed = parse_dataset(
            request.kind, request.data, **{k: v for k, v in options.items() if k in allowed}
        )
    except DatasetFormatError as exc:
        raise ImportRefused(str(exc), missing=exc.missing) from exc
    except ValueError as exc:
        raise ImportRefused(str(exc)) from exc
    if not parsed.records and not parsed.errors:
        # An empty version would retire every fact the dataset gave: refused, never applied.
        raise ImportRefused(f"the {request.kind} file holds no rows: refused rather than retiring every row")
    return parsed


def _issues(issues: Any) -> list[dict[str, Any]]:
    return [{"row": issue.row, "reason": issue.reason} for issue in list(issues)[:REPORT_LIMIT]]


def run_import(
    *, session: Session, request: ImportRequest, now: datetime | None = None, progress: Progress | None = None
) -> Import:
    """Import ``request``'s file in ``session``'s transaction; returns the flushed :class:`Import` row.

    Parse -> build each record with its names resolved -> decide against the facts earlier versions
    wrote -> write inserts, field-by-field updates (history and ``fact.changed``), retirements and rows
    waiting for an alias -> evaluate signals over the written facts. Raises :class:`ImportRefused`
    before writing anything when the file is refused (with ``strict``, when any row is bad).
    """
    now = now or utcnow()
    note = progress or (lambda stage, done, total: None)
    parsed = _parse(request)
    note("parse", parsed.rows_read, parsed.rows_read)
    if request.strict and parsed.errors:
        raise ImportRefused(
            f"{len(parsed.errors)} bad rows and --strict: nothing imported", skipped=_issues(parsed.errors)
        )
    kind = IMPORT_KINDS[request.kind]
    records = to_plain(list(parsed.records))
    candidates = built_candidates(kind, [(r["row"], r) for r in records], load_resolver(session=session), {})
    note("build", len(candidates), len(candidates))
    version = hashlib.sha256(request.data).hexdigest()
    scopes = scopes_of(candidates) if kind.whole_version else None
    plan = apply.plan_import(
        session=session, kb_kind=kind.kb_kind, dataset=request.kind, candidates=candidates, scopes=scopes
    )
    imp = _new_import(request, version, now, parsed.rows_read, scopes_of(candidates))
    session.add(imp)
    session.flush()
    note("write", 0, len(plan.inserts) + len(plan.updates))
    applied = apply.write_plan(
        session=session, plan=plan, imp=imp, version=version, kb_kind=kind.kb_kind, at=now
    )
    apply.replace_waiting(session=session, plan=plan, imp=imp, version=version, scopes=scopes, at=now)
    note("write", len(plan.inserts) + len(plan.updates), len(plan.inserts) + len(plan.updates))
    _finish(imp, parsed, plan, applied, candidates)
    session.flush()
    return imp


def _new_import(
    request: ImportRequest, version: str, now: datetime, rows_read: int, scopes: set[str | None]
) -> Import:
    return Import(
        kind=request.kind,
        source_id=request.source_id,
        url=request.url,
        file_name=request.file_name,
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
    imp: Import, parsed: ParseResult[Any], plan: Plan, applied: apply.Applied, candidates: list
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
    imp.skipped = len(parsed.errors) + len(plan.skipped)
    imp.waiting, imp.duplicates = len(plan.waiting), len(parsed.duplicates)
    imp.finished_at = utcnow()
    skipped = _issues(parsed.errors) + [{"row": row, "reason": reason} for row, reason in plan.skipped]
    imp.report = {
        "skipped": skipped[:REPORT_LIMIT],
        "warnings": _issues(parsed.warnings),
        "warnings_total": len(parsed.warnings),
        "duplicates": [
            {"row": d.row, "key": d.key, "first_row": d.first_row}
            for d in list(parsed.duplicates)[:REPORT_LIMIT]
        ],
        "unresolved": _unresolved(candidates),
        "changed": [
            {"id": fact_id, "fields": fields}
            for fact_id, fields in list(applied.changed.items())[:REPORT_LIMIT]
        ],
        "retired": applied.retired[:REPORT_LIMIT],
        "restored": sorted(plan.restores)[:REPORT_LIMIT],
        "kb_kind": IMPORT_KINDS[imp.kind].kb_kind,
    }


def record_refusal(*, session: Session, request: ImportRequest, refusal: ImportRefused) -> Import:
    """Record a refused import (its own transaction, after the import's rolled back) so that
    ``GET /v1/imports`` lists every attempt; returns the flushed row."""
    imp = Import(
        kind=request.kind[:32],
        status="refused",
        source_id=request.source_id,
        url=request.url,
        file_name=request.file_name,
        sha256=hashlib.sha256(request.data).hexdigest(),
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
