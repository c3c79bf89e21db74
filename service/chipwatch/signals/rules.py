"""The compiled signal matcher (pure: no I/O, no database).

``compile_signals`` turns validated definitions into ``CompiledRules`` once. Matching an item then reads
its text a fixed number of times whatever the number of signals or aliases: one normalisation pass, one
scan with the combined alias patterns, one with the combined term patterns and one with the quantity
pattern (the last two only when some signal uses terms or numbers, and quantities only when a rule
that could hold needs them). Each phrase set compiles to at most two patterns, one for phrases that
start with a letter or digit and one for the others (see ``_PhraseSet``). A condition is only checked
when something it needs was found (an entity, a term or a unit it names), with set operations on what
the scans found, so the work per item follows what the item says rather than the number of signals.

Phrase matching (entity aliases and terms), from DESIGN.md "Signals":

- case-insensitive, on text and phrases normalised alike (NFKC, accent-free Latin letters; see
  ``numbers.normalize_text``), so "Jalapeno", "jalapeño" and a decomposed "Jalapen\u0303o" are one name;
- a phrase edge that is a Latin, Greek or Cyrillic letter or a digit must not touch another such
  character: "Rubin" does not match "Rubinstein", "M6" does not match "M60". ``\\b`` is not used
  because it needs a word character at the edge ("tok/s", "C++") and because Python counts CJK
  characters as word characters, which would hide "Rubin" in "Vera Rubin的InferenceX成绩";
- CJK phrases therefore match as substrings ("英伟达发布…" names NVIDIA);
- spaces and hyphens inside a phrase match any run of spaces or hyphens ("GPT-OSS 120B" matches
  "gpt-oss-120b");
- a term ending in ``*`` matches any word starting with it ("reproduc*": reproduced, reproduction).

A phrase is found wherever it occurs, as if each phrase were searched on its own, even inside a longer
phrase starting at the same place ("Vera" inside "Vera Rubin"): the combined pattern reports the
longest phrase at each position, and the phrases it implies are precomputed at compile time. The
pattern is shaped as a trie, so its cost per character hardly depends on the number of phrases.
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any, Literal

from chipwatch.signals.definition import (
    DefinitionError,
    DeploymentCondition,
    ItemCondition,
    NumberBound,
    ResultCondition,
    SignalDefinition,
)
from chipwatch.signals.numbers import (
    POWER_UNITS_W,
    Quantity,
    extract_from_normalized,
    map_span,
    normalize_text,
    normalize_with_offsets,
    quantity_matches,
)

__all__ = [
    "CompiledRules",
    "Entity",
    "EntityMatcher",
    "FactView",
    "ItemView",
    "Match",
    "Mention",
    "compile_signals",
]

Side = Literal["yes", "no"]


# ---------------------------------------------------------------------------------------------------
# Inputs and outputs
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Entity:
    """A knowledge-base entity as the matcher sees it: its id and every name (name and aliases)."""

    id: str
    names: Sequence[str]


@dataclass(frozen=True, slots=True)
class ItemView:
    """A stored news item as the matcher sees it.

    ``source_trust`` is the trust level of the item's source (vendor, press, analyst, independent).
    ``published_is_estimated`` marks a publication time the feed did not give (first-seen time used
    instead); such an item never satisfies ``published_after``.
    """

    id: str | int
    source_id: str
    source_trust: str
    title: str
    text: str
    published_at: datetime | None = None
    published_is_estimated: bool = False


@dataclass(frozen=True, slots=True)
class FactView:
    """A knowledge-base fact as the matcher sees it.

    ``kind`` is ``result`` or ``deployment``. ``fields`` holds the row's columns by name. Results:
    ``chip_ids``, ``baseline_ids``, ``model_ids`` (lists), ``benchmark_id``, ``metric``, ``value``,
    ``value_min``, ``value_max``, ``verification``, ``reported_by``, ``reproduced_by``. Deployments:
    ``chip_id`` (or ``chip_ids``), ``operator_id``, ``capacity_mw`` (reached), ``status``, ``as_of``,
    ``published_on`` (dates, datetimes or ISO strings). Missing fields fail the constraints that read them.
    """

    kind: Literal["result", "deployment"]
    id: str | int
    fields: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Match:
    """One satisfied condition: ``condition_index`` indexes the ``yes_when`` or ``no_when`` list of
    ``side``; ``reason`` is a one-line account for evidence rows."""

    signal_id: str
    side: Side
    condition_index: int
    reason: str


@dataclass(frozen=True, slots=True)
class Mention:
    """An entity named in a text: ``span`` indexes the text given to ``EntityMatcher.find``."""

    entity_id: str
    span: tuple[int, int]
    text: str


# ---------------------------------------------------------------------------------------------------
# Phrase sets: one combined pattern for many phrases
# ---------------------------------------------------------------------------------------------------

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


def _canonical(phrase: str) -> str:
    # Lower-cased as the scanned text is (see _PhraseSet), so prefixes computed here hold in the regex.
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


_Groups = list[tuple[frozenset[Hashable], list[tuple[frozenset[Hashable], int, bool]]]]


MAX_PHRASE_CHARS = 200
"""Longest alias or term, in characters, that matching takes into account."""


def _compile_trie(phrases: list[_Phrase]) -> tuple[re.Pattern[str], re.Pattern[str], _Groups]:
    """``(pattern over lower-cased text, case-insensitive twin, groups)`` for ``phrases`` as one trie.

    ``groups[n - 1]`` describes capture group ``n``: the winning phrase's labels and, for each phrase it
    implies (a prefix that also matches at that place), its labels, canonical length and wildcard flag.
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
        implied = [
            (frozenset(o.labels), len(o.canon), o.wildcard)
            for o in phrases
            if len(o.canon) <= len(winner.canon) and _implies(winner, o)
        ]
        groups.append((frozenset(winner.labels), implied))
    # A lookahead makes every match zero-width, so the scan tries every position and phrases that start
    # inside an earlier phrase are found too. The leading class of every phrase's first character
    # rejects most positions in one test.
    body = f"(?=(?:{alternatives}))"
    firsts = sorted({p.canon[0] for p in order})
    if firsts:
        body = f"(?=[{''.join(re.escape(c) for c in firsts)}])" + body
    # Phrases are lower-cased (``_canonical``) and the pattern reads lower-cased text, which is faster than
    # a case-insensitive pattern; the twin serves the rare text whose lower-casing changes its length
    # (offsets must stay those of the normalised text).
    return re.compile(body), re.compile(body, re.IGNORECASE), groups


