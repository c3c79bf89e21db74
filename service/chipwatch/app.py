"""The FastAPI application factory."""

from __future__ import annotations

import gc
import logging
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI

from chipwatch import __version__
from chipwatch.candidates.routes import router as candidates_router
from chipwatch.config import get_settings
from chipwatch.imports.routes import router as imports_router
from chipwatch.kit.errors import PROBLEM_JSON, Problem, install_error_handlers
from chipwatch.kit.head import HeadAsGetMiddleware
from chipwatch.kit.httpcache import HotReadMiddleware
from chipwatch.kit.json_body import check_json_body
from chipwatch.kit.query import reject_unknown_query
from chipwatch.kit.request_limits import RequestLimitMiddleware
from chipwatch.knowledge.history_routes import router as history_router
from chipwatch.knowledge.routes import router as knowledge_router
from chipwatch.ops import docs_router, ops_router
from chipwatch.pages.routes import install as install_pages
from chipwatch.race.routes import router as race_router
from chipwatch.scheduler import collect_jobs, start_scheduler
from chipwatch.signals.routes import router as signals_router
from chipwatch.sources.routes import router as sources_router
from chipwatch.webhooks.jobs import start_dispatcher
from chipwatch.webhooks.routes import router as webhooks_router
from chipwatch.wiring import wire

log = logging.getLogger("chipwatch.app")


def create_app(*, scheduler: bool | None = None, freeze_at_start: bool = False) -> FastAPI:
    """Build the API; with ``scheduler`` (default: the setting) the lifespan runs the scheduled jobs.

    Registers the cross-domain listeners (:func:`chipwatch.wiring.wire`) before any request is served.
    With ``freeze_at_start`` (``chipwatch serve``), the objects start-up made (modules, mappers, schemas,
    compiled statements) are moved out of the cyclic collector's generations once it is done
    (``gc.freeze``): they live as long as the process, and a full collection while serving would
    otherwise walk all of them again.
    """
    settings = get_settings()
    run_scheduler = settings.scheduler_enabled if scheduler is None else scheduler
    wire()

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        sched = dispatcher = None
        if run_scheduler:
            # The dispatcher starts first so events written by the first job runs go out at once.
            dispatcher = await start_dispatcher(settings)
            sched = await start_scheduler(settings, collect_jobs())
        app.state.scheduler, app.state.dispatcher = sched, dispatcher
        if freeze_at_start:
            gc.collect()
            gc.freeze()
        try:
            yield
        finally:
            if sched is not None:
                await sched.stop()
            if dispatcher is not None:
                await dispatcher.stop()
            if freeze_at_start:
                gc.unfreeze()

    app = FastAPI(
        title="chipwatch",
        version=__version__,
        summary="Knowledge base and signal monitor for the AI inference chip race",
        lifespan=lifespan,
        # Served by chipwatch.ops instead, behind the read token when one is set.
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        dependencies=[Depends(reject_unknown_query), Depends(check_json_body)],
    )
    install_error_handlers(app)
    app.add_middleware(HotReadMiddleware)
    # Bodies are capped and write tokens checked before any body is read.
    app.add_middleware(RequestLimitMiddleware)
    # Outermost of ours: a HEAD runs as the GET it asks about, so every layer treats it as that read.
    app.add_middleware(HeadAsGetMiddleware)

    routers = (race_router, signals_router, knowledge_router, history_router, imports_router, sources_router,
               candidates_router, webhooks_router, ops_router, docs_router)
    for router in routers:
        app.include_router(router)
    install_pages(app)  # pages for people at /, their static assets and error pages
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    return app


def create_served_app() -> FastAPI:
    """The app ``chipwatch serve`` runs (uvicorn's factory, in each worker process): :func:`create_app`
    with the scheduler setting and start-up objects frozen out of the collector."""
    return create_app(freeze_at_start=True)


def _openapi(app: FastAPI) -> dict:
    """The OpenAPI schema with every error documented as problem+json (RFC 9457)."""
    if app.openapi_schema:
        return app.openapi_schema
    from fastapi.openapi.utils import get_openapi

    schema = get_openapi(title=app.title, version=app.version, summary=app.summary, routes=app.routes)
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    components["Problem"] = Problem.model_json_schema(ref_template="#/components/schemas/{model}")
    components.pop("HTTPValidationError", None)
    components.pop("ValidationError", None)
    problem = {PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/Problem"}}}
    for path, ops in schema.get("paths", {}).items():
        for method, op in ops.items():
            responses = op.setdefault("responses", {})
            errors = {"422": "invalid parameter or body", "500": "unexpected error"}
            if path.startswith("/v1/"):
                errors["401"] = "missing or wrong token"
            if "{" in path:
                errors["404"] = "unknown id"
            if method in ("post", "patch", "delete", "put"):
                errors["409"] = "conflict with the current state"
                errors["413"] = "request body over the cap (request_max_bytes, or the route's own)"
            if path == "/readyz":
                errors["503"] = "database not ready"
            for code, description in errors.items():
                entry = responses.setdefault(code, {"description": description})
                entry["content"] = problem
            if "304" in responses:
                responses["304"].pop("content", None)
    app.openapi_schema = schema
    return schema
