"""The parts of a news text every fact reader uses (pure: no I/O).

A :class:`Part` is a title or a summary read once: normalised (``chipwatch.text.normalize``), its entity
mentions (:class:`~chipwatch.candidates.lexicon.Lexicon`), its figures with units (the quantity reader
signals use, ``chipwatch.text.numbers``) and its sentences. Inside one sentence the readers use
``names`` (the company before "raises", the target after "acquires", places, who made a claim),
``chips`` (chip names) and ``figures`` (counts of units, sums of money).
"""

from __future__ import annotations

import re
import sys
import unicodedata
from bisect import bisect_right
from collections.abc import Callable
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
    # The spans of ``norm`` whose figures are read, on first use: a part only a reader without figures
    # asks about (a launch, an acquisition without a price) never pays for the quantity scan.
    figure_spans: list[tuple[int, int]]
    sentences: list[tuple[int, int]] = field(default_factory=list)
    cache: dict[Any, Any] = field(default_factory=dict, repr=False)
    kinds: dict[tuple[int, int], set[str]] | None = field(default=None, repr=False)
    # The currency "¥" stands for in this item (JPY, CNY or None when its words do not say).
    yen: str | None = field(default="CNY", repr=False)
    # The item's title, for a summary: the company it is about is what "the company" refers to.
    title: Part | None = field(default=None, repr=False)
    # The figures of each read span, by the span's index, read when a reader first asks about that span.
    _span_figures: dict[int, list[Quantity]] = field(default_factory=dict, repr=False)

    @property
    def quantities(self) -> list[Quantity]:
        """The figures with units of the part's read spans (the quantity reader signals use), offsets in
        ``norm``; each span read on first use."""
        return [q for i in range(len(self.figure_spans)) for q in self._figures_of(i)]

    def _figures_of(self, i: int) -> list[Quantity]:
        found = self._span_figures.get(i)
        if found is None:
            a, b = self.figure_spans[i]
            found = self._span_figures[i] = [
                Quantity(q.value, q.unit, q.raw, (q.span[0] + a, q.span[1] + a)) if a else q
                for q in extract_from_normalized(self.norm[a:b])
            ]
        return found

    def sentences_of(self, kind: str) -> list[tuple[int, int]]:
        """The sentences a ``kind`` reader reads: those whose words name that kind (every sentence when
        the part was read without a per-sentence choice, as a title is)."""
        if self.kinds is None:
            return self.sentences
        return [s for s in self.sentences if kind in self.kinds.get(s, ())]

    def span(self, a: int, b: int) -> tuple[int, int]:
        """``norm[a:b]`` as offsets in the original text."""
        return map_span((a, b), self.starts, self.ends)

    def found_in(self, a: int, b: int) -> list[Found]:
        return [f for f in self.found if a <= f.start and f.end <= b]

    def quantities_in(self, a: int, b: int) -> list[Quantity]:
        """The figures inside ``norm[a:b]``, reading only the spans that overlap it: a reader asks about
        one sentence, and the other kept sentences of a summary need not be read for figures."""
        out: list[Quantity] = []
        for i, (s, e) in enumerate(self.figure_spans):
            if s >= b:
                break
            if e > a:
                out += [q for q in self._figures_of(i) if a <= q.span[0] and q.span[1] <= b]
        return out

    def quantities_at(self, at: int) -> list[Quantity]:
        """The figures whose span holds offset ``at`` of ``norm``."""
        for i, (s, e) in enumerate(self.figure_spans):
            if s <= at < e:
                return [q for q in self._figures_of(i) if q.span[0] <= at < q.span[1]]
        return []

    def per_sentence(self, what: str, a: int, b: int, read: Callable[[int, int], list]) -> list:
        """What ``read(start, end)`` finds in the sentence holding ``norm[a:b]``, read once per sentence
        and cached, keeping the findings (``start``/``end`` attributes or tuples ending in them) inside
        ``[a, b)``. Readers ask again and again about windows of one sentence."""
        # the first sentence starting at or before a and ending at or after b (the sentences are in order)
        sentences = self.sentences
        i = j = bisect_right(sentences, (a, _AFTER_EVERY_END)) - 1
        while j > 0 and b <= sentences[j - 1][1]:
            j -= 1
        sentence = sentences[j] if i >= 0 and b <= sentences[j][1] else (a, b)
        key = (what, *sentence)
        if key not in self.cache:
            self.cache[key] = read(*sentence)
        found = self.cache[key]
        if sentence == (a, b):
            return list(found)
        return [x for x in found if a <= _start(x) and _end(x) <= b]


# Sorts after every (start, end) span of a given start: the sentence holding offset a is the last one
# starting at or before it.
_AFTER_EVERY_END = sys.maxsize

# Sentence ends: after a full stop and the spaces before a capital, after a run of CJK stops, semicolons or
# line ends, and after " | "; a title's list items ("A 🤖, B 💰, C") are sentences too. The pattern opens
# with one class of every character an end can start with, so the engine skips the other characters in a
# fast loop instead of trying three alternatives at each; the look-behinds pick the alternative.
_SENTENCE_END = re.compile(
    r"[.!?。！？；;\n\s](?:(?<=[.!?])\s+(?=[A-Z\"'(\u201c])|(?<=[。！？；;\n])[。！？；;\n]*|(?<=\s)\|\s)"
)
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


def read_part(
    name: str,
    text: str,
    lexicon: Lexicon,
    keep: Callable[[str, list[tuple[int, int]]], list[bool]] | None = None,
) -> Part:
    """Normalise ``text``, split it into sentences, find the entities and figures of each.

    With ``keep`` (given the normalised text and every sentence's span in it, it says which to keep), only
    the sentences it keeps are read: the others cost one test each, which keeps long summaries cheap.
    """
    norm, starts, ends = normalize_with_offsets(text)
    cuts = [0]
    for pattern in (_SENTENCE_END, _LIST_ITEM_END) if name == "title" else (_SENTENCE_END,):
        cuts.extend(m.end() for m in pattern.finditer(norm))
    cuts = sorted(set(cuts)) + [len(norm)]
    sentences = [(a, b) for a, b in zip(cuts, cuts[1:], strict=False) if norm[a:b].strip()]
    if keep is not None:
        flags = keep(norm, sentences)
        sentences = [span for span, kept in zip(sentences, flags, strict=True) if kept]
    if keep is None or sentences == [(0, len(norm))]:
        found, figure_spans = lexicon.scan(norm), [(0, len(norm))]
    else:
        found, figure_spans = [], sentences
        for a, b in sentences:
            found += [Found(f.id, f.kind, f.start + a, f.end + a) for f in lexicon.scan(norm[a:b])]
    return Part(name, text, norm, starts, ends, found, figure_spans, sentences)


def _start(x: Any) -> int:
    return x.start if hasattr(x, "start") else x[-2]


def _end(x: Any) -> int:
    return x.end if hasattr(x, "end") else x[-1]


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
