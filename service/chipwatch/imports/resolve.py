"""Names in dataset rows -> knowledge-base ids, through the alias table and the entities' own names.

Every chip, vendor and model is known by its id, its name and its aliases; the ``aliases`` table adds
names datasets use (``AMD Instinct MI300X 192GB HBM3``). Matching follows
:mod:`chipwatch.datasets.hardware_names`: whole tokens, exact first, else the longest alias found inside
the name, and two different ids at that length are ambiguous. A chip alias found inside a longer name
must also be specific enough (rule 4 there: a generation name such as Blackwell does not name a part
with a model number of its own; a part of another form factor is another chip). An alias whose target
does not exist is ignored (a seeded alias may name a chip only a dataset import creates).
:class:`Resolver` is pure once built; :func:`load_resolver` reads the tables.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson
from sqlalchemy import String, cast, literal, null, select, union_all
from sqlmodel import Session

from chipwatch.datasets.hardware_names import AliasTable, HardwarePart, ResolvedPart, hardware_tokens
from chipwatch.imports.models import Alias
from chipwatch.knowledge.models import Chip, Model, Vendor


@dataclass(frozen=True, slots=True)
class Unresolved:
    """A name that maps to no id: its kind (``chip``, ``vendor``, ``model``) and why."""

    name: str
    kind: str
    reason: str


def token_key(name: str) -> str:
    """The comparable form of a name (its tokens joined by spaces); empty when it has none."""
    return " ".join(hardware_tokens(name))


@dataclass(slots=True)
class _Names:
    """Names -> ids of one kind: a token table for longest matches and the exact token sequences."""

    hardware: bool = False
    pairs: list[tuple[str, str]] = field(default_factory=list)
    table: AliasTable | None = None
    exact: dict[str, set[str]] = field(default_factory=dict)

    def add(self, name: str | None, target: str) -> None:
        if name and name.strip():
            self.pairs.append((name, target))
            key = token_key(name)
            if key:
                self.exact.setdefault(key, set()).add(target)

    def matcher(self) -> AliasTable:
        """The token table, built on first use (an import of funding rounds never matches a chip)."""
        if self.table is None:
            self.table = AliasTable(self.pairs, hardware=self.hardware)
        return self.table


class Resolver:
    """Chip, vendor and model names -> ids (see the module docstring). Build with :func:`load_resolver`
    or from plain pairs in tests; every method is pure."""

    def __init__(
        self,
        *,
        chips: Iterable[tuple[str, str]] = (),
        vendors: Iterable[tuple[str, str]] = (),
        models: Iterable[tuple[str, str]] = (),
        platforms: dict[str, str | None] | None = None,
    ) -> None:
        self._names = {"chip": _Names(hardware=True), "vendor": _Names(), "model": _Names()}
        for kind, pairs in (("chip", chips), ("vendor", vendors), ("model", models)):
            for name, target in pairs:
                self._names[kind].add(name, target)
        self.platforms = platforms or {}
        self._seen: dict[tuple[str, str], ResolvedPart] = {}

    def exact(self, kind: str, name: str | None) -> str | None:
        """The one id whose name or alias has exactly ``name``'s tokens, else None."""
        found = self._names[kind].exact.get(token_key(name or ""))
        return next(iter(found)) if found and len(found) == 1 else None

    def part(self, kind: str, name: str, count: int | None = None) -> ResolvedPart:
        """``name`` resolved by the longest-match rule (reason set when unresolved)."""
        # A dataset repeats a handful of names over thousands of rows: each is matched once.
        key = (kind, name)
        found = self._seen.get(key)
        if found is None:
            found = self._seen[key] = self._names[kind].matcher().resolve_part(HardwarePart(name, None))
        if found.count == count:
            return found
        # Built directly: ``dataclasses.replace`` costs several times more, once per row of a dataset.
        return ResolvedPart(found.name, count, found.chip_key, found.alias, found.reason)

    def one(self, kind: str, name: str | None) -> tuple[str | None, Unresolved | None]:
        """``(id, None)`` for a resolved name, ``(None, Unresolved)`` otherwise, ``(None, None)`` for a
        blank name."""
        if name is None or not name.strip():
            return None, None
        resolved = self.part(kind, name)
        if resolved.chip_key is not None:
            return resolved.chip_key, None
        return None, Unresolved(name.strip(), kind, resolved.reason or "no alias matches")

    def platform_of(self, chip_id: str) -> str | None:
        """The platform (accelerator) chip id of a system chip, None when it has none."""
        return self.platforms.get(chip_id)


_cache_lock = threading.Lock()
_cached: tuple[tuple[Any, ...], Resolver] | None = None


@functools.cache
def _names_query():
    """Every name a resolver is built from, in one round trip: ``(origin, kind, id, name, aliases as JSON
    text, platform)`` of chips, vendors and models (origin ``entity``), then ``(origin, kind, target id,
    alias)`` of the alias table (origin ``alias``).

    Aliases come as their stored text, not decoded: the rows are the cache key, compared on every
    import, and decoded only when they changed.
    """
    entities = [
        select(
            literal("entity").label("origin"),
            literal(kind).label("kind"),
            table.id,
            table.name,
            cast(table.aliases, String).label("aliases"),
            (table.platform if table is Chip else null()).label("platform"),
        )
        for kind, table in (("chip", Chip), ("vendor", Vendor), ("model", Model))
    ]
    aliases = select(
        literal("alias").label("origin"),
        Alias.kind,
        Alias.target_id,
        Alias.alias,
        null().label("aliases"),
        null().label("platform"),
    )
    return union_all(*entities, aliases)


def load_resolver(*, session: Session) -> Resolver:
    """A :class:`Resolver` over every chip, vendor and model and every alias whose target exists.

    Cached process-wide, keyed on the names themselves (read in one query each time, undecoded), so an
    alias, chip, vendor or model written by any process or transaction, this one included, is seen by
    the next import; what the cache saves is decoding the names, building the token tables and
    matching each hardware name again (a resolver remembers the names it matched).
    """
    global _cached
    # Rows compare as tuples: no copy of each into a tuple of its own.
    rows = tuple(session.connection().execute(_names_query()).all())  # a Core read, no ORM step
    key = (str(session.get_bind().engine.url), rows)
    with _cache_lock:
        cached = _cached
    if cached is not None and cached[0] == key:
        return cached[1]
    resolver = _build(rows)
    with _cache_lock:
        _cached = (key, resolver)
    return resolver


def clear_resolver_cache() -> None:
    """Forget the cached resolver (tests; the key makes it unnecessary in service)."""
    global _cached
    with _cache_lock:
        _cached = None


def _build(rows: tuple[tuple[Any, ...], ...]) -> Resolver:
    names: dict[str, list[tuple[str, str]]] = {"chip": [], "vendor": [], "model": []}
    platforms: dict[str, str | None] = {}
    aliases: list[tuple[str, str, str]] = []
    for origin, kind, target, name, aliases_json, platform in rows:
        if origin == "alias":
            aliases.append((kind, name, target))
            continue
        own = orjson.loads(aliases_json) if aliases_json else []
        names[kind].extend((alias, target) for alias in (target, name, *(own or [])))
        if kind == "chip":
            platforms[target] = platform
    known = {kind: {target for _name, target in pairs} for kind, pairs in names.items()}
    for kind, alias, target in aliases:
        if target in known.get(kind, set()):
            names[kind].append((alias, target))
    return Resolver(chips=names["chip"], vendors=names["vendor"], models=names["model"], platforms=platforms)
