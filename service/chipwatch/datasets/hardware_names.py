"""Hardware names -> chip keys and counts, through an alias table the caller passes in.

Datasets name one chip many ways (``AMD Instinct MI300X-NPS1-SPX-192GB-750W`` in MLPerf v4.1, ``AMD
Instinct MI300X 192GB HBM3`` in v5.1, ``AMD Instinct MI300X`` at Epoch). The rule, in order:

1. Split: ``A (x32), B (x16)`` is two parts with counts; any other text is one part whose count the
   caller supplies (MLPerf's accelerators per node times nodes); an empty name is no part at all.
2. Normalise each part to tokens: casefold, drop ``(R)``/``(TM)`` marks and brackets, split on anything
   that is not a letter, digit or dot (``MI300X-NPS1`` is ``mi300x nps1``).
3. An alias whose tokens equal the part's tokens resolves it. Otherwise the aliases whose tokens occur
   as one contiguous run inside the part's tokens are candidates, if specific enough (rule 4); the
   longest run wins. Tokens are compared whole, so ``b200`` never matches ``gb200``.
4. A candidate found inside a longer name must be specific enough to name that part:

   a. An alias of letters only (a generation, family or codename: ``Blackwell``, ``Hopper``) counts
      only when the rest of the name states no model number of its own. ``NVIDIA RTX PRO 6000
      Blackwell Server Edition`` is a card with model number 6000, not the chip the news calls
      Blackwell. A model number is a token holding a digit that is not a quantity with a unit
      (``6000``, ``b300`` are; ``96gb``, ``750w`` are not).
   b. A form factor the name states (SXM, PCIe, NVL, OAM) must not differ from the one the chip's own
      names state: ``NVIDIA H200-NVL-141GB`` is not the chip named ``NVIDIA H200 SXM``, although both
      contain ``H200``. A chip whose names state no form factor accepts any.

5. No candidate, or longest candidates naming different chips: the part is unresolved and says why.
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


# A token with a digit that only states a quantity (memory, power, clock) is no model number.
_QUANTITY = re.compile(r"\d+(?:\.\d+)?(?:[kmgt]b|g|w|kw|[mg]hz|[gt]bps)")
# Form factors NVIDIA and AMD ship one chip in; SXM generations (SXM2..SXM5) are one form for this rule.
_FORM_FACTOR = re.compile(r"(?P<form>sxm|pcie|nvl|oam)\d*")


def is_model_number(token: str) -> bool:
    """True for a token that names a product number (``6000``, ``b300``, ``v5e``), False for words and
    for quantities with a unit (``96gb``, ``750w``): rule 4a of the module docstring."""
    return any(char.isdigit() for char in token) and _QUANTITY.fullmatch(token) is None


def form_factors(tokens: Iterable[str]) -> frozenset[str]:
    """The form factors ``tokens`` state (``sxm``, ``pcie``, ``nvl``, ``oam``): rule 4b."""
    return frozenset(match["form"] for token in tokens if (match := _FORM_FACTOR.fullmatch(token)))


class AliasTable:
    """Alias -> chip key, compared by tokens. Build once per import; :meth:`resolve` is pure.

    ``hardware`` applies rule 4 of the module docstring (set it off for names that are not hardware,
    such as companies, where a model number or a form factor means nothing).
    """

    def __init__(
        self, aliases: Mapping[str, str] | Iterable[tuple[str, str]], *, hardware: bool = True
    ) -> None:
        pairs = aliases.items() if isinstance(aliases, Mapping) else aliases
        self._exact: dict[tuple[str, ...], set[str]] = {}
        self._names: dict[tuple[str, ...], str] = {}
        chip_tokens: dict[str, set[str]] = {}
        for alias, chip_key in pairs:
            tokens = hardware_tokens(alias)
            if tokens:
                self._exact.setdefault(tokens, set()).add(chip_key)
                self._names.setdefault(tokens, alias)
                chip_tokens.setdefault(chip_key, set()).update(tokens)
        self._hardware = hardware
        self._forms = {chip: form_factors(tokens) for chip, tokens in chip_tokens.items()}
        self._longest = max((len(tokens) for tokens in self._exact), default=0)

    def __len__(self) -> int:
        return len(self._exact)

    def _refusal(self, tokens: tuple[str, ...], start: int, width: int) -> str | None:
        """Why the run ``tokens[start:start+width]`` is not specific enough (rule 4), None when it is."""
        run = tokens[start : start + width]
        rest = tokens[:start] + tokens[start + width :]
        if not any(is_model_number(token) for token in run):
            numbers = [token for token in rest if is_model_number(token)]
            if numbers:
                return f"{self._names[run]!r} is too broad: the name has its own model number {numbers[0]!r}"
        stated = form_factors(rest)
        if stated:
            for chip in sorted(self._exact[run]):
                own = self._forms.get(chip, frozenset())
                if own and not own & stated:
                    return (
                        f"form factor differs: the name states {', '.join(sorted(stated)).upper()},"
                        f" {chip} is {', '.join(sorted(own)).upper()}"
                    )
        return None

    def _candidates(self, tokens: tuple[str, ...]) -> tuple[dict[tuple[str, ...], set[str]], str | None]:
        """The longest specific runs of ``tokens`` that are aliases, and the first refusal met."""
        refused: str | None = None
        for width in range(min(self._longest, len(tokens)), 0, -1):
            found: dict[tuple[str, ...], set[str]] = {}
            for start in range(len(tokens) - width + 1):
                run = tokens[start : start + width]
                if run not in self._exact:
                    continue
                reason = self._refusal(tokens, start, width) if self._hardware else None
                if reason is None:
                    found[run] = self._exact[run]
                elif refused is None:
                    refused = reason
            if found:
                return found, refused
        return {}, refused

    def resolve_part(self, part: HardwarePart) -> ResolvedPart:
        """``part`` resolved by rules 3 to 5 of the module docstring."""
        tokens = hardware_tokens(part.name)
        if not tokens:
            return ResolvedPart(part.name, part.count, None, reason="no letters or digits to match")
        exact = self._exact.get(tokens)
        if exact is not None and len(exact) == 1:
            return ResolvedPart(part.name, part.count, next(iter(exact)), alias=self._names[tokens])
        found, refused = self._candidates(tokens)
        chips = set().union(*found.values()) if found else set()
        if len(chips) == 1:
            run = next(iter(found))
            return ResolvedPart(part.name, part.count, next(iter(chips)), alias=self._names[run])
        if not chips:
            return ResolvedPart(part.name, part.count, None, reason=refused or "no alias matches")
        names = ", ".join(sorted(chips))
        return ResolvedPart(part.name, part.count, None, reason=f"ambiguous: aliases of {names} match")

    def resolve(self, text: str | None, *, count: int | None = None) -> Resolution:
        """Every part of the hardware field ``text`` resolved (rules 1-4); ``count`` is the count of a
        single-name field. A blank field resolves to no parts."""
        parts = split_hardware(text, count=count)
        return Resolution((text or "").strip(), tuple(self.resolve_part(part) for part in parts))
