"""Many phrases found in one pass over a text, for large sets that change (pure: no I/O).

:class:`PhraseIndex` finds what :class:`chipwatch.text.phrases.PhraseSet` finds, under the same rules
(see that module: normalised, case-insensitive text; Latin, Greek, Cyrillic letters and digits at a
phrase edge must not touch another such character; CJK phrases as substrings; spaces and hyphens inside
a phrase match any run of them; wildcards run to the end of the word; every phrase found wherever it
occurs, prefixes of longer phrases included). What differs is the engine and so the costs:

- ``PhraseSet`` compiles its phrases into one regular expression shaped as a trie. Scanning is fast, but
  Python's regex compiler takes seconds for thousands of phrases (about 1 s per 1,000 entity names), and
  any change means compiling everything again;
- ``PhraseIndex`` keeps its phrases in an Aho-Corasick automaton (``pyahocorasick``, in C), built in
  milliseconds for thousands of phrases, and :meth:`PhraseIndex.changed` makes the index after some
  phrases are added or removed from the previous one, reusing every phrase's prepared form (the
  normalisation is the Python-side cost of a build), so one alias more costs a few milliseconds.

The automaton reports every occurrence of every phrase's literal in the text with separator runs
collapsed to one space; the edge rules are then applied to each occurrence. The entity mention matcher
over the whole knowledge base uses it (:class:`chipwatch.text.entities.EntityIndex`), and so does the
signal matcher for its combined scan of aliases and terms: the automaton reads a news item several times
faster than the trie-shaped regex.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Hashable, Iterable
from dataclasses import dataclass

import ahocorasick

from chipwatch.text.phrases import _WORD_CLASS, MAX_PHRASE_CHARS, _lower, canonical

__all__ = ["PhraseIndex"]

_WORD_CHAR = re.compile(f"[{_WORD_CLASS}]")
# The same class as a set: one membership test per phrase edge is cheaper than a regex call. The class
# ends below U+2000.
_WORD_CHARS = frozenset(c for c in map(chr, range(0x2000)) if _WORD_CHAR.match(c))
_WORD_RUN = re.compile(f"[{_WORD_CLASS}]*")
_SEPARATOR_RUN = re.compile(r"[\s\-]+")
_LONG_SEPARATOR_RUN = re.compile(r"[\s\-]{2,}")
# The one character whose lower case is two characters (U+0130, "İ"); a case-insensitive regex equates
# it with "i", so the text reads it as "I" and keeps its length.
_DOTTED_CAPITAL_I = "\u0130"

Phrase = tuple[str, bool, Hashable]
"""``(text, wildcard, label)`` as :class:`chipwatch.text.phrases.PhraseSet` takes them."""


@dataclass(frozen=True, slots=True)
class _Entry:
    """What an automaton stores for one canonical literal: the labels of its plain and wildcard phrases
    (sorted as scans report them) and whether its edges are word characters."""

    canon: str
    length: int  # len(canon), read once per occurrence
    first_is_word: bool
    last_is_word: bool
    plain: tuple[Hashable, ...]
    wildcard: tuple[Hashable, ...]


_Key = tuple[str, bool]  # (canonical literal, wildcard)
_Table = dict[_Key, frozenset[Hashable]]


def _sorted(labels: Iterable[Hashable]) -> tuple[Hashable, ...]:
    return tuple(sorted(labels, key=str))


def _automaton(table: _Table) -> ahocorasick.Automaton | None:
    """An automaton over the literals of ``table``, each storing its :class:`_Entry`; None when empty."""
    by_canon: dict[str, tuple[set[Hashable], set[Hashable]]] = {}
    for (canon, wildcard), labels in table.items():
        plain_labels, wildcard_labels = by_canon.setdefault(canon, (set(), set()))
        (wildcard_labels if wildcard else plain_labels).update(labels)
    if not by_canon:
        return None
    automaton = ahocorasick.Automaton()
    for canon, (plain_labels, wildcard_labels) in by_canon.items():
        first, last = bool(_WORD_CHAR.match(canon[0])), bool(_WORD_CHAR.match(canon[-1]))
        entry = _Entry(canon, len(canon), first, last, _sorted(plain_labels), _sorted(wildcard_labels))
        automaton.add_word(canon, entry)
    automaton.make_automaton()
    return automaton


class _Folded:
    """A normalised text lower-cased, with every run of spaces and hyphens as one space, and the way
    back from its offsets to the text's."""

    __slots__ = ("breaks", "shifts", "text")

    def __init__(self, norm: str) -> None:
        lowered = _lower(norm.replace(_DOTTED_CAPITAL_I, "I") if _DOTTED_CAPITAL_I in norm else norm)
        # Where a run of two or more separators became one space: offsets after it move back.
        self.breaks: list[int] = []
        self.shifts: list[int] = []
        # Most texts separate words by single spaces, hyphens and line ends: two replacements in C give
        # what the regex substitution gives, at a fraction of its cost (it stops at every space).
        spaced = lowered.replace("-", " ").replace("\n", " ")
        # Every whitespace character but the space is unprintable: a printable text has no other kind.
        if "  " not in spaced and spaced.isprintable():
            self.text = spaced
            return
        self.text = _SEPARATOR_RUN.sub(" ", lowered)
        if len(self.text) != len(lowered):
            shift = 0
            for m in _LONG_SEPARATOR_RUN.finditer(lowered):
                shift += m.end() - m.start() - 1
                self.breaks.append(m.end() - shift)  # folded offset of the first character after the run
                self.shifts.append(shift)

    def original(self, offset: int) -> int:
        """The text's offset of folded ``offset`` (a character that is not a separator)."""
        i = bisect_right(self.breaks, offset)
        return offset + (self.shifts[i - 1] if i else 0)


