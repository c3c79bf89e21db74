"""Templates to bytes, and pages answered through the read cache the JSON API uses.

A page seen without an admin session is the same for everyone, so its bytes are kept in
:data:`~chipwatch.kit.httpcache.read_cache` under the page's path and query: a write committed in this
process rebuilds it before the next reader sees it, and other processes' writes within the cache's
TTL, exactly as for the JSON reads. An admin's page carries forms with the session's CSRF token, so it
is built for each request and never cached.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import Request
from fastapi.responses import Response
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.concurrency import run_in_threadpool

from chipwatch import __version__
from chipwatch.config import get_settings
from chipwatch.kit.auth import bearer_token, may_read
from chipwatch.kit.httpcache import CACHE_CONTROL, cache_key, etag_matches, etag_response, read_cache
from chipwatch.pages import charts, views
from chipwatch.pages.session import COOKIE_NAME, Viewer

HTML = "text/html; charset=utf-8"
PAGE_KEY_PREFIX = "page:"
SECURITY_HEADERS = {
    # Every asset comes from the service itself; inline styles and scripts are not used.
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
        "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}

_RAW_SECURITY_HEADERS = [(k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]

environment = Environment(
    loader=PackageLoader("chipwatch.pages", "templates"),
    autoescape=select_autoescape(["html"]),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
environment.filters.update(
    num=lambda v: "\u2014" if v is None else charts.format_number(v),
    when=views.when,
    money=views.money,
    duration=views.duration,
    words=lambda v: (v or "").replace("_", " "),
)
environment.globals.update(
    version=__version__,
    marker=charts.marker_svg,
    verification_labels=views.VERIFICATION_LABELS,
)


def render(template: str, viewer: Viewer, **context: Any) -> bytes:
    """``template`` rendered with ``context`` and the viewer (UTF-8 bytes)."""
    return environment.get_template(template).render(viewer=viewer, **context).encode()


def html_response(
    request: Request, body: bytes, *, etag: str | None = None, status_code: int = 200
) -> Response:
    """An HTML page with its ETag (a 304 when ``If-None-Match`` names it) and the security headers."""
    if status_code == 200:
        response = etag_response(request.headers.get("if-none-match"), body, media_type=HTML, etag=etag)
    else:
        response = Response(body, status_code=status_code, media_type=HTML)
    response.headers.update(SECURITY_HEADERS)
    return response


class PageCacheMiddleware:
    """Serves pages current in the read cache straight from the ASGI layer, as
    :class:`~chipwatch.kit.httpcache.HotReadMiddleware` does for the hot JSON reads.

    Only a ``GET`` without a session cookie, while reads are open (or the request carries the read or
    admin token), is answered here; anything else (a miss, a stale page, an admin's or reader's session,
    a closed read API) goes to the page's route, which checks, builds and fills the cache under the same
    key.
    """

    def __init__(self, app, skip_prefixes: tuple[str, ...] = ("/v1/", "/static/")) -> None:
        self.app, self.skip_prefixes = app, skip_prefixes

    async def __call__(self, scope, receive, send) -> None:
        if (
            scope["type"] == "http"
            and scope["method"] == "GET"
            and not scope["path"].startswith(self.skip_prefixes)
        ):
            key = PAGE_KEY_PREFIX + cache_key(scope["path"], scope["query_string"].decode("latin-1"))
            hit = read_cache.fresh(key)
            if hit is not None:
                headers = dict(scope["headers"])
                cookies = headers.get(b"cookie", b"").decode("latin-1")
                authorization = headers.get(b"authorization", b"").decode("latin-1")
                if f"{COOKIE_NAME}=" not in cookies and may_read(get_settings(), bearer_token(authorization)):
                    await self._answer(send, headers.get(b"if-none-match"), *hit)
                    return
        await self.app(scope, receive, send)

    @staticmethod
    async def _answer(send, if_none_match: bytes | None, body: bytes, etag: str) -> None:
        out = [(b"etag", etag.encode()), (b"cache-control", CACHE_CONTROL.encode()), *_RAW_SECURITY_HEADERS]
        if etag_matches(if_none_match.decode("latin-1") if if_none_match is not None else None, etag):
            await send({"type": "http.response.start", "status": 304, "headers": out})
            await send({"type": "http.response.body", "body": b""})
            return
        out += [(b"content-type", HTML.encode()), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": out})
        await send({"type": "http.response.body", "body": body})


async def page(request: Request, viewer: Viewer, build: Callable[[Viewer], bytes]) -> Response:
    """Answer with the page ``build(viewer)`` renders: from the read cache for anyone but an admin,
    built afresh (in the thread pool) for an admin."""
    if viewer.is_admin:
        return html_response(request, await run_in_threadpool(build, viewer))
    key = PAGE_KEY_PREFIX + cache_key(request.url.path, request.url.query)
    body, etag = await read_cache.get(key, lambda: build(Viewer()))
    return html_response(request, body, etag=etag)
