"""Source and item endpoints: list, detail with health, add, change, remove, check now, OPML
import/export, items."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import Response
from sqlmodel import Session
from starlette.concurrency import run_in_threadpool

from chipwatch.config import get_settings
from chipwatch.kit.auth import AdminDep, require_reader
from chipwatch.kit.errors import ApiError, Conflict, NotFound, invalid
from chipwatch.kit.pagination import CursorQ, LimitQ, Page
from chipwatch.kit.rows import json_response
from chipwatch.kit.sessions import ReadSession, WriteSession, acknowledged_write
from chipwatch.kit.time import as_utc
from chipwatch.kit.validation import body_check
from chipwatch.sources import check, manage, service
from chipwatch.sources.errors import (
    FeedParseError,
    InvalidSource,
    NotAFeed,
    SourceConflict,
    SourceNotFound,
)
from chipwatch.sources.models import Source
from chipwatch.sources.schemas import (
    CheckOutcomePublic,
    ItemDetail,
    ItemPublic,
    OpmlImportResult,
    SourceCreate,
    SourceUpdate,
)
from chipwatch.vocab.slugs import SLUG
from chipwatch.vocab.trust import Trust

router = APIRouter(prefix="/v1", tags=["sources"], dependencies=[Depends(require_reader)])

OPML_MEDIA_TYPE = "text/x-opml"
MAX_OPML_BYTES = 2 * 1024 * 1024
ITEM_ID_MAX = 2**31 - 1  # items.id is a 32-bit integer on PostgreSQL


SourceId = Path(..., max_length=64, description="source id")
RemovedQ = Query(False, description="true: only the removed sources (DELETE); default false: those in use")
_CHANGE_RESPONSES = {
    404: {"description": "unknown id"},
    409: {"description": "another source watches the URL, or the source was removed"},
}


@contextmanager
def _problems(source_id: str | None = None) -> Iterator[None]:
    """The sources service's refusals as problems: 404 unknown source; 409 a taken id or URL, a removed
    source or one that is not checked; 422 listing every refused field."""
    try:
        yield
    except SourceNotFound as exc:
        raise NotFound("source", source_id or exc.source_id) from exc
    except (SourceConflict, NotAFeed) as exc:
        raise Conflict(str(exc)) from exc
    except InvalidSource as exc:
        errors = [{"field": field, "message": message} for field, message in exc.problems]
        raise ApiError(422, "Unprocessable Content", str(exc), errors=errors) from exc


def _field_problems(session: Session, fields: dict[str, Any], request: Request) -> list[tuple[str, str]]:
    """The sources service's checks over a body's fields that passed the request layer (kit.validation)."""
    return service.field_problems(session=session, fields=fields, settings=get_settings())


@router.get("/sources", response_model=Page[Source])
def list_sources(
    limit: int = LimitQ,
    cursor: str | None = CursorQ,
    removed: bool = RemovedQ,
    session: Session = ReadSession,
):
    """Sources (feeds and seed articles) in use ordered by id, each with its health fields; with
    ``removed=true`` the removed ones (their items are kept)."""
    return service.list_sources(session=session, cursor=cursor, limit=limit, removed=removed)


@router.get(
    "/sources.opml",
    response_class=Response,
    responses={
        200: {"content": {OPML_MEDIA_TYPE: {"schema": {"type": "string"}}}, "description": "OPML 2.0"}
    },
)
def export_sources_opml(session: Session = ReadSession) -> Response:
    """Every polled feed as an OPML 2.0 subscription list."""
    return Response(service.export_opml(session=session), media_type=OPML_MEDIA_TYPE)


@router.post(
    "/sources",
    response_model=Source,
    status_code=201,
    dependencies=[AdminDep],
    responses={409: {"description": "a source with this id or URL exists"}},
)
@body_check(_field_problems)
def create_source(source_in: SourceCreate, session: Session = WriteSession):
    """Watch a new feed (admin). The id is a slug of the name unless given; the kind is detected at the
    first check. Internal addresses are refused unless CHIPWATCH_ALLOW_PRIVATE_NETWORKS is set."""
    with _problems():
        return service.create_source(session=session, source_in=source_in, settings=get_settings())


@router.patch(
    "/sources/{source_id}", response_model=Source, dependencies=[AdminDep], responses=_CHANGE_RESPONSES
)
@body_check(_field_problems)
def update_source(changes: SourceUpdate, source_id: str = SourceId, session: Session = WriteSession):
    """Change a source (admin): name, URL, trust, language, time zone, publisher, check interval, notes;
    ``enabled: false`` stops its checks, ``enabled: true`` resumes them at once (and restores a removed
    source). A new URL is checked like a new source's and forgets the old one's validators."""
    with _problems(source_id):
        return manage.update_source(
            session=session, source_id=source_id, changes_in=changes, settings=get_settings()
        )


@router.delete(
    "/sources/{source_id}", response_model=Source, dependencies=[AdminDep], responses=_CHANGE_RESPONSES
)
def remove_source(source_id: str = SourceId, session: Session = WriteSession):
    """Remove a source (admin): it is no longer checked, listed or exported, but its items stay (they are
    evidence and provenance) at ``/v1/items?source=<id>``, and the source at ``/v1/sources/<id>`` with
    ``removed_at`` and in ``?removed=true``. ``PATCH`` with ``{"enabled": true}`` brings it back; 409
    when it was removed already."""
    with _problems(source_id):
        return manage.remove_source(session=session, source_id=source_id)


@router.post(
    "/sources/opml",
    response_model=OpmlImportResult,
    dependencies=[AdminDep],
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                OPML_MEDIA_TYPE: {"schema": {"type": "string"}},
                "application/xml": {"schema": {"type": "string"}},
                "text/xml": {"schema": {"type": "string"}},
            },
        }
    },
    responses={413: {"description": "document too large"}, 415: {"description": "a form upload"}},
)
async def import_sources_opml(
    request: Request,
    trust: Trust = Query("press", description="trust given to every imported feed"),
) -> OpmlImportResult:
    """Watch every feed of an OPML document (admin; body = the OPML XML). Feeds already watched or
    with refused URLs are listed under ``skipped``; malformed or unsafe XML is refused with 422, a
    form upload (``curl -F file=@feeds.opml``) with 415 saying to send the document itself."""
    if request.headers.get("content-type", "").lower().startswith("multipart/form-data"):
        # A form upload would otherwise be parsed as XML and refused with a syntax error at line 1.
        raise ApiError(
            415,
            "Unsupported Media Type",
            "send the OPML document itself as the body (curl --data-binary @feeds.opml "
            f"-H 'content-type: {OPML_MEDIA_TYPE}'), not as a form upload",
        )
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_OPML_BYTES:
            raise ApiError(413, "Content Too Large", f"OPML documents are limited to {MAX_OPML_BYTES} bytes")

    # The route reads the body itself (to cap its size), so it is async; the database work runs in a
    # thread, in its own write transaction, committed before the answer like any other write.
    def run() -> OpmlImportResult:
        with acknowledged_write() as session:
            return service.import_opml(
                session=session, body=bytes(body), trust=trust, settings=get_settings()
            )

    try:
        return await run_in_threadpool(run)
    except FeedParseError as exc:
        raise invalid("body", str(exc)) from exc


@router.get("/sources/{source_id}", response_model=Source, responses={404: {"description": "unknown id"}})
def get_source(source_id: str = Path(..., max_length=64), session: Session = ReadSession):
    """One source with its health: last check, status, error, failures, next check, validators."""
    source = service.get_source(session=session, source_id=source_id)
    if source is None:
        raise NotFound("source", source_id)
    return source


@router.post(
    "/sources/{source_id}/check",
    response_model=CheckOutcomePublic,
    dependencies=[AdminDep],
    responses={
        404: {"description": "unknown id"},
        409: {"description": "the source is not checked (a seed article, no URL, or removed)"},
    },
)
async def check_source(source_id: str = Path(..., max_length=64)):
    """Check one feed or dataset source now (admin), through the same check as the scheduler; answers
    the outcome. A dataset source's changed file is imported (``import_id``). A failed fetch, a
    malformed feed or a refused dataset file is an outcome with ``status: error``, not an HTTP error."""
    with _problems(source_id):
        outcome = await check.check_now(source_id, settings=get_settings())
    return CheckOutcomePublic.model_validate(outcome, from_attributes=True)


@router.get("/items", response_model=Page[ItemPublic])
def list_items(
    source: str | None = Query(None, pattern=SLUG, description="only this source's items"),
    mentions: str | None = Query(None, pattern=SLUG, description="only items naming this entity id"),
    since: datetime | None = Query(
        None,
        description="ISO 8601 date-time; items published (or first seen) at "
        "or after it; without an offset, UTC",
    ),
    q: str | None = Query(
        None,
        min_length=1,
        max_length=200,
        description="search: items whose title or summary holds every word, compared NFKC-normalised, "
        "case-folded and without accents (Chinese words are found inside longer text); most relevant first",
    ),
    limit: int = LimitQ,
    cursor: str | None = CursorQ,
    session: Session = ReadSession,
):
    """Feed items, newest first (publication time, or first-seen time for undated items); with ``q``, the
    items matching the search, most relevant first."""
    if q is not None and "\x00" in q:
        raise invalid("q", "must not contain NUL characters")
    if since is not None:
        try:
            since = as_utc(since)
        except OverflowError as exc:
            raise invalid("since", "date-time out of range") from exc
    with _problems():
        page = service.list_items(
            session=session, source_id=source, mentions=mentions, since=since, q=q, cursor=cursor, limit=limit
        )
    # Written from the rows as they are (the model's bytes, kit.rows): no model validated per item.
    return json_response(page)


@router.get("/items/{item_id}", response_model=ItemDetail, responses={404: {"description": "unknown id"}})
def get_item(item_id: int = Path(..., ge=1, le=ITEM_ID_MAX), session: Session = ReadSession):
    """One item with its full text and the entities it mentions."""
    item = service.get_item(session=session, item_id=item_id)
    if item is None:
        raise NotFound("item", str(item_id))
    return item