class _PhraseSet:
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
            canon = _canonical(text)
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
        self._patterns_ci = [part[1] for part in parts]
        self._groups: list[_Groups] = [part[2] for part in parts]
        self.size = len(by_key)

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
            for label in sorted(labels, key=str) if len(labels) > 1 else labels:
                yield label, (start, end)
            for implied_labels, canon_len, wildcard in implied:
                span = (start, _implied_end(text, start, end, canon_len, wildcard))
                for label in sorted(implied_labels, key=str) if len(implied_labels) > 1 else implied_labels:
                    yield label, span

    def scan(self, norm: str) -> dict[Hashable, tuple[int, int]]:
        """Label -> span of its first occurrence in ``norm`` (normalised text)."""
        found: dict[Hashable, tuple[int, int]] = {}
        if not self.size:
            return found
        for occurrences in self._occurrences(norm):
            for label, span in occurrences:
                seen = found.get(label)
                if seen is None or span[0] < seen[0]:  # a later pattern may find an earlier place
                    found[label] = span
        return found

    def scan_all(self, norm: str) -> list[tuple[Hashable, tuple[int, int]]]:
        """Every ``(label, span)`` occurrence in ``norm``, in reading order."""
        if not self.size:
            return []
        return list(heapq.merge(*self._occurrences(norm), key=lambda pair: pair[1][0]))


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
        self._phrases = _PhraseSet(phrases)

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


# ---------------------------------------------------------------------------------------------------
# Compiled conditions
# ---------------------------------------------------------------------------------------------------

_TermKey = tuple[str, bool]


def _term_key(term: str) -> tuple[str, _TermKey]:
    """``(term as written, (canonical literal, wildcard))``; terms equal after normalisation share a key."""
    wildcard = term.endswith("*")
    return term, (_canonical(term[:-1] if wildcard else term), wildcard)


