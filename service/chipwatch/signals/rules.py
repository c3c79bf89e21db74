"""The compiled signal matcher (pure: no I/O, no database).

``compile_signals`` turns validated definitions into ``CompiledRules`` once. Matching an item then reads
its text a fixed number of times whatever the number of signals or aliases: one normalisation pass, one
scan with one Aho-Corasick automaton of every alias and term (``chipwatch.text.phrase_index``) and one
with the quantity pattern (only when a rule needs quantities to be found, or a rule that bounds a number
has passed all its other checks).
Phrases (aliases and terms) are matched as ``chipwatch.text.phrases`` describes; a term ending in
``*`` matches any word starting with it ("reproduc*": reproduced, reproduction). A condition is only
checked when something it needs was found (an entity, a term or a unit it names), with set operations on
what the scans found, so the work per item follows what the item says rather than the number of signals.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Literal

from chipwatch.kit.time import as_utc
from chipwatch.signals.definition import (
    ChangeCondition,
    DefinitionError,
    DeploymentCondition,
    FundingCondition,
    ItemCondition,
    NumberBound,
    ResultCondition,
    SignalDefinition,
)
from chipwatch.signals.fact_conditions import ChangeView, check_change, named_constraints
from chipwatch.text.entities import Entity, EntityMatcher, entity_names
from chipwatch.text.normalize import map_span, normalize_with_offsets
from chipwatch.text.numbers import Quantity, extract_from_normalized, quantity_matches, unit_family
from chipwatch.text.phrase_index import PhraseIndex
from chipwatch.text.phrases import PhraseSet, canonical
from chipwatch.vocab.status import Side

__all__ = [
    "ChangeView",
    "CompiledRules",
    "FactView",
    "ItemView",
    "Match",
    "compile_signals",
]

# ---------------------------------------------------------------------------------------------------
# Inputs and outputs
# ---------------------------------------------------------------------------------------------------


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
    ``published_on`` (dates, datetimes or ISO strings). Funding rounds: ``vendor_id``, ``round_type``,
    ``status``, ``amount``, ``post_money_valuation``, ``currency``, ``announced_on``, ``as_of``,
    ``published_on``. Missing fields fail the constraints that read them.
    """

    kind: Literal["result", "deployment", "funding"]
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


# ---------------------------------------------------------------------------------------------------
# Compiled conditions
# ---------------------------------------------------------------------------------------------------

_TermKey = tuple[str, bool]


def _term_key(term: str) -> tuple[str, _TermKey]:
    """``(term as written, (canonical literal, wildcard))``; terms equal after normalisation share a key."""
    wildcard = term.endswith("*")
    return term, (canonical(term[:-1] if wildcard else term), wildcard)


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
    # The term keys of terms_all, terms_any and terms_none as sets, for one set test each.
    all_keys: frozenset[_TermKey] = frozenset()
    any_keys: frozenset[_TermKey] = frozenset()
    none_keys: frozenset[_TermKey] = frozenset()


@dataclass(frozen=True, slots=True)
class _FactRule:
    signal_id: str
    side: Side
    index: int
    condition: ResultCondition | DeploymentCondition | FundingCondition | ChangeCondition


def _terms(values: list[str] | None) -> tuple[tuple[str, _TermKey], ...]:
    return tuple(_term_key(t) for t in values or [])


