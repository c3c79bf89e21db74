"""Entity mentions in text: which knowledge-base names a text contains, and where (pure: no I/O).

Used by the feed mention linker (over the whole knowledge base) and by the signal matcher (over the
entities signals name). Matching follows ``chipwatch.text.phrases``.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

from chipwatch.text.normalize import map_span, normalize_text, normalize_with_offsets
from chipwatch.text.phrases import PhraseSet

__all__ = ["Entity", "EntityMatcher", "Mention"]


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


class EntityMatcher:
    """Finds entity mentions in text with one combined pattern over every name of ``entities``.

    Used by the rule matcher (over the entities signals name) and by the feed mention linker (over the
    whole knowledge base). An entity without names is matched by its id ("deepseek-v4-pro" then matches
    "DeepSeek V4 Pro").
    """

    def __init__(self, entities: Iterable[Entity]) -> None:
        phrases: list[tuple[str, bool, Hashable]] = []
        for ent in entities:
            names = [n for n in ent.names if n and n.strip()] or [ent.id]
            phrases.extend((name, False, ent.id) for name in names)
        self._phrases = PhraseSet(phrases)

    @property
    def pattern(self) -> re.Pattern[str]:
        """The one compiled pattern holding every alias."""
        return self._phrases.pattern

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
