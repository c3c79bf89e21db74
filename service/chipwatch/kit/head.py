"""``HEAD`` answered as ``GET`` without the body (RFC 9110, section 9.3.2).

FastAPI routes declare ``GET`` only, so a ``HEAD`` (an uptime monitor's probe of ``/healthz``, a client
checking a feed's ``ETag``) was a 405. :class:`HeadAsGetMiddleware` runs the ``GET`` route and sends its
status and headers (``Content-Length``, ``ETag``, ``Cache-Control`` as a ``GET`` has them) with an empty
body, so the two answers never disagree.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["HeadAsGetMiddleware"]


class HeadAsGetMiddleware:
    """ASGI middleware: an HTTP ``HEAD`` goes to the app as ``GET``; the response body is dropped."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def send_headers_only(message: Message) -> None:
            if message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return  # the rest of the body is not sent either; the last part ends the response
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, send_headers_only)
