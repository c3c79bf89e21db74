"""Data files are the owner's alone: what `chipwatch init` and the first webhook create is mode 0600 in a
0700 directory, whatever the umask."""

from __future__ import annotations

import os
import stat

import pytest
from typer.testing import CliRunner

from chipwatch.cli import app
from chipwatch.config import get_settings
from chipwatch.db import dispose_engines
from chipwatch.kit.files import private_dir, restrict_file, write_private
from tests.fixtures.database import postgres_url


def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def open_umask():
    old = os.umask(0o022)  # the common default: files 0644, directories 0755
    yield
    os.umask(old)


@pytest.mark.skipif(bool(postgres_url()), reason="the embedded SQLite file is what this checks")
def test_init_creates_the_database_and_token_owner_only(tmp_path, monkeypatch, open_umask):
    data_dir = tmp_path / "fresh" / "data"
    monkeypatch.setenv("CHIPWATCH_DATA_DIR", str(data_dir))
    monkeypatch.delenv("CHIPWATCH_DATABASE_URL", raising=False)
    monkeypatch.delenv("CHIPWATCH_ADMIN_TOKEN", raising=False)
    get_settings.cache_clear()
    dispose_engines()
    try:
        result = CliRunner().invoke(app, ["init"], terminal_width=200)
    finally:
        dispose_engines()
        get_settings.cache_clear()
    assert result.exit_code == 0, result.output
    assert _mode(data_dir) == 0o700
    assert _mode(data_dir / "chipwatch.db") == 0o600
    assert _mode(data_dir / "admin_token") == 0o600
    for end in ("-wal", "-shm"):
        wal = data_dir / f"chipwatch.db{end}"
        if wal.exists():
            assert _mode(wal) == 0o600


def test_an_existing_world_readable_file_is_tightened(tmp_path, open_umask):
    path = tmp_path / "old.db"
    path.write_text("x")
    assert _mode(path) == 0o644
    assert restrict_file(path) is True
    assert _mode(path) == 0o600
    assert restrict_file(path) is False  # already private: nothing to do
    assert restrict_file(tmp_path / "missing") is False


def test_private_dir_and_files_ignore_the_umask_but_leave_existing_directories(tmp_path, open_umask):
    existing = tmp_path / "home"
    existing.mkdir(mode=0o755)
    target = existing / "a" / "b"
    private_dir(target)
    assert (_mode(existing / "a"), _mode(target)) == (0o700, 0o700)
    assert _mode(existing) == 0o755  # it existed before: not ours to change
    write_private(target / "key", "k1\n", exclusive=True)
    assert _mode(target / "key") == 0o600
    with pytest.raises(FileExistsError):
        write_private(target / "key", "k2\n", exclusive=True)
    write_private(target / "key", "k3\n")
    assert (target / "key").read_text() == "k3\n" and _mode(target / "key") == 0o600
