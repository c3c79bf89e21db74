"""Hardware names -> chip keys and counts, through an alias table the caller passes in.

Datasets name one chip many ways (``AMD Instinct MI300X-NPS1-SPX-192GB-750W`` in MLPerf v4.1, ``AMD
Instinct MI300X 192GB HBM3`` in v5.1, ``AMD Instinct MI300X`` at Epoch). The rule, in order:

1. Split: ``A (x32), B (x16)`` is two parts with counts; any other text is one part whose count the
   caller supplies (MLPerf's accelerators per node times nodes); an empty name is no part at all.
2. Normalise each part to tokens: casefold, drop ``(R)``/``(TM)`` marks and brackets, split on anything
   that is not a letter, digit or dot (``MI300X-NPS1`` is ``mi300x nps1``).
3. An alias whose tokens equal the part's tokens resolves it. Otherwise the aliases whose tokens occur
   as one contiguous run inside the part's tokens are candidates; the longest run wins. Tokens are
   compared whole, so ``b200`` never matches ``gb200``.
4. No candidate, or longest candidates naming different chips: the part is unresolved and says why.
   Nothing is guessed: a name that maps to nothing stays a name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

_MARKS = re.compile(r"\((?:r|tm|c)\)|[®™©]", re.IGNORECASE)
_TOKEN = re.compile(r"[0-9a-z.]+")
_PART_WITH_COUNT = re.compile(r"\s*(?P<name>[^,]*?\S)\s*\(x\s*(?P<count>\d+)\s*\)\s*(?:,|$)", re.IGNORECASE)


@lru_cache(maxsize=16384)
def hardware_tokens(name: str) -> tuple[str, ...]:
    """The comparable tokens of a hardware name (rule 2 of the module docstring).

    Cached: every import builds its alias table from the same few thousand names, and datasets repeat
    a handful of hardware names over thousands of rows.
    """
    folded = _MARKS.sub(" ", name.casefold())
    stripped = (token.strip(".") for token in _TOKEN.findall(folded))
    return tuple(token for token in stripped if token)


@dataclass(frozen=True, slots=True)
class HardwarePart:
    """One hardware name from a possibly mixed field, with its count (None when not stated)."""

    name: str
    count: int | None = None


def split_hardware(text: str | None, *, count: int | None = None) -> tuple[HardwarePart, ...]:
    """The hardware parts named by ``text`` (rule 1): ``()`` for a blank name; every part of a
    ``Name (xN), Name (xM)`` list with its own count; otherwise one part carrying ``count``."""
    if text is None or not text.strip():
        return ()
    stripped = text.strip()
    if "(x" not in stripped.replace("(X", "(x"):
        return (HardwarePart(stripped, count),)
    parts: list[HardwarePart] = []
    position = 0
    for match in _PART_WITH_COUNT.finditer(stripped):
        if match.start() != position:
            break
        parts.append(HardwarePart(match["name"].strip(), int(match["count"])))
        position = match.end()
    if parts and position == len(stripped):
        return tuple(parts)
    return (HardwarePart(stripped, count),)


@dataclass(frozen=True, slots=True)
class ResolvedPart:
    """One part of a hardware name and what it resolved to.

    ``chip_key`` is None when unresolved, and ``reason`` then says why; ``alias`` is the alias that
    matched.
    """

    name: str
    count: int | None
    chip_key: str | None
    alias: str | None = None
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class Resolution:
    """A hardware field resolved: every part, in the order the field names them."""

    text: str
    parts: tuple[ResolvedPart, ...]

    @property
    def resolved(self) -> bool:
        """True when every part names a chip (a blank field, with no parts, is resolved to nothing)."""
        return all(part.chip_key is not None for part in self.parts)

    @property
    def chip_counts(self) -> dict[str, int | None]:
        """Chip key -> total count over the resolved parts (None when any part's count is unknown)."""
        totals: dict[str, int | None] = {}
        for part in self.parts:
            if part.chip_key is None:
                continue
            previous = totals.get(part.chip_key, 0)
            totals[part.chip_key] = None if previous is None or part.count is None else previous + part.count
        return totals

    @property
    def unresolved(self) -> tuple[str, ...]:
        """Names of the parts that resolved to no chip."""
        return tuple(part.name for part in self.parts if part.chip_key is None)


class AliasTable:
    """Alias -> chip key, compared by tokens. Build once per import; :meth:`resolve` is pure."""

    def __init__(self, aliases: Mapping[str, str] | Iterable[tuple[str, str]]) -> None:
        pairs = aliases.items() if isinstance(aliases, Mapping) else aliases
        self._exact: dict[tuple[str, ...], set[str]] = {}
        self._names: dict[tuple[str, ...], str] = {}
        for alias, chip_key in pairs:
            tokens = hardware_tokens(alias)
            if tokens:
                self._exact.setdefault(tokens, set()).add(chip_key)
                self._names.setdefault(tokens, alias)
        self._longest = max((len(tokens) for tokens in self._exact), default=0)

    def __len__(self) -> int:
        return len(self._exact)

    def _candidates(self, tokens: tuple[str, ...]) -> tuple[int, dict[tuple[str, ...], set[str]]]:
        for width in range(min(self._longest, len(tokens)), 0, -1):
            found = {
                run: self._exact[run]
                for start in range(len(tokens) - width + 1)
                if (run := tokens[start : start + width]) in self._exact
            }
            if found:
                return width, found
        return 0, {}

    def resolve_part(self, part: HardwarePart) -> ResolvedPart:
        """``part`` resolved by rules 3 and 4 of the module docstring."""
        tokens = hardware_tokens(part.name)
        if not tokens:
            return ResolvedPart(part.name, part.count, None, reason="no letters or digits to match")
        _width, found = self._candidates(tokens)
        chips = set().union(*found.values()) if found else set()
        if len(chips) == 1:
            run = next(iter(found))
            return ResolvedPart(part.name, part.count, next(iter(chips)), alias=self._names[run])
        if not chips:
            return ResolvedPart(part.name, part.count, None, reason="no alias matches")
        names = ", ".join(sorted(chips))
        return ResolvedPart(part.name, part.count, None, reason=f"ambiguous: aliases of {names} match")

    def resolve(self, text: str | None, *, count: int | None = None) -> Resolution:
        """Every part of the hardware field ``text`` resolved (rules 1-4); ``count`` is the count of a
        single-name field. A blank field resolves to no parts."""
        parts = split_hardware(text, count=count)
        return Resolution((text or "").strip(), tuple(self.resolve_part(part) for part in parts))
