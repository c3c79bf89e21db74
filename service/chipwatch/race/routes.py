"""The race read models: ``/v1/race`` and ``/v1/race/scorecard``."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query, Request

from chipwatch.db import session_scope
from chipwatch.kit.auth import require_reader
from chipwatch.kit.errors import invalid
from chipwatch.kit.httpcache import cached_json
from chipwatch.kit.query import require_choice
from chipwatch.race import leaderboard as leaderboard_service
from chipwatch.race import service
from chipwatch.race.schemas import Leaderboard, Race, Scorecard
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
    """Per model: tok/s per kW, per-kW ratio, single-user speed and iso-interactivity throughput, each
    with its verification level and source.  422 when ``chip`` or ``baseline`` is not a known chip."""

    def build():
        with session_scope(write=False) as session:
            try:
                return service.build_scorecard(session=session, chip=chip, baseline=baseline)
            except service.UnknownChip as exc:
                raise invalid(exc.field, f"no chip with id {exc.chip_id!r}") from exc

    return await cached_json(request, build)


@router.get("/leaderboard", response_model=Leaderboard, responses={304: {"description": "ETag matched"}})
async def leaderboard(
    request: Request,
    benchmark: str = Query(leaderboard_service.DEFAULT_BENCHMARK, pattern=SLUG, max_length=SLUG_MAX_LENGTH,
                           description="benchmark id, e.g. mlperf-inference"),
    model: str | None = Query(None, max_length=200, description="model id, or the model as results name it "
                              "(llama2-70b-99)"),
    scenario: str | None = Query(None, max_length=64, description="scenario / operating point, e.g. offline"),
    metric: str = Query(
        leaderboard_service.DEFAULT_METRIC,
        pattern=r"^[a-z][a-z0-9_]{0,63}$",
        description="a stated metric (tokens_per_s, samples_per_s, output_tokens_per_s...) or a derived "
        "one: tokens_per_s_per_accelerator, tokens_per_s_per_kw",
    ),
    limit: int = Query(50, ge=1, le=500, description="at most this many chips"),
):
    """The best result per chip for a benchmark, model, scenario and metric, best first, each with its
    provenance (dataset, version, row key, link, verification). Current facts only; one chip per result
    (mixed systems and results without a chip are left out); derived metrics are shown with formula and
    inputs. 422 when ``benchmark``, ``metric``, ``model`` or ``scenario`` is unknown."""

    def build():
        with session_scope(write=False) as session:
            try:
                # Unknown values would answer an empty board that reads like "no results yet".
                require_choice("metric", metric, leaderboard_service.known_metrics(session=session))
                if scenario is not None:
                    scenarios = leaderboard_service.known_scenarios(session=session)
                    require_choice("scenario", scenario.casefold(), scenarios)
                if model is not None:
                    models = leaderboard_service.known_models(session=session)
                    if model not in models:  # a model id as given, or a stated name in any case
                        require_choice("model", model.casefold(), models)
                return leaderboard_service.build_leaderboard(
                    session=session, benchmark=benchmark, model=model, scenario=scenario, metric=metric,
                    limit=limit,
                )
            except leaderboard_service.UnknownBenchmark as exc:
                raise invalid("benchmark", f"no benchmark with id {benchmark!r}") from exc

    return await cached_json(request, build)
