"""Fixtures of the page tests: an admin session over the TestClient, a real seeded server on 127.0.0.1,
and a headless Chromium (skipped with the reason when Debian's ``chromium`` is not installed)."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.database import ADMIN_TOKEN
from tests.pages.browser import CHROMIUM, Browser

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
SCREENSHOT_DIR_ENV = "CHIPWATCH_SCREENSHOT_DIR"


def csrf_of(html: str) -> str:
    """The CSRF token of the first form on an admin's page."""
    match = CSRF.search(html)
    assert match, "no CSRF token on the page"
    return match[1]


def log_in(client, token: str = ADMIN_TOKEN) -> str | None:
    """Log ``client`` in through the login form; returns an admin session's CSRF token (a reader's
    pages carry no forms)."""
    answer = client.post("/login", data={"token": token, "next": "/sources"}, follow_redirects=False)
    assert answer.status_code == 303, answer.text
    return csrf_of(client.get("/sources").text) if token == ADMIN_TOKEN else None


@pytest.fixture
def admin(client):
    """The TestClient logged in as admin; yields ``(client, csrf_token)``."""
    yield client, log_in(client)


@pytest.fixture(scope="session")
def chromium() -> Iterator[Browser]:
    """One headless Chromium for the run (each test opens its own tabs)."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not found: install Debian's chromium package (apt-get install chromium)")
    browser = Browser()
    try:
        yield browser
    finally:
        browser.close()


@pytest.fixture(scope="session")
def screenshot_dir() -> Path:
    """Where screenshots go: ``$CHIPWATCH_SCREENSHOT_DIR`` (e.g. docs/screenshots) or a new temporary
    folder; printed so a run's artefacts can be found."""
    wanted = os.environ.get(SCREENSHOT_DIR_ENV)
    folder = Path(wanted) if wanted else Path(tempfile.mkdtemp(prefix="chipwatch-screenshots-"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"\nscreenshots: {folder}")
    return folder