@dataclass(frozen=True, slots=True)
class _ItemRule:
    signal_id: str
    side: Side
    index: int
    mentions_all: frozenset[str]
    mentions_any: frozenset[str]
    terms_all: tuple[tuple[str, _TermKey], ...]
    terms_any: tuple[tuple[str, _TermKey], ...]
    terms_none: tuple[tuple[str, _TermKey], ...]
    number: NumberBound | None
    trust: frozenset[str] | None
    sources: frozenset[str] | None
    published_after: date | None


@dataclass(frozen=True, slots=True)
class _FactRule:
    signal_id: str
    side: Side
    index: int
    condition: ResultCondition | DeploymentCondition


def _terms(values: list[str] | None) -> tuple[tuple[str, _TermKey], ...]:
    return tuple(_term_key(t) for t in values or [])


def _utc_date(moment: datetime) -> date:
    return (moment.astimezone(UTC) if moment.tzinfo else moment).date()


def _as_date(value: Any) -> date | None:
    if isinstance(value, datetime):
        return _utc_date(value)
    if isinstance(value, date):
        return value
    if isinstance(value, str) and value:
        try:
            return date.fromisoformat(value[:10])
        except ValueError:
            return None
    return None


def _ids(fields: Mapping[str, Any], *keys: str) -> list[str]:
    for key in keys:
        value = fields.get(key)
        if value is None:
            continue
        return [value] if isinstance(value, str) else list(value)
    return []


def _unit_family(unit: str) -> str:
    """Units that convert into each other share a family (power); every other unit is its own."""
    return "power" if unit in POWER_UNITS_W else unit


def _fmt(value: float) -> str:
    return f"{value:g}"


def _bound_text(bound: NumberBound) -> str:
    ops = {"gte": ">=", "gt": ">", "lte": "<=", "lt": "<", "eq": "="}
    parts = [f"{ops[k]} {_fmt(getattr(bound, k))}" for k in ops if getattr(bound, k) is not None]
    return f"{' and '.join(parts)} {bound.unit}"


# ---------------------------------------------------------------------------------------------------
# The compiled rules
# ---------------------------------------------------------------------------------------------------