def _utc_date(moment: datetime) -> date:
    return as_utc(moment).date()


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
        self._change_rules: list[_FactRule] = []
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
                elif cond.change is not None:
                    self._change_rules.append(_FactRule(defn.id, side, index, cond.change))
                else:
                    body = cond.body
                    assert isinstance(body, ResultCondition | DeploymentCondition | FundingCondition)
                    self._fact_rules.append(_FactRule(defn.id, side, index, body))
        matched = [Entity(e, by_id[e]) for e in sorted(used)]
        self._entities = EntityMatcher(matched)
        self._terms = PhraseSet(term_phrases)
        # Aliases and terms in one Aho-Corasick automaton (in C), so an item is read once for both, faster
        # than the trie-shaped regex finds the same occurrences; the labels cannot collide: entity ids are
        # strings, term keys are tuples.
        self._phrases = PhraseIndex(
            [(name, False, ent.id) for ent in matched for name in entity_names(ent)] + term_phrases
        )
        self._index_triggers()
        self._index_fact_rules()

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
                self._by_unit.setdefault(unit_family(rule.number.unit), []).append(idx)
        self._by_label: dict[Hashable, list[int]] = {**self._by_entity, **self._by_term}

    def _index_fact_rules(self) -> None:
        """Index each fact rule by the fact kind it reads and, where it names one, by its chip (results and
        deployments) or vendor (funding rounds): a fact meets only the rules that could hold for it."""
        self._fact_any: dict[str, list[int]] = {kind: [] for kind in _FACT_KIND_OF.values()}
        self._fact_by_key: dict[str, dict[str, list[int]]] = {kind: {} for kind in _FACT_KIND_OF.values()}
        for idx, rule in enumerate(self._fact_rules):
            kind = _FACT_KIND_OF[type(rule.condition)]
            key = _fact_rule_key(rule.condition)
            if key is None:
                self._fact_any[kind].append(idx)
            else:
                self._fact_by_key[kind].setdefault(key, []).append(idx)

    def _fact_candidates(self, fact: FactView) -> list[int]:
        """Indexes into ``_fact_rules`` of the rules that could hold for ``fact``, in signal order."""
        by_key = self._fact_by_key.get(fact.kind)
        if by_key is None:
            return []
        found = self._fact_any[fact.kind]
        if by_key:
            if fact.kind == "funding":
                keys = [fact.fields.get("vendor_id")]
            else:
                keys = _ids(fact.fields, "chip_ids", "chip_id")
            keyed = [idx for key in keys if key in by_key for idx in by_key[key]]
            if keyed:
                found = sorted({*found, *keyed})
        return found

    @staticmethod
    def _item_rule(
        signal_id: str, side: Side, index: int, cond: ItemCondition, known: Mapping[str, Any]
    ) -> _ItemRule:
        for key in ("mentions_all", "mentions_any"):
            for j, ent in enumerate(getattr(cond, key) or []):
                if ent not in known:
                    raise DefinitionError(
                        f"{side}_when.{index}.item.{key}.{j}",
                        f"signal {signal_id!r} names entity {ent!r}, which is not among the entities given",
                    )
        terms_all, terms_any = _terms(cond.terms_all), _terms(cond.terms_any)
        terms_none = _terms(cond.terms_none)
        return _ItemRule(
            signal_id=signal_id,
            side=side,
            index=index,
            mentions_all=frozenset(cond.mentions_all or ()),
            mentions_any=frozenset(cond.mentions_any or ()),
            terms_all=terms_all,
            terms_any=terms_any,
            terms_none=terms_none,
            number=cond.number,
            trust=frozenset(cond.source_trust) if cond.source_trust else None,
            sources=frozenset(cond.sources) if cond.sources else None,
            published_after=cond.published_after,
            all_keys=frozenset(key for _t, key in terms_all),
            any_keys=frozenset(key for _t, key in terms_any),
            none_keys=frozenset(key for _t, key in terms_none),
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

        The title and text are normalised once and scanned once for aliases and terms together, and once
        for quantities when a rule could use them.
        """
        text = f"{item.title or ''}\n{item.text or ''}"
        norm, starts, ends = normalize_with_offsets(text)

        def shown(span: tuple[int, int]) -> str:
            # Reasons quote what the reader saw ("Jalapeño"), not the normalised form ("Jalapeno").
            a, b = map_span(span, starts, ends)
            return text[a:b]

        # Entity ids (strings) and term keys (tuples) side by side: one dict serves as both, since a
        # lookup by one kind never finds the other.
        found = self._phrases.scan(norm)
        candidates: set[int] = set()
        by_label = self._by_label
        for label in found:
            rule_ids = by_label.get(label)
            if rule_ids is not None:
                candidates.update(rule_ids)
        # Quantities are read only when a rule could use them. Rules triggered by a unit need them to be
        # found at all; otherwise they are read on the first candidate that bounds a number and has passed
        # every other check (the number is checked last), which most items never reach.
        read: list[list[Quantity]] = []

        def quantities() -> list[Quantity]:
            if not read:
                read.append(extract_from_normalized(norm))
            return read[0]

        if self._by_unit:
            for q in quantities():
                candidates.update(self._by_unit.get(unit_family(q.unit), ()))
        if not candidates:
            return []
        matches = []
        rules = self._item_rules
        for idx in sorted(candidates):  # rule order is signal order
            rule = rules[idx]
            reason = self._check_item(rule, item, shown, found, quantities)
            if reason is not None:
                matches.append(Match(rule.signal_id, rule.side, rule.index, reason))
        return matches

    @staticmethod
    def _check_item(
        rule: _ItemRule,
        item: ItemView,
        shown: Callable[[tuple[int, int]], str],
        found: Mapping[Hashable, tuple[int, int]],  # entity ids and term keys side by side
        quantities: Callable[[], list[Quantity]],
    ) -> str | None:
        """The reason text when ``rule`` holds for the item, else ``None``. Cheapest checks first."""
        # Every check is decided before any text is formatted: most candidate rules fail one.
        if rule.trust is not None and item.source_trust not in rule.trust:
            return None
        if rule.sources is not None and item.source_id not in rule.sources:
            return None
        published = None
        if rule.published_after is not None:
            # An estimated publication time is our first-seen time, not the outlet's: it proves nothing.
            if item.published_at is None or item.published_is_estimated:
                return None
            published = _utc_date(item.published_at)
            if published < rule.published_after:
                return None
        labels = found.keys()
        if rule.mentions_all and not labels >= rule.mentions_all:
            return None
        if rule.mentions_any and labels.isdisjoint(rule.mentions_any):
            return None
        if rule.all_keys and not labels >= rule.all_keys:
            return None
        if rule.any_keys and labels.isdisjoint(rule.any_keys):
            return None
        if rule.none_keys and not labels.isdisjoint(rule.none_keys):
            return None
        q = None
        if rule.number is not None:
            q = next((q for q in quantities() if quantity_matches(q, rule.number)), None)
            if q is None:
                return None
        parts: list[str] = []
        if rule.trust is not None:
            parts.append(f"source trust {item.source_trust}")
        if rule.sources is not None:
            parts.append(f"source {item.source_id}")
        if published is not None:
            parts.append(f"published {published.isoformat()}")
        if rule.mentions_all or rule.mentions_any:
            hit_any = sorted(e for e in rule.mentions_any if e in found and e not in rule.mentions_all)
            names = sorted(rule.mentions_all) + hit_any
            parts.append("mentions " + ", ".join(f'{e} ("{shown(found[e])}")' for e in names))
        if rule.terms_all or rule.terms_any:
            listed = [t for t, _k in rule.terms_all]
            written = set(listed)
            listed += [t for t, key in rule.terms_any if key in found and t not in written]
            parts.append("terms " + ", ".join(f'"{t}"' for t in listed))
        if q is not None:
            assert rule.number is not None
            parts.append(f'"{shown(q.span)}" ({_fmt(q.value)} {q.unit}) is {_bound_text(rule.number)}')
        return f"item {item.id}: " + "; ".join(parts)

    # ------------------------------------------------------------------ facts

    def match_fact(self, fact: FactView) -> list[Match]:
        """Every result, deployment or funding condition of every signal that ``fact`` satisfies, in signal
        order.

        A fact a dataset's newer version retired, or an analyst retracted, is no longer current and
        satisfies nothing (evidence it gave before stays).
        """
        matches: list[Match] = []
        if fact.fields.get("retired_at") is not None or fact.fields.get("retracted_at") is not None:
            return matches
        check = _FACT_CHECKS.get(fact.kind)
        if check is None:
            return matches
        rules = self._fact_rules
        for idx in self._fact_candidates(fact):
            rule = rules[idx]
            reason = check(rule.condition, fact)  # type: ignore[operator]
            if reason is not None:
                matches.append(Match(rule.signal_id, rule.side, rule.index, reason))
        return matches

    def fact_keys(self, kind: str) -> frozenset[str] | None:
        """The ids a ``kind`` fact (``result``, ``deployment``, ``funding``) must name for
        :meth:`match_fact` to find anything (its chip ids, or its vendor id for funding): those the
        rules of its kind name, empty when it has none. None when some rule of its kind names no chip
        or vendor, so that any fact of it may match."""
        if _FACT_CHECKS.get(kind) is None or kind not in self._fact_by_key:
            return frozenset()
        if self._fact_any[kind]:
            return None
        return frozenset(self._fact_by_key[kind])

    @property
    def watches_changes(self) -> bool:
        """True when some signal has a change condition (else changes need not be read)."""
        return bool(self._change_rules)

    def match_change(self, change: ChangeView) -> list[Match]:
        """Every change condition of every signal that ``change`` satisfies, in signal order."""
        matches = []
        for rule in self._change_rules:
            reason = check_change(rule.condition, change)  # type: ignore[arg-type]
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
    named = named_constraints(cond, f)
    if named is None:
        return None
    parts.extend(named)
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


def _at_least(value: Any, bound: float) -> bool:
    return value is not None and (float(value) >= bound or math.isclose(float(value), bound, rel_tol=1e-9))


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
        if not _at_least(capacity, cond.capacity_mw_gte):
            return None
        parts.append(f"capacity {_fmt(capacity)} MW >= {_fmt(cond.capacity_mw_gte)} MW")
    if cond.by is not None:
        held = _as_date(f.get("as_of")) or _as_date(f.get("published_on"))
        if held is None or held > cond.by:
            return None
        parts.append(f"as of {held.isoformat()} (by {cond.by.isoformat()})")
    return f"deployment {fact.id}: " + "; ".join(parts)


def _check_funding(cond: FundingCondition, fact: FactView) -> str | None:
    f = fact.fields
    parts: list[str] = []
    if cond.vendor is not None:
        if f.get("vendor_id") != cond.vendor:
            return None
        parts.append(f"vendor {cond.vendor}")
    if cond.round_type is not None:
        if f.get("round_type") not in cond.round_type:
            return None
        parts.append(f"round {f.get('round_type')}")
    if cond.status is not None:
        if f.get("status") != cond.status:
            return None
        parts.append(f"status {cond.status}")
    if cond.currency is not None:
        if f.get("currency") != cond.currency:
            return None
    unit = f" {f.get('currency')}" if f.get("currency") else ""
    for key, field, words in (("amount_gte", "amount", "amount"),
                              ("post_money_valuation_gte", "post_money_valuation", "post-money valuation")):
        bound = getattr(cond, key)
        if bound is not None:
            if not _at_least(f.get(field), bound):
                return None
            parts.append(f"{words} {_fmt(float(f[field]))}{unit} >= {_fmt(bound)}{unit}")
    if cond.by is not None:
        held = _as_date(f.get("announced_on")) or _as_date(f.get("as_of")) or _as_date(f.get("published_on"))
        if held is None or held > cond.by:
            return None
        parts.append(f"announced {held.isoformat()} (by {cond.by.isoformat()})")
    return f"funding round {fact.id}: " + "; ".join(parts)


_FACT_KIND_OF: dict[type, str] = {
    ResultCondition: "result",
    DeploymentCondition: "deployment",
    FundingCondition: "funding",
}
"""The fact kind (``FactView.kind``) each fact condition reads."""

_FACT_CHECKS: dict[str, Callable[[Any, FactView], str | None]] = {
    "result": _check_result,
    "deployment": _check_deployment,
    "funding": _check_funding,
}


def _fact_rule_key(cond: ResultCondition | DeploymentCondition | FundingCondition) -> str | None:
    """The chip (results, deployments) or vendor (funding rounds) a fact must name for ``cond`` to hold."""
    if isinstance(cond, FundingCondition):
        return cond.vendor
    return cond.chip


def compile_signals(defs: Sequence[SignalDefinition], entities: Sequence[Entity]) -> CompiledRules:
    """Compile validated signal definitions against the entities they name, once.

    ``entities`` must include every entity named in an item condition's ``mentions_all`` /
    ``mentions_any`` (others may be present and are ignored unless they are subjects). Raises
    ``DefinitionError`` naming the condition when one is missing, since that condition could never match.
    """
    return CompiledRules(defs, entities)
