"""Bearer tokens: the admin token (configured, or generated once into the data directory), the optional
read token, and the request dependencies that check them."""

from __future__ import annotations

import hmac
import secrets
from pathlib import Path

from fastapi import Depends, Request
from starlette.exceptions import HTTPException as StarletteHTTPException

from chipwatch.config import Settings, get_settings
from chipwatch.kit.files import write_private

TOKEN_FILE = "admin_token"


def token_path(settings: Settings) -> Path:
    """Where a generated admin token is kept: ``<data_dir>/admin_token`` (mode 0600)."""
    return settings.data_dir / TOKEN_FILE


def admin_token(settings: Settings) -> str | None:
    """The admin token in force: the setting, else the generated file's content, else None."""
    if settings.admin_token:
        return settings.admin_token
    try:
        return token_path(settings).read_text().strip() or None
    except OSError:
        return None


def ensure_admin_token(settings: Settings) -> str | None:
    """Generate and store a token (mode 0600) when none is configured; return it only if new.

    The caller prints a returned token once; it is never logged.
    """
    if settings.admin_token or admin_token(settings):
        return None
    token = "cw_" + secrets.token_urlsafe(32)
    try:
        write_private(token_path(settings), token + "\n", exclusive=True)
    except FileExistsError:  # another process generated it first: that one is in force
        return None
    return token


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header value, or None."""
    scheme, _, token = (authorization or "").partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


def _same(token: str, expected: str | None) -> bool:
    return expected is not None and hmac.compare_digest(token.encode(), expected.encode())


def may_read(settings: Settings, token: str | None) -> bool:
    """True when reads are open (no ``CHIPWATCH_READ_TOKEN``) or ``token`` is the read or admin token."""
    if not settings.read_token:
        return True
    return token is not None and (_same(token, settings.read_token) or _same(token, admin_token(settings)))


def may_scrape(settings: Settings, token: str | None) -> bool:
    """Who may read ``/metrics``: with ``CHIPWATCH_METRICS_TOKEN`` its holder (or the admin), else whoever
    may read the API (:func:`may_read`)."""
    if settings.metrics_token:
        return token is not None and (
            _same(token, settings.metrics_token) or _same(token, admin_token(settings))
        )
    return may_read(settings, token)


async def require_admin(request: Request) -> None:
    """Writes need ``Authorization: Bearer <admin token>``; 401 otherwise."""
    token = bearer_token(request.headers.get("authorization"))
    if token is None or not _same(token, admin_token(get_settings())):
        raise StarletteHTTPException(401, "admin token required", headers={"WWW-Authenticate": "Bearer"})


async def require_reader(request: Request) -> None:
    """Reads are open unless ``CHIPWATCH_READ_TOKEN`` is set; then the read or admin token is needed."""
    if not may_read(get_settings(), bearer_token(request.headers.get("authorization"))):
        raise StarletteHTTPException(401, "read token required", headers={"WWW-Authenticate": "Bearer"})


async def require_scraper(request: Request) -> None:
    """``/metrics`` needs the metrics token when one is set, else the read token when one is set."""
    if not may_scrape(get_settings(), bearer_token(request.headers.get("authorization"))):
        raise StarletteHTTPException(401, "metrics token required", headers={"WWW-Authenticate": "Bearer"})


AdminDep = Depends(require_admin)
ReaderDep = Depends(require_reader)
