"""Session cookies of the pages: signed with a key derived from the admin token, expiring, never
standing for more than they say."""

from __future__ import annotations

import time
from pathlib import Path

from chipwatch.config import Settings
from chipwatch.pages.session import ANONYMOUS, csrf_ok, new_session, read_session, role_for_token


def _settings(tmp_path: Path, admin: str = "admin-1", read: str | None = "read-1") -> Settings:
    return Settings(data_dir=tmp_path, admin_token=admin, read_token=read)


def test_tokens_map_to_roles(tmp_path):
    settings = _settings(tmp_path)
    assert role_for_token(settings, "admin-1") == "admin"
    assert role_for_token(settings, " read-1 ") == "reader"
    assert role_for_token(settings, "admin-2") is None and role_for_token(settings, "") is None


def test_a_session_reads_back_as_its_role_with_its_csrf_token(tmp_path):
    settings = _settings(tmp_path)
    value, viewer = new_session(settings, "admin")
    assert read_session(settings, value) == viewer and viewer.is_admin
    assert len(viewer.csrf) >= 40 and csrf_ok(viewer, viewer.csrf) and not csrf_ok(viewer, "x")
    assert not csrf_ok(viewer, None) and not csrf_ok(ANONYMOUS, viewer.csrf)


def test_a_tampered_expired_or_foreign_cookie_is_no_session(tmp_path):
    settings = _settings(tmp_path)
    value, _viewer = new_session(settings, "reader")
    payload, _, signature = value.rpartition(".")
    assert read_session(settings, payload + "." + signature[::-1]) is ANONYMOUS
    assert read_session(settings, value.replace(value[0], "A" if value[0] != "A" else "B", 1)) is ANONYMOUS
    # signed with another admin token: rotating the admin token ends every session
    assert read_session(_settings(tmp_path, admin="admin-2"), value) is ANONYMOUS
    time.sleep(2.1)  # the signature carries whole seconds
    assert read_session(settings, value, max_age_s=1) is ANONYMOUS
    assert read_session(settings, value).role == "reader"
    assert read_session(settings, None) is ANONYMOUS and read_session(settings, "garbage") is ANONYMOUS