class CompiledRules:
    """Signals compiled for matching; build with ``compile_signals``. Immutable once built."""

    def __init__(self, defs: Sequence[SignalDefinition], entities: Sequence[Entity]) -> None:
        by_id: dict[str, list[str]] = {}
        for ent in entities:
            by_id.setdefault(ent.id, []).extend(ent.names)
        self.signal_ids: tuple[str, ...] = tuple(d.id for d in defs)
        self._item_rules: list[_ItemRule] = []
        self._fact_rules: list[_FactRule] = []
        self._touching: dict[str, set[str]] = {}
        used: set[str] = set()
        term_phrases: list[tuple[str, bool, Hashable]] = []
        for defn in defs:
            for ent in defn.entity_ids():
                self._touching.setdefault(ent, set()).add(defn.id)
            used.update(e for e in defn.subjects if e in by_id)
            for side, index, cond in defn.conditions():
                if cond.item is not None:
                    rule = self._item_rule(defn.id, side, index, cond.item, by_id)
                    used.update(rule.mentions_all | rule.mentions_any)
                    for _written, key in rule.terms_all + rule.terms_any + rule.terms_none:
                        term_phrases.append((key[0], key[1], key))
                    self._item_rules.append(rule)
                else:
                    body = cond.result if cond.result is not None else cond.deployment
                    assert body is not None
                    self._fact_rules.append(_FactRule(defn.id, side, index, body))
        self._entities = EntityMatcher(Entity(e, by_id[e]) for e in sorted(used))
        self._terms = _PhraseSet(term_phrases)
        self._uses_numbers = any(r.number is not None for r in self._item_rules)
        self._uses_terms = self._terms.size > 0
        self._index_triggers()

    def _index_triggers(self) -> None:
        """Index each item rule under something the scans must have found for it to hold.

        Every item condition names at least one entity, term or number (``ItemCondition``), so a rule
        whose trigger is absent from an item cannot hold and is not checked: the cost per item follows
        what the item mentions, not the number of signals.
        """
        self._by_entity: dict[str, list[int]] = {}
        self._by_term: dict[_TermKey, list[int]] = {}
        self._by_unit: dict[str, list[int]] = {}
        for idx, rule in enumerate(self._item_rules):
            if rule.mentions_all:
                self._by_entity.setdefault(min(rule.mentions_all), []).append(idx)
            elif rule.mentions_any:
                for ent in rule.mentions_any:
                    self._by_entity.setdefault(ent, []).append(idx)
            elif rule.terms_all:
                self._by_term.setdefault(rule.terms_all[0][1], []).append(idx)
            elif rule.terms_any:
                for _written, key in rule.terms_any:
                    self._by_term.setdefault(key, []).append(idx)
            else:
                assert rule.number is not None  # guaranteed by ItemCondition
                self._by_unit.setdefault(_unit_family(rule.number.unit), []).append(idx)

    @staticmethod
    def _item_rule(
        signal_id: str, side: Side, index: int, cond: ItemCondition, known: Mapping[str, Any]
    ) -> _ItemRule:
        for key in ("mentions_all", "mentions_any"):
            for j, ent in enumerate(getattr(cond, key) or []):
                if ent not in known:
                    raise DefinitionError(
                        f"{side}_when[{index}].item.{key}[{j}]",
                        f"signal {signal_id!r} names entity {ent!r}, which is not among the entities given",
                    )
        return _ItemRule(
            signal_id=signal_id,
            side=side,
            index=index,
            mentions_all=frozenset(cond.mentions_all or ()),
            mentions_any=frozenset(cond.mentions_any or ()),
            terms_all=_terms(cond.terms_all),
            terms_any=_terms(cond.terms_any),
            terms_none=_terms(cond.terms_none),
            number=cond.number,
            trust=frozenset(cond.source_trust) if cond.source_trust else None,
            sources=frozenset(cond.sources) if cond.sources else None,
            published_after=cond.published_after,
        )

    # ------------------------------------------------------------------ introspection

    @property
    def patterns(self) -> dict[str, re.Pattern[str]]:
        """The main compiled phrase pattern of the aliases and of the terms, whatever the signal count.

        Phrases that do not start with a letter or digit (CJK names, symbols) have a second pattern of
        their own inside each phrase set.
        """
        return {"mentions": self._entities.pattern, "terms": self._terms.pattern}

    def signals_touching(self, entity_ids: Iterable[str]) -> set[str]:
        """Ids of the signals whose subjects or conditions name any of ``entity_ids``."""
        out: set[str] = set()
        for ent in entity_ids:
            out |= self._touching.get(ent, set())
        return out

    def entities_in(self, text: str) -> set[str]:
        """Ids of the signal-relevant entities (subjects and mentions_*) named in ``text``."""
        return self._entities.entities_in(text)

    # ------------------------------------------------------------------ items

    def match_item(self, item: ItemView) -> list[Match]:
        """Every item condition of every signal that ``item`` satisfies, in signal order.

        The title and text are normalised once and scanned once each for aliases, terms and quantities.
        """
        text = f"{item.title or ''}\n{item.text or ''}"
        norm, starts, ends = normalize_with_offsets(text)

        def shown(span: tuple[int, int]) -> str:
            # Reasons quote what the reader saw ("Jalapeño"), not the normalised form ("Jalapeno").
            a, b = map_span(span, starts, ends)
            return text[a:b]

        mentioned = self._entities.scan_normalized(norm)
        found_terms = self._terms.scan(norm) if self._uses_terms else {}
        candidates: set[int] = set()
        for ent in mentioned:
            candidates.update(self._by_entity.get(ent, ()))
        for key in found_terms:
            candidates.update(self._by_term.get(key, ()))  # type: ignore[call-overload]
        # Quantities are read only when a rule could use them: one triggered by a unit, or a candidate
        # that also bounds a number.
        quantities: list[Quantity] = []
        if self._uses_numbers and (
            self._by_unit or any(self._item_rules[i].number is not None for i in candidates)
        ):
            quantities = extract_from_normalized(norm)
            for q in quantities:
                candidates.update(self._by_unit.get(_unit_family(q.unit), ()))
        published = (
            _utc_date(item.published_at)
            if item.published_at is not None and not item.published_is_estimated
            else None
        )
        matches = []
        for idx in sorted(candidates):  # rule order is signal order
            rule = self._item_rules[idx]
            reason = self._check_item(rule, item, shown, mentioned, found_terms, quantities, published)
            if reason is not None:
                matches.append(Match(rule.signal_id, rule.side, rule.index, reason))
        return matches

    @staticmethod
    def _check_item(
        rule: _ItemRule,
        item: ItemView,
        shown: Callable[[tuple[int, int]], str],
        mentioned: Mapping[str, tuple[int, int]],
        found_terms: Mapping[Hashable, tuple[int, int]],
        quantities: list[Quantity],
        published: date | None,
    ) -> str | None:
        """The reason text when ``rule`` holds for the item, else ``None``. Cheapest checks first."""
        parts: list[str] = []
        if rule.trust is not None:
            if item.source_trust not in rule.trust:
                return None
            parts.append(f"source trust {item.source_trust}")
        if rule.sources is not None:
            if item.source_id not in rule.sources:
                return None
            parts.append(f"source {item.source_id}")
        if rule.published_after is not None:
            # An estimated publication time is our first-seen time, not the outlet's: it proves nothing.
            if published is None or published < rule.published_after:
                return None
            parts.append(f"published {published.isoformat()}")
        if rule.mentions_all or rule.mentions_any:
            if not rule.mentions_all <= mentioned.keys():
                return None
            hit_any = sorted(rule.mentions_any & mentioned.keys())
            if rule.mentions_any and not hit_any:
                return None
            names = sorted(rule.mentions_all) + [e for e in hit_any if e not in rule.mentions_all]
            parts.append("mentions " + ", ".join(f'{e} ("{shown(mentioned[e])}")' for e in names))
        if rule.terms_all or rule.terms_any or rule.terms_none:
            if any(key not in found_terms for _t, key in rule.terms_all):
                return None
            hit = [t for t, key in rule.terms_any if key in found_terms]
            if rule.terms_any and not hit:
                return None
            blocked = [t for t, key in rule.terms_none if key in found_terms]
            if blocked:
                return None
            listed = [t for t, _k in rule.terms_all] + [t for t in hit if t not in dict(rule.terms_all)]
            if listed:
                parts.append("terms " + ", ".join(f'"{t}"' for t in listed))
        if rule.number is not None:
            q = next((q for q in quantities if quantity_matches(q, rule.number)), None)
            if q is None:
                return None
            parts.append(f'"{shown(q.span)}" ({_fmt(q.value)} {q.unit}) is {_bound_text(rule.number)}')
        return f"item {item.id}: " + "; ".join(parts)

    # ------------------------------------------------------------------ facts

    def match_fact(self, fact: FactView) -> list[Match]:
        """Every result or deployment condition of every signal that ``fact`` satisfies, in signal order."""
        matches = []
        for rule in self._fact_rules:
            cond = rule.condition
            if fact.kind == "result" and isinstance(cond, ResultCondition):
                reason = _check_result(cond, fact)
            elif fact.kind == "deployment" and isinstance(cond, DeploymentCondition):
                reason = _check_deployment(cond, fact)
            else:
                continue
            if reason is not None:
                matches.append(Match(rule.signal_id, rule.side, rule.index, reason))
        return matches


