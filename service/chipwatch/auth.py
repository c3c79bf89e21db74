"""The admin token: from ``CHIPWATCH_ADMIN_TOKEN``, or generated once into the data directory."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from chipwatch.config import Settings

TOKEN_FILE = "admin_token"


def token_path(settings: Settings) -> Path:
    return settings.data_dir / TOKEN_FILE


def admin_token(settings: Settings) -> str | None:
    """The admin token in force: the setting, else the generated file's content, else None."""
    if settings.admin_token:
        return settings.admin_token
    path = token_path(settings)
    try:
        return path.read_text().strip() or None
    except OSError:
        return None


def ensure_admin_token(settings: Settings) -> str | None:
    """Generate and store a token (mode 0600) when none is configured; return it only if new.

    The caller prints a returned token once; it is never logged.
    """
    if settings.admin_token or admin_token(settings):
        return None
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    token = "cw_" + secrets.token_urlsafe(32)
    path = token_path(settings)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(token + "\n")
    return token
