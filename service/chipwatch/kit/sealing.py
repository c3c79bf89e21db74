"""Secrets encrypted at rest: a column type that stores Fernet tokens, and the keys that open them.

Fernet (``cryptography``) is AES-128-CBC with an HMAC-SHA256 over the token, so a stored value can be
neither read nor altered without a key. The keys come from ``CHIPWATCH_SECRET_KEYS`` (comma-separated
Fernet keys, newest first) or, when that is unset, from ``<data_dir>/secret_key`` (one key a line,
newest first), which is generated with mode 0600 on first use, as the admin token is. The newest key
seals; every listed key opens (``MultiFernet``), which is what lets keys be rotated: add a new key in
front, re-seal (``chipwatch secrets rotate``), then drop the old one.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from sqlalchemy import String
from sqlalchemy.types import TypeDecorator

from chipwatch.config import Settings, get_settings
from chipwatch.kit.files import write_private

KEY_FILE = "secret_key"
SEALED_PREFIX = "gAAAAA"
"""Every Fernet token starts so (version byte 0x80, then the big-endian timestamp's zero high bytes)."""
SEALED_MAX_CHARS = 512
"""Column width: a token of an N-byte secret is about 4/3 * (N + 73) characters (140 for a whsec_ one)."""


class SealError(RuntimeError):
    """No usable key, a malformed key, or a stored value that none of the keys opens."""


def key_path(settings: Settings) -> Path:
    """Where the generated keys are kept: ``<data_dir>/secret_key`` (mode 0600)."""
    return settings.data_dir / KEY_FILE


def _file_keys(path: Path) -> list[str]:
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError:
        return []
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def configured_keys(settings: Settings) -> tuple[list[str], str]:
    """The keys in force, newest first, and where they come from (for messages).

    ``CHIPWATCH_SECRET_KEYS`` wins over the key file; an empty list means neither has a key yet.
    """
    if settings.secret_keys:
        keys = [k.strip() for k in settings.secret_keys.split(",") if k.strip()]
        return keys, "CHIPWATCH_SECRET_KEYS"
    path = key_path(settings)
    return _file_keys(path), str(path)


def ensure_secret_key(settings: Settings) -> bool:
    """Generate ``<data_dir>/secret_key`` (mode 0600) when no key is configured; True if it did.

    Two processes starting at once cannot both write it: the file is created exclusively and the loser
    reads the winner's key.
    """
    if configured_keys(settings)[0]:
        return False
    try:
        write_private(key_path(settings), Fernet.generate_key().decode("ascii") + "\n", exclusive=True)
    except FileExistsError:
        return False
    return True


def write_key_file(settings: Settings, keys: list[str]) -> None:
    """Replace the key file's content with ``keys`` (newest first), atomically, mode 0600."""
    write_private(key_path(settings), "".join(f"{k}\n" for k in keys))


def new_key() -> str:
    """A fresh Fernet key: 32 random bytes, URL-safe base64 (44 characters)."""
    return Fernet.generate_key().decode("ascii")


_cache: dict[tuple[Any, ...], MultiFernet] = {}
_cache_lock = threading.Lock()


def _fingerprint(settings: Settings) -> tuple[Any, ...]:
    # The key file is re-read when it changes (a rotation by another process), never on every call.
    if settings.secret_keys:
        return ("env", settings.secret_keys)
    path = key_path(settings)
    try:
        info = path.stat()
    except FileNotFoundError:
        return ("file", str(path), None)
    return ("file", str(path), info.st_ino, info.st_mtime_ns, info.st_size)


def keyring(settings: Settings | None = None) -> MultiFernet:
    """The keys in force as a ``MultiFernet`` (seals with the first, opens with any).

    Generates the key file on first use when no key is configured. Raises :class:`SealError` for a key
    that is not a Fernet key.
    """
    settings = settings or get_settings()
    if not settings.secret_keys:
        ensure_secret_key(settings)
    fingerprint = _fingerprint(settings)
    with _cache_lock:
        ring = _cache.get(fingerprint)
    if ring is not None:
        return ring
    keys, origin = configured_keys(settings)
    if not keys:
        raise SealError(f"no secret key in {origin}")
    fernets = []
    for position, key in enumerate(keys, start=1):
        try:
            fernets.append(Fernet(key.encode("ascii")))
        except (ValueError, UnicodeEncodeError) as exc:
            raise SealError(
                f"key {position} of {origin} is not a Fernet key (32 bytes, URL-safe base64)"
            ) from exc
    ring = MultiFernet(fernets)
    with _cache_lock:
        _cache.clear()
        _cache[fingerprint] = ring
    return ring


def forget_keys() -> None:
    """Drop the cached keyring (after the key file was rewritten in this process)."""
    with _cache_lock:
        _cache.clear()


def is_sealed(value: str | None) -> bool:
    """True when ``value`` is a Fernet token (as stored), False for clear text or None."""
    return value is not None and value.startswith(SEALED_PREFIX)


def seal(text: str, settings: Settings | None = None) -> str:
    """``text`` encrypted under the newest key (a Fernet token, ASCII)."""
    return keyring(settings).encrypt(text.encode("utf-8")).decode("ascii")


def unseal(token: str, settings: Settings | None = None) -> str:
    """The clear text of a Fernet token; raises :class:`SealError` when no configured key opens it."""
    settings = settings or get_settings()
    try:
        return keyring(settings).decrypt(token.encode("ascii")).decode("utf-8")
    except (InvalidToken, UnicodeError) as exc:
        origin = configured_keys(settings)[1]
        raise SealError(
            f"a stored secret cannot be decrypted with the keys of {origin}: the key that sealed it "
            "is missing (restore it, or list it after the new key while rotating)"
        ) from exc


def sealed_by_newest(token: str, settings: Settings | None = None) -> bool:
    """True when the newest key alone opens ``token`` (rotation is complete for it)."""
    settings = settings or get_settings()
    newest = configured_keys(settings)[0][0]
    try:
        Fernet(newest.encode("ascii")).decrypt(token.encode("ascii"))
    except InvalidToken:
        return False
    return True


class SealedText(TypeDecorator):
    """A text column whose values are stored sealed (Fernet) and read back clear.

    Writing seals under the newest key; reading opens with any configured key. A stored value that is
    not a token is returned as it is: rows written before encryption existed, until the migration that
    seals them has run.
    """

    impl = String(SEALED_MAX_CHARS)
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: Any) -> str | None:
        return None if value is None else seal(value)

    def process_result_value(self, value: str | None, dialect: Any) -> str | None:
        if value is None or not is_sealed(value):
            return value
        return unseal(value)


__all__ = [
    "KEY_FILE",
    "SealError",
    "SealedText",
    "configured_keys",
    "ensure_secret_key",
    "forget_keys",
    "is_sealed",
    "key_path",
    "keyring",
    "new_key",
    "seal",
    "sealed_by_newest",
    "unseal",
    "write_key_file",
]