def _value_interval(fields: Mapping[str, Any]) -> tuple[float, float] | None:
    """The fact's value as an interval: a range keeps value_min..value_max, a point is value..value."""
    lo, hi, value = fields.get("value_min"), fields.get("value_max"), fields.get("value")
    if lo is not None and hi is not None:
        return float(lo), float(hi)
    point = value if value is not None else (lo if lo is not None else hi)
    return None if point is None else (float(point), float(point))


def _value_matches(bound: Any, interval: tuple[float, float]) -> tuple[float, float] | None:
    """The accepted interval when it overlaps ``interval``, else ``None``.

    ``tolerance_pct`` widens each bound by that percentage of the bound's own size, so
    ``{eq: 104.3, tolerance_pct: 10}`` accepts 93.87 to 114.73.
    """
    tol = (bound.tolerance_pct or 0.0) / 100.0
    low, high = -math.inf, math.inf
    if bound.gte is not None:
        low = max(low, bound.gte - abs(bound.gte) * tol)
    if bound.lte is not None:
        high = min(high, bound.lte + abs(bound.lte) * tol)
    if bound.eq is not None:
        low = max(low, bound.eq - abs(bound.eq) * tol)
        high = min(high, bound.eq + abs(bound.eq) * tol)
    lo, hi = interval
    fits_low = hi >= low or math.isclose(hi, low, rel_tol=1e-9)
    fits_high = lo <= high or math.isclose(lo, high, rel_tol=1e-9)
    return (low, high) if fits_low and fits_high else None


