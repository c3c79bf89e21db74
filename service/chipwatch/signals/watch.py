"""Which feeds watch a signal, and how healthy they are: read once per board, then answered per signal
in time proportional to the signal's conditions, not to the number of feeds.

The rule (DESIGN.md, "Signals"): an item condition that names ``sources`` is fed by those; one that names
``source_trust`` by the enabled feeds of that trust; one with neither by every enabled feed; a signal
with no item condition is fed by every feed, since facts reach the knowledge base through the same news.
``watch_health`` is ``ok`` when none of those feeds is failing (``consecutive_failures`` > 0),
``degraded`` when some are, ``blind`` when all are or there are none.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlmodel import Session

from chipwatch.sources.models import FEED_KINDS, Source


@dataclass(frozen=True, slots=True)
class _Scope:
    """The feeds a signal's item conditions reach: every feed, or the union of whole trust levels and
    named feeds."""

    every: bool
    trusts: frozenset[str]
    ids: frozenset[str]


def _scope(yes_when: Iterable[dict[str, Any]], no_when: Iterable[dict[str, Any]]) -> _Scope:
    conditions = [c["item"] for c in (*yes_when, *no_when) if "item" in c]
    if not conditions:
        return _Scope(True, frozenset(), frozenset())
    trusts: set[str] = set()
    ids: set[str] = set()
    for cond in conditions:
        named = cond.get("sources") or []
        if named:
            ids.update(named)
        elif cond.get("source_trust"):
            trusts.update(cond["source_trust"])
        else:
            return _Scope(True, frozenset(), frozenset())
    return _Scope(False, frozenset(trusts), frozenset(ids))


class FeedWatch:
    """The enabled feeds, read as three narrow columns (id, trust, failing), grouped by trust."""

    def __init__(self, feeds: Iterable[tuple[str, str, bool]]) -> None:
        self.trust_of: dict[str, str] = {}
        self.failing: set[str] = set()
        self.by_trust: dict[str, list[str]] = {}
        self.failing_by_trust: dict[str, int] = {}
        for feed_id, trust, failing in feeds:
            self.trust_of[feed_id] = trust
            self.by_trust.setdefault(trust, []).append(feed_id)
            self.failing_by_trust[trust] = self.failing_by_trust.get(trust, 0) + bool(failing)
            if failing:
                self.failing.add(feed_id)

    @classmethod
    def load(cls, *, session: Session) -> FeedWatch:
        """The enabled feeds of the database (seed articles and reports are not watched), in one query."""
        stmt = select(Source.id, Source.trust, Source.consecutive_failures > 0).where(
            Source.enabled.is_(True), Source.kind.in_(FEED_KINDS), Source.url.is_not(None)
        )
        return cls(session.execute(stmt).tuples())

    def watched_ids(self, yes_when: Iterable[dict[str, Any]], no_when: Iterable[dict[str, Any]]) -> list[str]:
        """Ids of the enabled feeds that watch a signal with these conditions, sorted."""
        scope = _scope(yes_when, no_when)
        if scope.every:
            return sorted(self.trust_of)
        chosen = {i for i in scope.ids if i in self.trust_of}
        for trust in scope.trusts:
            chosen.update(self.by_trust.get(trust, ()))
        return sorted(chosen)

    def health(self, yes_when: Iterable[dict[str, Any]], no_when: Iterable[dict[str, Any]]) -> str:
        """``ok``, ``degraded`` or ``blind`` for a signal with these conditions (see the module)."""
        scope = _scope(yes_when, no_when)
        if scope.every:
            watched, failing = len(self.trust_of), len(self.failing)
        else:
            watched = sum(len(self.by_trust.get(t, ())) for t in scope.trusts)
            failing = sum(self.failing_by_trust.get(t, 0) for t in scope.trusts)
            for feed_id in scope.ids:  # named feeds outside those trust levels
                trust = self.trust_of.get(feed_id)
                if trust is not None and trust not in scope.trusts:
                    watched += 1
                    failing += feed_id in self.failing
        if watched == 0:
            return "blind"
        if failing == 0:
            return "ok"
        return "blind" if failing == watched else "degraded"


__all__ = ["FeedWatch"]
