"""Entity mentions in text: which knowledge-base names a text contains, and where (pure: no I/O).

Used by the feed mention linker (over the whole knowledge base: :class:`EntityIndex`, which changes
per entity in milliseconds) and by the signal matcher (over the entities signals name:
:class:`EntityMatcher`, compiled once per rule set). Both match as ``chipwatch.text.phrases`` says.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

from chipwatch.text.normalize import map_span, normalize_text, normalize_with_offsets
from chipwatch.text.phrase_index import PhraseIndex
from chipwatch.text.phrases import PhraseSet

__all__ = ["Entity", "EntityIndex", "EntityMatcher", "Mention", "entity_names"]


@dataclass(frozen=True, slots=True)
class Entity:
    """A knowledge-base entity as the matcher sees it: its id and every name (name and aliases)."""

    id: str
    names: Sequence[str]


@dataclass(frozen=True, slots=True)
class Mention:
    """An entity named in a text: ``span`` indexes the text given to ``EntityMatcher.find``."""

    entity_id: str
    span: tuple[int, int]
    text: str


def entity_names(entity: Entity) -> tuple[str, ...]:
    """The names an entity is matched by (a tuple of strings): its non-blank names, else its id."""
    return tuple(n for n in entity.names if n and n.strip()) or (entity.id,)


class _Mentions:
    """What both matchers answer, over ``self._phrases`` (a ``PhraseSet`` or a ``PhraseIndex``)."""

    _phrases: PhraseSet | PhraseIndex

    def scan_normalized(self, norm: str) -> dict[str, tuple[int, int]]:
        """Entity id -> span of its first mention in ``norm`` (text from ``normalize_text``)."""
        return self._phrases.scan(norm)  # type: ignore[return-value]

    def entities_in(self, text: str) -> set[str]:
        """Ids of the entities named in ``text``."""
        return set(self._phrases.scan(normalize_text(text)))  # type: ignore[arg-type]

    def find(self, text: str) -> list[Mention]:
        """Every mention in ``text`` in reading order, spans in ``text``'s own offsets."""
        norm, starts, ends = normalize_with_offsets(text)
        out = []
        for label, span in self._phrases.scan_all(norm):
            a, b = map_span(span, starts, ends)
            out.append(Mention(entity_id=str(label), span=(a, b), text=text[a:b]))
        return out


class EntityMatcher(_Mentions):
    """Finds entity mentions in text with one combined pattern over every name of ``entities``.

    Used by the rule matcher (over the entities signals name). An entity without names is matched by its
    id ("deepseek-v4-pro" then matches "DeepSeek V4 Pro").
    """

    def __init__(self, entities: Iterable[Entity]) -> None:
        phrases: list[tuple[str, bool, Hashable]] = []
        for ent in entities:
            phrases.extend((name, False, ent.id) for name in entity_names(ent))
        self._phrases = PhraseSet(phrases)

    @property
    def pattern(self) -> re.Pattern[str]:
        """The one compiled pattern holding every alias."""
        return self._phrases.pattern


class EntityIndex(_Mentions):
    """Finds entity mentions as :class:`EntityMatcher` does, over a :class:`PhraseIndex`: built in
    milliseconds for thousands of names, and :meth:`updated` to a new set of entities at the cost of the
    entities that changed. Used by the feed mention linker over the whole knowledge base.
    """

    def __init__(self, entities: Iterable[Entity] = ()) -> None:
        self._names: dict[str, tuple[str, ...]] = {e.id: entity_names(e) for e in entities}
        self._phrases = PhraseIndex((name, False, i) for i, names in self._names.items() for name in names)

    @property
    def size(self) -> int:
        """How many entities are matched."""
        return len(self._names)

    def updated(self, entities: Iterable[Entity]) -> EntityIndex:
        """An index over ``entities`` (the whole new set), made from this one by removing the names of
        entities that changed or left and adding those of entities that changed or are new. This index
        is unchanged."""
        names = {e.id: entity_names(e) for e in entities}
        removed = [(n, False, i) for i, old in self._names.items() if names.get(i) != old for n in old]
        added = [(n, False, i) for i, new in names.items() if self._names.get(i) != new for n in new]
        index = type(self).__new__(type(self))
        index._names = names
        changed = removed or added
        index._phrases = self._phrases.changed(added=added, removed=removed) if changed else self._phrases
        return index
