"""Checks on a signal definition that its JSON Schema cannot state, each problem named by its field.

All of them are collected (never the first only), so one refusal lists everything to fix: an opening
date in the future, a deadline before the opening, bounds that exclude every value, more terms than a
definition may carry, and ids the knowledge base or the sources do not have.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from typing import TYPE_CHECKING

from chipwatch.kit.schema_errors import suggest

if TYPE_CHECKING:  # the models import this module
    from chipwatch.signals.definition import SignalDefinition

Problem = tuple[str, str]
"""``(field, message)``; the field is relative to the definition."""

MAX_CONDITIONS = 50
"""Conditions per side (``yes_when``, ``no_when``); also the schema's ``maxItems``."""
MAX_TERMS = 500
"""Terms (``terms_all``, ``terms_any``, ``terms_none`` of every item condition) per definition. Each is a
phrase every stored and new item is read for; thousands made one definition's evaluation hold the
write lock for tens of seconds."""
TERM_KEYS = ("terms_all", "terms_any", "terms_none")


def _suggest(value: str, known: set[str]) -> str:
    close = suggest(value, known)
    return f"; did you mean {close!r}?" if close else ""


def _bound_problems(defn: SignalDefinition) -> Iterator[Problem]:
    for side, i, cond in defn.conditions():
        base = f"{side}_when.{i}.{cond.kind}"
        if cond.item is not None and cond.item.number is not None:
            n = cond.item.number
            lows = [v for v in (n.gte, n.gt) if v is not None]
            highs = [v for v in (n.lte, n.lt) if v is not None]
            if n.eq is not None and (any(n.eq < v for v in lows) or any(n.eq > v for v in highs)):
                yield f"{base}.number", "eq lies outside the other bounds"
            if lows and highs and max(lows) > min(highs):
                yield f"{base}.number", "the lower bound exceeds the upper bound, so nothing can match"
        if cond.result is not None and cond.result.value is not None:
            v = cond.result.value
            if v.gte is not None and v.lte is not None and v.gte > v.lte:
                yield f"{base}.value", "gte exceeds lte, so nothing can match"


def _size_problems(defn: SignalDefinition) -> Iterator[Problem]:
    terms = sum(
        len(getattr(cond.item, key) or [])
        for _side, _i, cond in defn.conditions()
        if cond.item is not None
        for key in TERM_KEYS
    )
    if terms > MAX_TERMS:
        yield "yes_when", f"at most {MAX_TERMS} terms in all conditions together; got {terms}"


def _reference_problems(
    defn: SignalDefinition, known_entities: set[str] | None, known_sources: set[str] | None
) -> Iterator[Problem]:
    if known_sources is not None:
        for side, i, cond in defn.conditions():
            if cond.item is None:
                continue
            for j, src in enumerate(cond.item.sources or []):
                if src not in known_sources:
                    field = f"{side}_when.{i}.item.sources.{j}"
                    yield field, f"unknown source id {src!r}{_suggest(src, known_sources)}"
    if known_entities is not None:
        for field, ent in defn.entity_refs():
            if ent not in known_entities:
                yield field, f"unknown entity id {ent!r}{_suggest(ent, known_entities)}"


def semantic_problems(
    defn: SignalDefinition,
    *,
    known_entities: set[str] | None,
    known_sources: set[str] | None,
    today: date | None,
) -> list[Problem]:
    """Every problem of ``defn`` that its schema cannot see. ``today`` (UTC) refuses an opening date
    after it (None: not checked); ``known_entities`` / ``known_sources`` refuse ids not among them (None:
    not checked)."""
    problems: list[Problem] = []
    # opened_on is None only in a definition the schema refused in part (definition.partial_problems).
    if today is not None and defn.opened_on is not None and defn.opened_on > today:
        problems.append(("opened_on", f"must not be in the future (today is {today.isoformat()})"))
    if defn.deadline is not None and defn.opened_on is not None and defn.deadline < defn.opened_on:
        problems.append(("deadline", f"must not be before opened_on ({defn.opened_on.isoformat()})"))
    problems += _bound_problems(defn)
    problems += _size_problems(defn)
    problems += _reference_problems(defn, known_entities, known_sources)
    return problems


__all__ = ["MAX_CONDITIONS", "MAX_TERMS", "Problem", "semantic_problems"]
