"""Files that hold data or secrets (the SQLite database, the admin token, the secret key) are the owner's
alone: directories this service creates are mode 0700, its files 0600, whatever the umask."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def private_dir(path: Path) -> Path:
    """Create ``path`` (and missing parents) with mode 0700; returns it.

    Only directories created here get 0700: an existing directory (the user's own ``data``, ``/tmp``) is
    left as it is. Raises ``OSError`` when a directory cannot be created.
    """
    missing: list[Path] = []
    probe = path
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for directory in reversed(missing):
        directory.mkdir(mode=PRIVATE_DIR_MODE, exist_ok=True)
        os.chmod(directory, PRIVATE_DIR_MODE)  # mkdir's mode is filtered by the umask
    return path


def write_private(path: Path, text: str, *, exclusive: bool = False) -> None:
    """Write ``text`` to ``path`` with mode 0600 (its directory is created 0700 if missing).

    With ``exclusive`` the file must not exist (``FileExistsError`` otherwise), so two processes that
    both generate a first key or token cannot overwrite each other. Otherwise the new content replaces
    the old one atomically (a temporary file renamed over it). Raises ``OSError``.
    """
    private_dir(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE_MODE)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        # Both ways the file appears whole: a reader never sees it created but not yet written.
        if exclusive:
            os.link(tmp, path)  # FileExistsError when it exists
        else:
            os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def restrict_file(path: Path) -> bool:
    """Take group and other permissions off an existing file of ours; True when the mode changed.

    For files another library creates (SQLite creates the database with the umask's mode; its ``-wal``
    and ``-shm`` files then copy the database's mode). A missing file, or one this user does not own, is
    left alone.
    """
    try:
        info = path.stat()
    except FileNotFoundError:
        return False
    if info.st_uid != os.getuid() or not stat.S_IMODE(info.st_mode) & 0o077:
        return False
    os.chmod(path, PRIVATE_FILE_MODE)
    return True


__all__ = ["PRIVATE_DIR_MODE", "PRIVATE_FILE_MODE", "private_dir", "restrict_file", "write_private"]
