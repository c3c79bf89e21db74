"""How far a source is trusted, from the maker of the thing reported to an independent party."""

from __future__ import annotations

from typing import Literal, get_args

Trust = Literal["vendor", "press", "analyst", "independent"]
TRUST_LEVELS: tuple[Trust, ...] = get_args(Trust)
