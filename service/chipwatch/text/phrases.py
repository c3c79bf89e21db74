"""Many phrases found in one pass over a text (pure: no I/O).

A ``PhraseSet`` compiles any number of phrases into at most two regular expressions shaped as tries, so
scanning a text costs about the same whatever the number of phrases. Entity aliases
(``chipwatch.text.entities``) and signal terms both use it.

Phrase matching, from DESIGN.md "Signals":

- case-insensitive, on text and phrases normalised alike (NFKC, accent-free Latin letters; see
  ``chipwatch.text.normalize``), so "Jalapeno", "jalapeño" and a decomposed "Jalapen\u0303o" are one name;
- a phrase edge that is a Latin, Greek or Cyrillic letter or a digit must not touch another such
  character: "Rubin" does not match "Rubinstein", "M6" does not match "M60". ``\\b`` is not used
  because it needs a word character at the edge ("tok/s", "C++") and because Python counts CJK
  characters as word characters, which would hide "Rubin" in "Vera Rubin的InferenceX成绩";
- CJK phrases therefore match as substrings ("英伟达发布…" names NVIDIA);
- spaces and hyphens inside a phrase match any run of spaces or hyphens ("GPT-OSS 120B" matches
  "gpt-oss-120b");
- a phrase marked as a wildcard matches any word starting with it (the term "reproduc*": reproduced,
  reproduction).

A phrase is found wherever it occurs, as if each phrase were searched on its own, even inside a longer
phrase starting at the same place ("Vera" inside "Vera Rubin"): the combined pattern reports the
longest phrase at each position, and the phrases it implies are precomputed at compile time.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Hashable, Iterable, Iterator
from dataclasses import dataclass, field

from chipwatch.text.normalize import normalize_text

__all__ = ["MAX_PHRASE_CHARS", "PhraseSet", "canonical"]

# Letters of alphabetic scripts and digits: a phrase edge made of one must not touch another. CJK is left
# out on purpose (see the module docstring); "_" is in, as in identifiers such as gb200_nvl72.
_WORD_CLASS = (
    "0-9A-Za-z_\u00aa\u00b5\u00ba\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f"
    "\u0370-\u03ff\u0400-\u04ff\u1e00-\u1eff"
)
_WORD_CHAR = re.compile(f"[{_WORD_CLASS}]")
_SEPARATORS = re.compile(r"[\s\-]+")  # after normalisation every dash is "-"
_NEVER = r"(?!)"


@dataclass(slots=True)
class _Phrase:
    canon: str  # normalised, lower-case, separator runs as one space; the literal part of a term
    wildcard: bool
    labels: set[Hashable] = field(default_factory=set)


# After NFKC, the only letters that str.lower leaves apart while a case-insensitive regex equates them.
_CASE_EXTRA = str.maketrans({"ς": "σ", "ı": "i"})


def _lower(text: str) -> str:
    """Lower-case as ``re.IGNORECASE`` compares (simple case folding plus ``_CASE_EXTRA``)."""
    lowered = text.lower()
    if "ς" in lowered or "ı" in lowered:  # rare: translate only when needed (it reads every character)
        lowered = lowered.translate(_CASE_EXTRA)
    return lowered


def canonical(phrase: str) -> str:
    """``phrase`` normalised, lower-cased, with each run of spaces and hyphens as one space.

    Phrases equal after this are one phrase; ``PhraseSet`` keys its phrases by it.
    """
    # Lower-cased as the scanned text is (see PhraseSet), so prefixes computed here hold in the regex.
    return " ".join(p for p in _SEPARATORS.split(_lower(normalize_text(phrase).strip())) if p)


def _implies(winner: _Phrase, other: _Phrase) -> bool:
    """Does ``other`` necessarily match wherever ``winner`` matches, starting at the same place?

    Sound because the trie tries longer literals first (and a plain phrase before a wildcard one with the
    same literal): any phrase with a longer literal that matched there would itself have been the winner.
    """
    w, o = winner.canon, other.canon
    if other is winner or not w.startswith(o):
        return False
    if len(o) == len(w):
        # Same literal: a plain phrase is tried first, so a wildcard winner means the plain one failed.
        return other.wildcard and not winner.wildcard
    if other.wildcard or not _WORD_CHAR.match(o[-1]):
        return True
    return not _WORD_CHAR.match(w[len(o)])


def _is_separator(char: str) -> bool:
    return char == "-" or char.isspace()  # what [\s\-] matches


def _implied_end(norm: str, start: int, end: int, canon_len: int, wildcard: bool) -> int:
    """End offset in ``norm`` of an implied phrase of ``canon_len`` canonical characters.

    The winner matched ``norm[start:end]``; the implied phrase covers a prefix of it, counting each run of
    separators as one character, and a wildcard phrase then runs to the end of the word.
    """
    count, i = 0, start
    while i < end and count < canon_len:
        if _is_separator(norm[i]):
            while i < end and _is_separator(norm[i]):
                i += 1
        else:
            i += 1
        count += 1
    if wildcard:
        while i < len(norm) and _WORD_CHAR.match(norm[i]):
            i += 1
    return i


class _TrieNode:
    __slots__ = ("children", "leaves")

    def __init__(self) -> None:
        self.children: dict[str, _TrieNode] = {}
        self.leaves: list[_Phrase] = []  # at most one plain and one wildcard phrase end here


def _render(node: _TrieNode, groups: list[_Phrase], root: bool = False) -> str:
    """Regex source for the trie under ``node``; appends each phrase to ``groups`` in group order.

    At every node longer phrases are tried before the phrase ending there, and a plain phrase before a
    wildcard one, so at each position the longest phrase wins. Each phrase ends in an empty capturing
    group whose number identifies it.
    """
    alternatives = []
    for char, child in node.children.items():
        piece = r"[\s\-]+" if char == " " else re.escape(char)
        if root and _WORD_CHAR.match(char):
            # The edge test follows the literal rather than preceding it: an alternative that starts
            # with a literal is skipped by the regex engine in one comparison when the text differs.
            piece += f"(?<![{_WORD_CLASS}]{re.escape(char)})"
        alternatives.append(piece + _render(child, groups))
    for phrase in sorted(node.leaves, key=lambda p: p.wildcard):
        groups.append(phrase)
        if phrase.wildcard:
            alternatives.append(f"[{_WORD_CLASS}]*()")
        elif _WORD_CHAR.match(phrase.canon[-1]):
            alternatives.append(f"(?![{_WORD_CLASS}])()")
        else:
            alternatives.append("()")
    if len(alternatives) == 1:
        return alternatives[0]
    return "(?:" + "|".join(alternatives) + ")"


_Labels = tuple[Hashable, ...]  # sorted by str, as scans report the labels of one place
_Groups = list[tuple[_Labels, list[tuple[_Labels, int, bool]]]]


MAX_PHRASE_CHARS = 200
"""Longest alias or term, in characters, that matching takes into account."""


def _path_leaves(root: _TrieNode, canon: str) -> list[_Phrase]:
    """Every phrase ending on the trie path of ``canon`` (its prefixes, and itself), shortest first."""
    out: list[_Phrase] = []
    node = root
    for char in canon:
        node = node.children[char]
        out.extend(node.leaves)
    return out


def _sorted_labels(phrase: _Phrase) -> _Labels:
    return tuple(sorted(phrase.labels, key=str))


def _compile_trie(phrases: list[_Phrase]) -> tuple[re.Pattern[str], str, _Groups]:
    """``(pattern over lower-cased text, its source, groups)`` for ``phrases`` as one trie.

    ``groups[n - 1]`` describes capture group ``n``: the winning phrase's labels and, for each phrase it
    implies (a prefix that also matches at that place), its labels, canonical length and wildcard flag.
    Labels are sorted once here so that scans report them in a fixed order at no cost.
    """
    root = _TrieNode()
    # A phrase becomes one nested group per character; names and terms are refused past this length
    # at the API and in seed files, and skipped here so a stored oversize name can never break matching.
    phrases = [p for p in phrases if len(p.canon) <= MAX_PHRASE_CHARS]
    for phrase in phrases:
        node = root
        for char in phrase.canon:
            node = node.children.setdefault(char, _TrieNode())
        node.leaves.append(phrase)
    order: list[_Phrase] = []
    alternatives = _render(root, order, root=True) if phrases else _NEVER
    groups: _Groups = []
    for winner in order:
        # Only a phrase whose literal is a prefix of the winner's can be implied: those end on the trie
        # nodes along the winner's path, so each winner looks at its own path, never at every phrase.
        implied = [
            (_sorted_labels(o), len(o.canon), o.wildcard)
            for o in _path_leaves(root, winner.canon)
            if _implies(winner, o)
        ]
        groups.append((_sorted_labels(winner), implied))
    # A lookahead makes every match zero-width, so the scan tries every position and phrases that start
    # inside an earlier phrase are found too. The leading class of every phrase's first character
    # rejects most positions in one test.
    body = f"(?=(?:{alternatives}))"
    firsts = sorted({p.canon[0] for p in order})
    if firsts:
        body = f"(?=[{''.join(re.escape(c) for c in firsts)}])" + body
    # Phrases are lower-cased (``canonical``) and the pattern reads lower-cased text, which is faster than
    # a case-insensitive pattern; a case-insensitive twin of the source serves the rare text whose
    # lower-casing changes its length (offsets must stay those of the normalised text).
    return re.compile(body), body, groups


class PhraseSet:
    """Many phrases, a fixed number of compiled patterns; ``scan`` finds every label whose phrase occurs.

    Each pattern is a trie: at each position of the text the engine follows the characters instead of
    trying every phrase in turn, so the cost barely grows with the number of phrases. Phrases that start
    with a letter or digit and those that do not (CJK, symbols) go into two patterns (``pattern`` and
    the one in ``_more``): they never start at the same place, so the two scans find what one would, and
    Python's regex engine runs the two halves about twice as fast as their union on mixed news text.
    """

    def __init__(self, phrases: Iterable[tuple[str, bool, Hashable]]) -> None:
        by_key: dict[tuple[str, bool], _Phrase] = {}
        for text, wildcard, label in phrases:
            canon = canonical(text)
            if not canon:
                continue
            key = (canon, wildcard)
            if key not in by_key:
                by_key[key] = _Phrase(canon, wildcard)
            by_key[key].labels.add(label)
        word_first = [p for p in by_key.values() if _WORD_CHAR.match(p.canon[0])]
        other_first = [p for p in by_key.values() if not _WORD_CHAR.match(p.canon[0])]
        parts = [_compile_trie(part) for part in (word_first, other_first) if part] or [_compile_trie([])]
        self.pattern: re.Pattern[str] = parts[0][0]
        self._more: list[re.Pattern[str]] = [part[0] for part in parts[1:]]
        self._sources = [part[1] for part in parts]
        self._twins: list[re.Pattern[str]] | None = None
        self._groups: list[_Groups] = [part[2] for part in parts]
        self.size = len(by_key)

    @property
    def _patterns_ci(self) -> list[re.Pattern[str]]:
        # Compiled on first need: compiling costs as much as the pattern itself, and most sets never
        # meet a text whose lower-casing changes its length.
        if self._twins is None:
            self._twins = [re.compile(source, re.IGNORECASE) for source in self._sources]
        return self._twins

    def _passes(self, norm: str) -> Iterator[tuple[str, _Groups, Iterator[re.Match[str]]]]:
        """For each pattern: the text its spans refer to (as long as ``norm``), its groups, its matches."""
        lowered = _lower(norm)
        if len(lowered) == len(norm):
            for pattern, groups in zip((self.pattern, *self._more), self._groups, strict=True):
                yield lowered, groups, pattern.finditer(lowered)
        else:
            for pattern, groups in zip(self._patterns_ci, self._groups, strict=True):
                yield norm, groups, pattern.finditer(norm)

    def _occurrences(self, norm: str) -> Iterator[Iterator[tuple[Hashable, tuple[int, int]]]]:
        """Per pattern, every ``(label, span)`` in reading order (labels of one place sorted)."""
        for text, groups, matches in self._passes(norm):
            yield self._read(text, groups, matches)

    @staticmethod
    def _read(
        text: str, groups: _Groups, matches: Iterator[re.Match[str]]
    ) -> Iterator[tuple[Hashable, tuple[int, int]]]:
        for m in matches:
            group = m.lastindex
            if group is None:
                continue
            start, end = m.start(), m.end(group)
            labels, implied = groups[group - 1]
            for label in labels:
                yield label, (start, end)
            for implied_labels, canon_len, wildcard in implied:
                span = (start, _implied_end(text, start, end, canon_len, wildcard))
                for label in implied_labels:
                    yield label, span

    def scan(self, norm: str) -> dict[Hashable, tuple[int, int]]:
        """Label -> span of its first occurrence in ``norm`` (normalised text)."""
        found: dict[Hashable, tuple[int, int]] = {}
        if not self.size:
            return found
        # What ``_read`` yields, consumed in place: this is the matcher's hottest loop, and an implied
        # phrase's end is only worked out when the phrase is new or earlier than where it was seen.
        for text, groups, matches in self._passes(norm):
            for m in matches:
                group = m.lastindex
                if group is None:
                    continue
                start = m.start()
                labels, implied = groups[group - 1]
                for label in labels:
                    seen = found.get(label)
                    if seen is None or start < seen[0]:  # a later pattern may find an earlier place
                        found[label] = (start, m.end(group))
                for implied_labels, canon_len, wildcard in implied:
                    span = None
                    for label in implied_labels:
                        seen = found.get(label)
                        if seen is None or start < seen[0]:
                            if span is None:
                                span = (start, _implied_end(text, start, m.end(group), canon_len, wildcard))
                            found[label] = span
        return found

    def scan_all(self, norm: str) -> list[tuple[Hashable, tuple[int, int]]]:
        """Every ``(label, span)`` occurrence in ``norm``, in reading order."""
        if not self.size:
            return []
        return list(heapq.merge(*self._occurrences(norm), key=lambda pair: pair[1][0]))
