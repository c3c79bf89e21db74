"""Browser sessions of the pages: the admin (or read) token exchanged for a signed session cookie.

The cookie holds the role (``admin`` or ``reader``) and a per-session CSRF token, signed with a key
derived from the admin token (HMAC-SHA256), so changing the admin token ends every session. It is
HttpOnly, SameSite=Strict and Secure over HTTPS, and lasts :data:`SESSION_MAX_AGE_S`. Every form that
changes something carries the CSRF token, and the change is refused unless it matches the session's
and the request's ``Origin`` (when sent) is the service itself (OWASP CSRF cheat sheet: synchronizer
token plus origin check).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from fastapi import Request, Response
from itsdangerous import BadSignature, URLSafeTimedSerializer

from chipwatch.config import Settings
from chipwatch.kit.auth import admin_token, bearer_token, may_read

COOKIE_NAME = "chipwatch_session"
SESSION_MAX_AGE_S = 8 * 3600
"""A session lasts a working day; then the token is asked for again."""

Role = Literal["admin", "reader"]
_KEY_CONTEXT = b"chipwatch pages session v1"


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who is looking: the session's role (None: no session) and its CSRF token."""

    role: Role | None = None
    csrf: str | None = None

    @property
    def is_admin(self) -> bool:
        """True for an admin session."""
        return self.role == "admin"


ANONYMOUS = Viewer()


def _serializer(settings: Settings) -> URLSafeTimedSerializer | None:
    token = admin_token(settings)
    if not token:
        return None
    key = hmac.new(token.encode(), _KEY_CONTEXT, hashlib.sha256).digest()
    return URLSafeTimedSerializer(key, salt="chipwatch.pages.session")


def _same(given: str, expected: str | None) -> bool:
    return expected is not None and hmac.compare_digest(given.encode(), expected.encode())


def role_for_token(settings: Settings, token: str) -> Role | None:
    """``admin`` for the admin token, ``reader`` for the read token, None for anything else."""
    token = token.strip()
    if not token:
        return None
    if _same(token, admin_token(settings)):
        return "admin"
    if _same(token, settings.read_token):
        return "reader"
    return None


def new_session(settings: Settings, role: Role) -> tuple[str, Viewer]:
    """A fresh signed cookie value for ``role`` and the viewer it stands for (with a new CSRF token).

    Raises ``RuntimeError`` when no admin token is configured (nothing to sign with).
    """
    serializer = _serializer(settings)
    if serializer is None:
        raise RuntimeError("no admin token: sessions cannot be signed")
    viewer = Viewer(role=role, csrf=secrets.token_urlsafe(32))
    return serializer.dumps({"role": role, "csrf": viewer.csrf}), viewer


def read_session(settings: Settings, value: str | None, *, max_age_s: int = SESSION_MAX_AGE_S) -> Viewer:
    """The viewer a cookie value stands for: :data:`ANONYMOUS` when absent, tampered with, signed with
    another admin token, or older than ``max_age_s``."""
    if not value:
        return ANONYMOUS
    serializer = _serializer(settings)
    if serializer is None:
        return ANONYMOUS
    try:
        data = serializer.loads(value, max_age=max_age_s)
    except BadSignature:  # SignatureExpired is a BadSignature too
        return ANONYMOUS
    role, csrf = (data.get("role"), data.get("csrf")) if isinstance(data, dict) else (None, None)
    if role not in ("admin", "reader") or not isinstance(csrf, str):
        return ANONYMOUS
    return Viewer(role=role, csrf=csrf)


def viewer_of(request: Request, settings: Settings) -> Viewer:
    """The viewer of ``request`` (from its session cookie)."""
    return read_session(settings, request.cookies.get(COOKIE_NAME))


def may_view(request: Request, settings: Settings, viewer: Viewer) -> bool:
    """True when the pages may be shown: reads are open, or the viewer has a session, or the request
    carries the read or admin token as a bearer token (scripts and probes)."""
    if viewer.role is not None:
        return True
    return may_read(settings, bearer_token(request.headers.get("authorization")))


def csrf_ok(viewer: Viewer, token: str | None) -> bool:
    """True when ``token`` (from a form) is the session's CSRF token."""
    return viewer.csrf is not None and token is not None and _same(token, viewer.csrf)


def form_origin(request: Request) -> str | None:
    """The origin a form post says it comes from: its ``Origin`` header, else the ``scheme://host[:port]``
    of its ``Referer`` (OWASP's fallback for requests that carry no ``Origin``), else None."""
    origin = request.headers.get("origin")
    if origin is not None:
        return origin
    referer = request.headers.get("referer")
    if referer is None:
        return None
    parts = urlsplit(referer)
    # A Referer that is not an absolute http(s) URL is returned whole, so that same_origin refuses it.
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else referer


def same_origin(request: Request, public_origins: str | None = None) -> bool:
    """False when the request names an origin (``Origin``, else ``Referer``: ``form_origin``) that is not
    this service (a cross-site form post).

    ``public_origins`` (``CHIPWATCH_PUBLIC_ORIGINS``: comma-separated ``scheme://host[:port]``) lists the
    origins the service is reached at; unset, the origin must match the ``Host`` header. Browsers
    send ``Origin`` on every cross-origin POST; a request with neither header (an older browser, a
    script, a privacy setting that strips Referer) is judged by the CSRF token alone.
    """
    origin = form_origin(request)
    if origin is None:
        return True
    if origin == "null":
        return False
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https"):
        return False
    if public_origins:
        allowed = {o.strip().rstrip("/").lower() for o in public_origins.split(",") if o.strip()}
        return f"{parts.scheme}://{parts.netloc}".lower() in allowed
    return parts.netloc.lower() == request.headers.get("host", "").lower()


def set_session_cookie(response: Response, request: Request, value: str) -> None:
    """Attach the session cookie: HttpOnly, SameSite=Strict, path /, Secure over HTTPS."""
    response.set_cookie(
        COOKIE_NAME,
        value,
        max_age=SESSION_MAX_AGE_S,
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


def clear_session_cookie(response: Response, request: Request) -> None:
    """Expire the session cookie (log out)."""
    response.delete_cookie(
        COOKIE_NAME, path="/", httponly=True, samesite="strict", secure=request.url.scheme == "https"
    )
