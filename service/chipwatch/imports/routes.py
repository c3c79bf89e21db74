"""Imports and aliases endpoints: ``/v1/imports`` (list, detail, upload or URL) and ``/v1/aliases``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from fastapi import APIRouter, Depends, File, Form, Path, Query, Request, Response, UploadFile
from sqlalchemy.exc import DBAPIError
from sqlmodel import Session

from chipwatch.config import get_settings
from chipwatch.datasets.kinds import DATASET_KINDS
from chipwatch.imports import aliases, runner, service
from chipwatch.imports.models import AliasKind
from chipwatch.imports.schemas import (
    AliasChange,
    AliasCreate,
    AliasPublic,
    AliasUpdate,
    ImportPublic,
    UnresolvedName,
)
from chipwatch.imports.service import ImportFile
from chipwatch.kit.auth import AdminDep, require_reader
from chipwatch.kit.errors import ApiError, Conflict, NotFound, database_problem, invalid
from chipwatch.kit.pagination import CursorQ, LimitQ, Page
from chipwatch.kit.query import choice, reject_unknown_form
from chipwatch.kit.request_limits import body_cap
from chipwatch.kit.sessions import ReadSession, WriteSession
from chipwatch.kit.validation import body_check

router = APIRouter(prefix="/v1", dependencies=[Depends(require_reader)], tags=["imports"])

UPLOAD_CHUNK = 1 << 16
DatasetKindName = choice(DATASET_KINDS)


@router.get("/imports", response_model=Page[ImportPublic])
def list_imports(
    kind: DatasetKindName | None = Query(None, description="dataset kind"),
    limit: int = LimitQ,
    cursor: str | None = CursorQ,
    session: Session = ReadSession,
):
    """Every import, newest first: kind, dataset version (``sha256`` of the bytes, ``url``, ``commit``
    where known), row counts (inserted, updated, unchanged, retired, restored, skipped, waiting,
    duplicates) and the report (skipped rows with reasons, unresolved names, changed facts)."""
    return service.list_imports(session=session, kind=kind, cursor=cursor, limit=limit)


@router.get("/imports/{import_id}", response_model=ImportPublic)
def get_import(import_id: int = Path(..., ge=1, le=2**63 - 1), session: Session = ReadSession):
    """One import with its full report (404 problem when unknown)."""
    try:
        return service.get_import(session=session, import_id=import_id)
    except service.ImportNotFound as exc:
        raise NotFound("import", str(import_id)) from exc


async def _read_upload(upload: UploadFile, max_bytes: int) -> bytes:
    chunks, size = [], 0
    while chunk := await upload.read(UPLOAD_CHUNK):
        size += len(chunk)
        if size > max_bytes:
            raise ApiError(413, "Content Too Large", f"the file is over {max_bytes} bytes (fetch_max_bytes)")
        chunks.append(chunk)
    return b"".join(chunks)


@router.post(
    "/imports",
    response_model=ImportPublic,
    status_code=201,
    # an upload is a whole dataset file: allowed up to the fetch cap plus room for the multipart envelope
    dependencies=[AdminDep, body_cap(lambda s: s.fetch_max_bytes + 65536), Depends(reject_unknown_form)],
    responses={
        200: {"description": "dry run: what the import would do; nothing written"},
        413: {"description": "file over fetch_max_bytes"},
    },
)
async def create_import(
    response: Response,
    # Checked as the request is read: an unknown kind is a 422 naming ``kind``, and no import is recorded.
    kind: DatasetKindName = Form(..., description="dataset kind, e.g. epoch-ml-hardware"),
    file: UploadFile | None = File(None, description="the dataset file (or give url)"),
    files: list[UploadFile] | None = File(
        None,
        description="several files of a one-row kind (mlperf-system, mlperf-log-summary, benchmark-serving)"
        " imported as one: one transaction, one version; each named by its file name",
    ),
    url: str | None = Form(None, max_length=2000, description="http(s) URL to fetch (or upload file)"),
    hardware: str | None = Form(
        None, max_length=200, description="benchmark_serving: the hardware it ran on"
    ),
    accelerator_count: int | None = Form(
        None, ge=1, le=1_000_000, description="benchmark_serving: accelerators"
    ),
    file_name: str | None = Form(None, max_length=300, description="name to read MLPerf context from"),
    commit: str | None = Form(None, pattern=r"^[0-9a-f]{7,64}$", description="repository commit of the file"),
    dry_run: bool = Query(False, description="report what would change, write nothing"),
    strict: bool = Query(False, description="refuse the whole file when any row is bad"),
):
    """Import a dataset file (admin): uploaded as ``file`` or fetched from ``url`` through the guarded
    fetcher (SSRF guard, ``fetch_max_bytes``, ``fetch_timeout_s``); or, for a one-row kind, several
    uploaded ``files`` as one import (their sizes together within the upload cap; errors reported by file
    name). One transaction: it lands whole or not at all. Answers the import's report (201; 200 for
    ``dry_run``). A file of the wrong kind, with no rows, or (``strict``) with bad rows is refused with
    a 422 problem naming the missing columns or the bad rows (``missing``, ``skipped``); the refusal is
    listed in ``GET /v1/imports``."""
    settings = get_settings()
    data = await _read_upload(file, settings.fetch_max_bytes) if file is not None else None
    name = file_name or (file.filename if file is not None else None)
    batch: list[ImportFile] = []
    for n, upload in enumerate(files or [], start=1):
        # The body cap bounds the batch as a whole; each file is read under the same cap as one file.
        body = await _read_upload(upload, settings.fetch_max_bytes)
        batch.append(ImportFile(upload.filename or f"file-{n}", body))
    options = {"hardware": hardware, "accelerator_count": accelerator_count}
    try:
        outcome = await runner.submit(
            kind=kind,
            data=data,
            url=url,
            options=options,
            file_name=name,
            commit=commit,
            strict=strict,
            dry_run=dry_run,
            settings=settings,
            files=tuple(batch),
        )
    except runner.FetchFailed as exc:
        raise invalid("url", f"could not fetch: {exc}") from exc
    except ValueError as exc:
        raise invalid("file", str(exc)) from exc
    except DBAPIError as exc:
        raise database_problem(exc, writing=True) or exc from exc
    if outcome.refusal is not None:
        refusal = outcome.refusal
        raise ApiError(
            422,
            "Import refused",
            refusal.reason,
            missing=list(refusal.missing) or None,
            skipped=refusal.skipped or None,
            import_id=outcome.refused_id,
        )
    if dry_run:
        response.status_code = 200
    return outcome.report


@contextmanager
def _alias_problems() -> Iterator[None]:
    try:
        yield
    except aliases.AliasNotFound as exc:
        raise NotFound("alias", str(exc)) from exc
    except aliases.AliasConflict as exc:
        raise Conflict(str(exc)) from exc
    except aliases.AliasInvalid as exc:
        errors = [{"field": field, "message": message} for field, message in exc.problems]
        raise ApiError(422, "Unprocessable Content", str(exc), errors=errors) from exc


def _alias_field_problems(
    session: Session, fields: dict[str, Any], request: Request
) -> list[tuple[str, str]]:
    """The alias checks over a body's fields that passed the request layer (kit.validation)."""
    alias_id = request.path_params.get("alias_id")
    return aliases.field_problems(session=session, fields=fields, alias_id=alias_id)


