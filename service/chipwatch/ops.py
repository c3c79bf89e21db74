"""Operations endpoints: liveness, readiness, Prometheus metrics, and the API's own documentation.

With ``CHIPWATCH_READ_TOKEN`` set, nothing about the service is open to a stranger: the OpenAPI
document and its pages need the read (or admin) token, as the API does, and ``/metrics`` needs the
metrics token when one is set, else the read token. ``/healthz`` and ``/readyz`` stay open (a load
balancer probes them) and say nothing but ``ok``/``ready`` and why not.
"""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Depends, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from chipwatch import __version__
from chipwatch.config import get_settings
from chipwatch.db import get_engine
from chipwatch.kit.auth import require_reader, require_scraper
from chipwatch.kit.errors import ApiError
from chipwatch.metrics import render as render_metrics
from chipwatch.migrate import schema_lag
from chipwatch.pages import assets
from chipwatch.pages.session import viewer_of

OPENAPI_URL = "/openapi.json"

ops_router = APIRouter(tags=["ops"])


async def require_docs_reader(request: Request) -> None:
    """The API's documentation is read with the read or admin token, or from a pages session (so a
    browser logged in at ``/login`` opens ``/docs``, and Swagger UI fetches the document with the
    cookie). A browser without either is sent to the login form (303); anything else gets the 401."""
    if viewer_of(request, get_settings()).role is not None:
        return
    try:
        await require_reader(request)
    except StarletteHTTPException:
        if "text/html" in request.headers.get("accept", "") and request.url.path != OPENAPI_URL:
            raise StarletteHTTPException(
                303, "log in to read the documentation",
                headers={"Location": f"/login?next={quote(request.url.path, safe='/')}"},
            ) from None
        raise


docs_router = APIRouter(dependencies=[Depends(require_docs_reader)], include_in_schema=False)


@ops_router.get("/metrics", response_class=PlainTextResponse, dependencies=[Depends(require_scraper)],
                responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}})
def metrics() -> PlainTextResponse:
    """Prometheus metrics: checks by outcome, fetch latency, items stored, transitions, deliveries
    by outcome, delivery latency and queue depth (text exposition format 0.0.4). Needs
    ``CHIPWATCH_METRICS_TOKEN`` when set, else the read token when ``CHIPWATCH_READ_TOKEN`` is set."""
    return PlainTextResponse(render_metrics(), media_type="text/plain; version=0.0.4; charset=utf-8")


@ops_router.get("/healthz")
def healthz() -> dict[str, str]:
    """Liveness: the process answers."""
    return {"status": "ok", "version": __version__}


@ops_router.get("/readyz", responses={503: {"description": "database unreachable or not migrated to head"}})
def readyz():
    """Readiness: the database answers and its schema is at this version's migration head (503 problem
    otherwise, saying which)."""
    try:
        with get_engine().connect() as conn:
            lag = schema_lag(conn)
    except Exception as exc:  # any driver error means not ready
        raise ApiError(503, "Service Unavailable", f"database not ready: {type(exc).__name__}") from exc
    if lag is not None:
        raise ApiError(503, "Service Unavailable", f"database not ready: {lag}")
    return JSONResponse({"status": "ready"})


@docs_router.get(OPENAPI_URL)
def openapi_document(request: Request) -> JSONResponse:
    """The OpenAPI 3.1 document of the API."""
    return JSONResponse(request.app.openapi())


@docs_router.get("/docs")
def swagger_ui(request: Request) -> HTMLResponse:
    """Swagger UI over the OpenAPI document; its scripts and styles are served by the service
    (``chipwatch.pages.assets``), so it works on a closed network."""
    page = get_swagger_ui_html(
        openapi_url=OPENAPI_URL,
        title=f"{request.app.title} - API",
        swagger_js_url=assets.SWAGGER_JS_URL,
        swagger_css_url=assets.SWAGGER_CSS_URL,
        swagger_favicon_url=assets.FAVICON_URL,
        swagger_ui_parameters=assets.SWAGGER_UI_PARAMETERS,
    )
    page.headers["Content-Security-Policy"] = assets.DOCS_CSP
    return page


@docs_router.get("/redoc")
def redoc(request: Request) -> HTMLResponse:
    """ReDoc over the OpenAPI document, with its script served by the service (no CDN, no web fonts)."""
    page = get_redoc_html(
        openapi_url=OPENAPI_URL,
        title=f"{request.app.title} - API",
        redoc_js_url=assets.REDOC_JS_URL,
        redoc_favicon_url=assets.FAVICON_URL,
        with_google_fonts=False,
    )
    page.headers["Content-Security-Policy"] = assets.DOCS_CSP  # ReDoc's logo would come from a CDN
    return page


__all__ = ["OPENAPI_URL", "docs_router", "ops_router"]