def _check_result(cond: ResultCondition, fact: FactView) -> str | None:
    f = fact.fields
    parts: list[str] = []
    for key, columns in (
        ("chip", ("chip_ids", "chip_id")),
        ("baseline", ("baseline_ids", "baseline_id")),
        ("model", ("model_ids", "model_id")),
        ("benchmark", ("benchmark_id", "benchmark")),
    ):
        wanted = getattr(cond, key)
        if wanted is not None:
            if wanted not in _ids(f, *columns):
                return None
            parts.append(f"{key} {wanted}")
    if cond.metric is not None:
        if f.get("metric") != cond.metric:
            return None
        parts.append(f"metric {cond.metric}")
    if cond.verification is not None:
        if f.get("verification") not in cond.verification:
            return None
        parts.append(f"verification {f.get('verification')}")
    if cond.reported_by_not is not None:
        # Whoever produced the figure at its stated level: the reproducer when there is one.
        reporter = f.get("reproduced_by") or f.get("reported_by")
        if reporter is None or reporter == cond.reported_by_not:
            return None
        parts.append(f"reported by {reporter}, not {cond.reported_by_not}")
    if cond.value is not None:
        interval = _value_interval(f)
        accepted = None if interval is None else _value_matches(cond.value, interval)
        if accepted is None or interval is None:
            return None
        lo, hi = interval
        shown = _fmt(lo) if lo == hi else f"{_fmt(lo)}..{_fmt(hi)}"
        parts.append(f"value {shown} within [{_fmt(accepted[0])}, {_fmt(accepted[1])}]")
    return f"result {fact.id}: " + "; ".join(parts)


def _check_deployment(cond: DeploymentCondition, fact: FactView) -> str | None:
    f = fact.fields
    parts: list[str] = []
    if cond.chip is not None:
        if cond.chip not in _ids(f, "chip_ids", "chip_id"):
            return None
        parts.append(f"chip {cond.chip}")
    if cond.operator is not None:
        if cond.operator not in _ids(f, "operator_id", "operator"):
            return None
        parts.append(f"operator {cond.operator}")
    if cond.status is not None:
        if f.get("status") != cond.status:
            return None
        parts.append(f"status {cond.status}")
    if cond.capacity_mw_gte is not None:
        # The capacity reached; a target (capacity_mw_target) is a plan, not evidence.
        capacity = f.get("capacity_mw")
        if capacity is None or not (
            capacity >= cond.capacity_mw_gte or math.isclose(capacity, cond.capacity_mw_gte, rel_tol=1e-9)
        ):
            return None
        parts.append(f"capacity {_fmt(capacity)} MW >= {_fmt(cond.capacity_mw_gte)} MW")
    if cond.by is not None:
        held = _as_date(f.get("as_of")) or _as_date(f.get("published_on"))
        if held is None or held > cond.by:
            return None
        parts.append(f"as of {held.isoformat()} (by {cond.by.isoformat()})")
    return f"deployment {fact.id}: " + "; ".join(parts)


def compile_signals(defs: Sequence[SignalDefinition], entities: Sequence[Entity]) -> CompiledRules:
    """Compile validated signal definitions against the entities they name, once.

    ``entities`` must include every entity named in an item condition's ``mentions_all`` /
    ``mentions_any`` (others may be present and are ignored unless they are subjects). Raises
    ``DefinitionError`` naming the condition when one is missing, since that condition could never match.
    """
    return CompiledRules(defs, entities)
