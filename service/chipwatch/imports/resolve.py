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

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from sqlalchemy import select
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
        return found if found.count == count else replace(found, count=count)

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


def load_resolver(*, session: Session) -> Resolver:
    """A :class:`Resolver` over every chip, vendor and model and every alias whose target exists."""
    names: dict[str, list[tuple[str, str]]] = {"chip": [], "vendor": [], "model": []}
    for kind, table in (("chip", Chip), ("vendor", Vendor), ("model", Model)):
        for row in session.execute(select(table.id, table.name, table.aliases)):
            names[kind].extend((name, row.id) for name in (row.id, row.name, *(row.aliases or [])))
    known = {kind: {target for _name, target in pairs} for kind, pairs in names.items()}
    for alias in session.scalars(select(Alias)):
        if alias.target_id in known.get(alias.kind, set()):
            names[alias.kind].append((alias.alias, alias.target_id))
    platforms = {row.id: row.platform for row in session.execute(select(Chip.id, Chip.platform))}
    return Resolver(chips=names["chip"], vendors=names["vendor"], models=names["model"], platforms=platforms)
