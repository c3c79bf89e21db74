"""Rotating the key that seals webhook secrets at rest (``chipwatch secrets rotate``).

With the generated key file, one command does it all: a new key goes in front of the file, every secret
is sealed again under it, and once no stored secret needs an older key the older keys leave the file.
With ``CHIPWATCH_SECRET_KEYS`` the operator owns the keys: they list the new key first (older ones
after it), restart, run the command to re-seal, then drop the older keys (README, "Secrets at rest").
"""

from __future__ import annotations

from dataclasses import dataclass

from chipwatch.config import Settings
from chipwatch.db import session_scope
from chipwatch.kit.sealing import configured_keys, forget_keys, new_key, write_key_file
from chipwatch.webhooks.endpoints import reseal_secrets

MAX_PASSES = 5
"""Re-seal passes before giving up: another pass is needed only when a process that had not yet seen the
new key wrote a secret under the old one meanwhile."""


@dataclass(frozen=True)
class Rotation:
    """What a rotation did: endpoints re-sealed, where the keys live, and the older keys it dropped
    (always 0 with ``CHIPWATCH_SECRET_KEYS``, which the operator edits)."""

    resealed: int
    origin: str
    dropped_keys: int


def _reseal_until_done(settings: Settings) -> int:
    total = 0
    for _ in range(MAX_PASSES):
        with session_scope(settings) as session:
            rewritten = reseal_secrets(session=session)
        total += rewritten
        if rewritten == 0:
            return total
    raise RuntimeError(f"secrets kept being written under an older key through {MAX_PASSES} passes")


def rotate_keys(settings: Settings) -> Rotation:
    """Seal every webhook secret under a new key (key file) or the first listed key (environment).

    Raises ``SealError`` when a stored secret opens with none of the keys (nothing is dropped then),
    ``RuntimeError`` when re-sealing does not settle, and ``OSError`` when the key file cannot be written.
    """
    keys, origin = configured_keys(settings)
    if settings.secret_keys:
        return Rotation(_reseal_until_done(settings), origin, 0)
    # Both keys are listed while secrets move, so every process can open old and new tokens alike.
    write_key_file(settings, [new_key(), *keys])
    forget_keys()
    resealed = _reseal_until_done(settings)
    newest = configured_keys(settings)[0][0]
    write_key_file(settings, [newest])
    forget_keys()
    return Rotation(resealed, origin, len(keys))


__all__ = ["MAX_PASSES", "Rotation", "rotate_keys"]
