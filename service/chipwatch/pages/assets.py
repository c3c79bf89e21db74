"""Static assets, served by the service from the installed packages (no CDN).

``/static/...`` is this package's ``static/`` folder (style sheet, the table-sorting script, the icon).
``/static/api-docs/...`` is the Swagger UI and ReDoc distribution shipped in the ``fastapi-offline``
package (MIT; Swagger UI is Apache-2.0, ReDoc MIT), so ``/docs`` and ``/redoc`` work offline.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI
from starlette.staticfiles import StaticFiles

STATIC_URL = "/static"
API_DOCS_URL = "/static/api-docs"
SWAGGER_JS_URL = f"{API_DOCS_URL}/swagger-ui-bundle.js"
SWAGGER_CSS_URL = f"{API_DOCS_URL}/swagger-ui.css"
REDOC_JS_URL = f"{API_DOCS_URL}/redoc.standalone.js"
FAVICON_URL = f"{STATIC_URL}/favicon.svg"
SWAGGER_UI_PARAMETERS = {"validatorUrl": None}
"""Swagger UI's validator badge would fetch an outside service; ``None`` turns it off."""
DOCS_CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; font-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)
"""The API documentation pages may load from the service only: ReDoc's sidebar asks for its maker's logo
from a CDN whatever its options say, and this policy keeps the browser from sending that request. The
pages' own start-up scripts and styles are inline, hence ``'unsafe-inline'`` for them alone."""


def static_dir() -> Path:
    """This package's ``static/`` folder."""
    return Path(str(files("chipwatch.pages") / "static"))


def api_docs_dir() -> Path:
    """The folder of Swagger UI's and ReDoc's files in the installed ``fastapi-offline`` package."""
    return Path(str(files("fastapi_offline") / "static"))


def mount_static(app: FastAPI) -> None:
    """Serve both folders (with ETag and Last-Modified, as Starlette's ``StaticFiles`` does)."""
    # The longer prefix first: a mount matches every path under it.
    app.mount(API_DOCS_URL, StaticFiles(directory=api_docs_dir()), name="api-docs-assets")
    app.mount(STATIC_URL, StaticFiles(directory=static_dir()), name="static")