@router.get("/aliases", response_model=Page[AliasPublic])
def list_aliases(
    kind: AliasKind | None = Query(None, description="chip | vendor | model"),
    limit: int = LimitQ,
    cursor: str | None = CursorQ,
    session: Session = ReadSession,
):
    """The alias table ordered by id: names datasets use, each mapped to a chip, vendor or model id."""
    return aliases.list_aliases(session=session, kind=kind, cursor=cursor, limit=limit)


@router.get("/aliases/unresolved", response_model=list[UnresolvedName])
def unresolved_aliases(session: Session = ReadSession):
    """Names in imported datasets that map to no id: those holding rows back (``rows_waiting``, with
    example row keys; an alias lets them through), then operators and manufacturers the latest import
    of a dataset could not resolve (the rows were imported without the link)."""
    return aliases.unresolved_names(session=session)


@router.get("/aliases/{alias_id}", response_model=AliasPublic)
def get_alias(alias_id: str = Path(..., max_length=64), session: Session = ReadSession):
    """One alias (404 problem when unknown)."""
    with _alias_problems():
        return aliases.get_alias(session=session, alias_id=alias_id)


def _change(result: tuple) -> AliasChange:
    alias, applied, waiting = result
    return AliasChange(alias=AliasPublic.model_validate(alias), applied=applied, still_waiting=waiting)


@router.post("/aliases", response_model=AliasChange, status_code=201, dependencies=[AdminDep])
@body_check(_alias_field_problems)
def create_alias(body: AliasCreate, session: Session = WriteSession):
    """Add an alias (admin). Waiting rows whose names it resolves become facts in the same transaction
    (``applied``). 409 when an alias of the kind compares equal; 422 for an unknown target."""
    with _alias_problems():
        return _change(aliases.create_alias(session=session, alias_in=body))


@router.patch("/aliases/{alias_id}", response_model=AliasChange, dependencies=[AdminDep])
@body_check(_alias_field_problems)
def update_alias(
    body: AliasUpdate, alias_id: str = Path(..., max_length=64), session: Session = WriteSession
):
    """Change an alias (admin; seeded ones too); waiting rows it now resolves become facts."""
    with _alias_problems():
        return _change(aliases.update_alias(session=session, alias_id=alias_id, changes_in=body))


@router.delete("/aliases/{alias_id}", status_code=204, dependencies=[AdminDep])
def delete_alias(alias_id: str = Path(..., max_length=64), session: Session = WriteSession):
    """Remove an alias (admin). Facts it linked keep the link until their dataset's next version."""
    with _alias_problems():
        aliases.delete_alias(session=session, alias_id=alias_id)
    return Response(status_code=204)
