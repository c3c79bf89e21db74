"""Named entities of the knowledge base whose names and aliases are matched in text.

``EntityKind`` is the singular word stored with a mention (``chip``); the collection is the plural the
API and the seed files use (``chips``). The tables behind them are
``chipwatch.knowledge.models.ENTITY_TABLES``.
"""

from __future__ import annotations

from typing import Literal, get_args

EntityKind = Literal["vendor", "chip", "model", "benchmark"]
ENTITY_KINDS: tuple[EntityKind, ...] = get_args(EntityKind)
ENTITY_COLLECTIONS: dict[EntityKind, str] = {kind: f"{kind}s" for kind in ENTITY_KINDS}