COMPACT_FRACTION = 0.05
"""A changed index keeps the automaton it was built with and adds a small one for the phrases added
since, and a set of the phrases removed since; when those exceed this share of the phrases (or
:data:`COMPACT_MIN`), one automaton is built again over them all."""
COMPACT_MIN = 64


class PhraseIndex:
    """Phrases with labels in Aho-Corasick automata; ``scan`` and ``scan_all`` as ``PhraseSet``'s.

    Immutable once built (scans may run in many threads); :meth:`changed` returns a new index that
    shares this one's automaton: the phrases added since are in a second, small automaton and those
    removed since are left out of what the first one finds, until they are many enough to build again.
    """

    def __init__(self, phrases: Iterable[Phrase] = ()) -> None:
        self._canon: dict[str, str] = {}
        table: dict[_Key, set[Hashable]] = {}
        for key, label in self._keyed(phrases):
            table.setdefault(key, set()).add(label)
        self._set_base({key: frozenset(labels) for key, labels in table.items()})

    def _set_base(self, table: _Table) -> None:
        self._base, self._base_automaton = table, _automaton(table)
        self._added: _Table = {}
        self._added_automaton: ahocorasick.Automaton | None = None
        self._removed: frozenset[tuple[_Key, Hashable]] = frozenset()

    @property
    def size(self) -> int:
        """How many distinct phrases (literal and wildcard flag) are held."""
        return len(self._table()) if self._added or self._removed else len(self._base)

    # ------------------------------------------------------------------ building
    def _keyed(self, phrases: Iterable[Phrase]) -> Iterable[tuple[_Key, Hashable]]:
        """``((canonical literal, wildcard), label)`` of each phrase that can match."""
        cache = self._canon
        for text, wildcard, label in phrases:
            canon = cache.get(text)
            if canon is None:
                canon = cache[text] = canonical(text)
            # Names past the bound are refused at the API and in seed files; skipped as PhraseSet does.
            if canon and len(canon) <= MAX_PHRASE_CHARS:
                yield (canon, wildcard), label

    def _table(self) -> dict[_Key, set[Hashable]]:
        """Every phrase held now: the base's less those removed, and those added."""
        table = {key: set(labels) for key, labels in self._base.items()}
        for key, label in self._removed:
            table[key].discard(label)
        for key, labels in self._added.items():
            table.setdefault(key, set()).update(labels)
        return {key: labels for key, labels in table.items() if labels}

    def changed(self, *, added: Iterable[Phrase] = (), removed: Iterable[Phrase] = ()) -> PhraseIndex:
        """A new index with ``removed`` taken out (a label off a phrase) and then ``added`` put in.

        Costs the changed phrases only (their normalisation, and a small automaton of those added) until
        the changes since the last full build exceed :data:`COMPACT_FRACTION` of the phrases, when the
        new index is built whole (milliseconds per thousand phrases). This index is unchanged.
        """
        new = PhraseIndex.__new__(PhraseIndex)
        new._canon = self._canon  # text -> canonical form: a pure function's results, safe to share
        new._base, new._base_automaton = self._base, self._base_automaton
        extra = {key: set(labels) for key, labels in self._added.items()}
        gone = set(self._removed)
        for key, label in new._keyed(removed):
            if label in extra.get(key, ()):
                extra[key].discard(label)
            elif label in self._base.get(key, ()):
                gone.add((key, label))
        for key, label in new._keyed(added):
            if (key, label) in gone:
                gone.discard((key, label))
            elif label not in self._base.get(key, ()):
                extra.setdefault(key, set()).add(label)
        new._added = {key: frozenset(labels) for key, labels in extra.items() if labels}
        new._removed = frozenset(gone)
        changes = sum(len(labels) for labels in new._added.values()) + len(new._removed)
        if changes > max(COMPACT_MIN, COMPACT_FRACTION * len(self._base)):
            new._set_base({key: frozenset(labels) for key, labels in new._table().items()})
        else:
            new._added_automaton = _automaton(new._added)
        return new

    def phrases(self) -> set[tuple[str, bool, Hashable]]:
        """Every ``(canonical text, wildcard, label)`` held (for comparing two indexes)."""
        table = self._table().items()
        return {(canon, wildcard, label) for (canon, wildcard), labels in table for label in labels}

    # ------------------------------------------------------------------ scanning
    def _occurrences(self, norm: str) -> list[tuple[int, int, tuple[Hashable, ...]]]:
        """``(start, end, labels)`` of every occurrence in ``norm``, offsets in ``norm``, unordered."""
        if (self._base_automaton is None and self._added_automaton is None) or not norm:
            return []
        folded = _Folded(norm)
        out: list[tuple[int, int, tuple[Hashable, ...]]] = []
        if self._base_automaton is not None:
            self._read(folded.text, self._base_automaton, out, self._removed)
        if self._added_automaton is not None:
            self._read(folded.text, self._added_automaton, out, frozenset())
        if folded.breaks:
            # Ends are exclusive: map the last character, which is never a separator.
            out = [(folded.original(a), folded.original(b - 1) + 1, labels) for a, b, labels in out]
        return out

    @staticmethod
    def _read(text: str, automaton: ahocorasick.Automaton, out: list, removed) -> None:
        """Append each occurrence the edge rules allow, less the ``removed`` ``(key, label)`` pairs."""
        n = len(text)
        word = _WORD_CHARS
        for last, entry in automaton.iter(text):
            start, end = last - entry.length + 1, last + 1
            if entry.first_is_word and start and text[start - 1] in word:
                continue  # inside a word: "Rubin" in "Rubinstein"
            plain, wildcard = entry.plain, entry.wildcard
            if removed:
                plain = tuple(x for x in plain if ((entry.canon, False), x) not in removed)
                wildcard = tuple(x for x in wildcard if ((entry.canon, True), x) not in removed)
            if plain and not (entry.last_is_word and end < n and text[end] in word):
                out.append((start, end, plain))
            if wildcard:
                out.append((start, _WORD_RUN.match(text, end).end(), wildcard))

    def scan(self, norm: str) -> dict[Hashable, tuple[int, int]]:
        """Label -> span of its first occurrence in ``norm`` (normalised text); of two at the same place,
        the longer."""
        found: dict[Hashable, tuple[int, int]] = {}
        for start, end, labels in self._occurrences(norm):
            for label in labels:
                seen = found.get(label)
                if seen is None or start < seen[0] or (start == seen[0] and end > seen[1]):
                    found[label] = (start, end)
        return found

    def scan_all(self, norm: str) -> list[tuple[Hashable, tuple[int, int]]]:
        """Every ``(label, span)`` occurrence in ``norm``, in reading order (longer first at one place)."""
        ordered = sorted(self._occurrences(norm), key=lambda o: (o[0], -o[1]))
        return [(label, (start, end)) for start, end, labels in ordered for label in labels]
