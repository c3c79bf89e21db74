"""The parts of a news text every fact reader uses (pure: no I/O).

A :class:`Part` is a title or a summary read once: normalised (``chipwatch.text.normalize``), its entity
mentions (:class:`~chipwatch.candidates.lexicon.Lexicon`), its figures with units (the quantity reader
signals use, ``chipwatch.text.numbers``) and its sentences. Inside one sentence the readers use
``names`` (the company before "raises", the target after "acquires", places, who made a claim),
``chips`` (chip names) and ``figures`` (counts of units, sums of money).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from chipwatch.candidates.lexicon import Found, Lexicon
from chipwatch.text.normalize import map_span, normalize_with_offsets
from chipwatch.text.numbers import Quantity, extract_from_normalized

CJK = "\u3400-\u9fff"
_CJK_CHAR = re.compile(f"[{CJK}]")


@dataclass(slots=True)
class Part:
    """One text of an item (``title`` or ``summary``) read once."""

    name: str
    text: str
    norm: str
    starts: list[int] | None
    ends: list[int] | None
    found: list[Found]
    quantities: list[Quantity]
    sentences: list[tuple[int, int]] = field(default_factory=list)

    def span(self, a: int, b: int) -> tuple[int, int]:
        """``norm[a:b]`` as offsets in the original text."""
        return map_span((a, b), self.starts, self.ends)

    def found_in(self, a: int, b: int) -> list[Found]:
        return [f for f in self.found if a <= f.start and f.end <= b]

    def quantities_in(self, a: int, b: int) -> list[Quantity]:
        return [q for q in self.quantities if a <= q.span[0] and q.span[1] <= b]


# Sentence ends; a title's list items ("A 🤖, B 💰, C") are sentences too.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(\u201c])|[。！？；;\n]+|\s\|\s")
_LIST_ITEM_END = re.compile(r"(?<=[\u2190-\u2bff\U0001f000-\U0001faff\ufe0f])\s*,\s*")


@dataclass(slots=True)
class Draft:
    """A fact a reader found: its kind, its fields, where it was read (part name and span in the
    normalised text of that part) and how sure the reader is (0 to 1)."""

    kind: str
    fact: dict[str, Any]
    part: str
    start: int
    end: int
    confidence: float


def read_part(name: str, text: str, lexicon: Lexicon) -> Part:
    """Normalise ``text``, find its entities and figures, split it into sentences."""
    norm, starts, ends = normalize_with_offsets(text)
    part = Part(name, text, norm, starts, ends, lexicon.scan(norm), extract_from_normalized(norm))
    cuts = [0]
    for pattern in (_SENTENCE_END, _LIST_ITEM_END) if name == "title" else (_SENTENCE_END,):
        cuts.extend(m.end() for m in pattern.finditer(norm))
    cuts = sorted(set(cuts)) + [len(norm)]
    part.sentences = [(a, b) for a, b in zip(cuts, cuts[1:], strict=False) if norm[a:b].strip()]
    return part


def has_cjk(text: str) -> bool:
    return _CJK_CHAR.search(text) is not None


@dataclass(frozen=True, slots=True)
class Name:
    """A name read from text: the entity id when the lexicon knows it, the words as written, the span
    in the normalised text."""

    id: str | None
    text: str
    start: int
    end: int


def fold_name(text: str) -> str:
    """A name folded for comparison: NFKC, case-folded, spaces collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


__all__ = ["CJK", "Draft", "Name", "Part", "fold_name", "has_cjk", "read_part"]
