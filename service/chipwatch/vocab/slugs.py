"""Readable ids: lower-case ASCII letters, digits and ``-``, at most 64 characters (``gpt-oss-120b``)."""

from __future__ import annotations

import re
import unicodedata
from typing import Annotated

from pydantic import StringConstraints

SLUG = r"^[a-z0-9][a-z0-9-]{0,63}$"
SLUG_MAX_LENGTH = 64
Slug = Annotated[str, StringConstraints(pattern=SLUG)]  # the pattern bounds the length

_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def slugify(text: str, *, max_length: int = SLUG_MAX_LENGTH) -> str:
    """A readable id from ``text``: ASCII lower-case letters and digits joined by ``-`` (may be empty).

    Accents are dropped (``Jalapeño`` -> ``jalapeno``); characters with no ASCII form vanish.
    """
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return _NOT_SLUG.sub("-", ascii_text).strip("-")[:max_length].strip("-")
