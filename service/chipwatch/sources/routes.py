"""Source endpoints: list and detail with health."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Path
from sqlalchemy import select
from sqlmodel import Session

from chipwatch.api import (
    CursorQ,
    LimitQ,
    NotFound,
    Page,
    decode_cursor,
    encode_cursor,
    read_session,
    require_reader,
)
from chipwatch.sources.models import Source

router = APIRouter(prefix="/v1", tags=["sources"], dependencies=[Depends(require_reader)])


@router.get("/sources", response_model=Page[Source])
def list_sources(limit: int = LimitQ, cursor: str | None = CursorQ, session: Session = Depends(read_session)):
    """Sources (feeds and seed articles) ordered by id, each with its health fields."""
    after = decode_cursor(cursor)
    stmt = select(Source).order_by(Source.id).limit(limit + 1)
    if after:
        stmt = stmt.where(Source.id > str(after))
    rows = list(session.scalars(stmt))
    more = len(rows) > limit
    rows = rows[:limit]
    return {"items": rows, "next_cursor": encode_cursor(rows[-1].id) if more else None}


@router.get("/sources/{source_id}", response_model=Source, responses={404: {"description": "unknown id"}})
def get_source(source_id: str = Path(..., max_length=64), session: Session = Depends(read_session)):
    """One source with its health: last check, status, error, failures, next check, validators."""
    source = session.get(Source, source_id)
    if source is None:
        raise NotFound("source", source_id)
    return source
