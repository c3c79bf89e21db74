"""The race read models: ``/v1/race`` and ``/v1/race/scorecard``."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query, Request

from chipwatch.db import session_scope
from chipwatch.kit.auth import require_reader
from chipwatch.kit.errors import invalid
from chipwatch.kit.httpcache import cached_json
from chipwatch.race import service
from chipwatch.race.schemas import Race, Scorecard
from chipwatch.vocab.slugs import SLUG, SLUG_MAX_LENGTH

router = APIRouter(prefix="/v1/race", tags=["race"], dependencies=[Depends(require_reader)])


@router.get("", response_model=Race, responses={304: {"description": "ETag matched"}})
async def race(request: Request):
    """The state of the race: signals board, headline results with verification level, latest funding.

    Served from a cache that a write in this process invalidates at once; carries an ETag.
    """

    def build():
        with session_scope(write=False) as session:
            return service.build_race(session=session)

    return await cached_json(request, build)


@router.get("/scorecard", response_model=Scorecard, responses={304: {"description": "ETag matched"}})
async def scorecard(
    request: Request,
    chip: str = Query(
        ..., pattern=SLUG, max_length=SLUG_MAX_LENGTH, description="chip or system id, e.g. jalapeno"
    ),
    baseline: str | None = Query(
        None, pattern=SLUG, max_length=SLUG_MAX_LENGTH, description="baseline id, e.g. gb300"
    ),
):
    """Per model: per-kW ratio, single-user speed and iso-interactivity throughput, each with its
    verification level and source.  422 when ``chip`` or ``baseline`` is not a known chip."""

    def build():
        with session_scope(write=False) as session:
            try:
                return service.build_scorecard(session=session, chip=chip, baseline=baseline)
            except service.UnknownChip as exc:
                raise invalid(exc.field, f"no chip with id {exc.chip_id!r}") from exc

    return await cached_json(request, build)
