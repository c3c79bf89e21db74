"""Which feeds watch a signal, and how healthy they are: counted in SQL per trust level once per board,
then answered per signal in time proportional to the signal's conditions, not to the number of feeds.

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

from sqlalchemy import bindparam, case, func, or_, select
from sqlmodel import Session

from chipwatch.kit.rows import column_rows
from chipwatch.sources.models import FEED_KINDS, Source

Conditions = Iterable[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class _Scope:
    """The feeds a signal's item conditions reach: every feed, or the union of whole trust levels and
    named feeds."""

    every: bool
    trusts: frozenset[str]
    ids: frozenset[str]


def _scope(yes_when: Conditions, no_when: Conditions) -> _Scope:
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


def _feeds() -> Any:
    """The watched sources: enabled feeds (seed articles and reports are not watched)."""
    return (Source.enabled.is_(True), Source.kind.in_(FEED_KINDS), Source.url.is_not(None))


# Built once: statements are immutable, and building one costs about as much as running it.
_PER_TRUST = (
    select(Source.trust, func.count(), func.sum(case((Source.consecutive_failures > 0, 1), else_=0)))
    .where(*_feeds())
    .group_by(Source.trust)
)
_NAMED = select(Source.id, Source.trust, Source.consecutive_failures > 0).where(
    *_feeds(), Source.id.in_(bindparam("ids", expanding=True))
)
_EVERY_FEED = select(Source.id).where(*_feeds()).order_by(Source.id)
_SOME_FEEDS = (
    select(Source.id)
    .where(
        *_feeds(),
        or_(
            Source.id.in_(bindparam("ids", expanding=True)),
            Source.trust.in_(bindparam("trusts", expanding=True)),
        ),
    )
    .order_by(Source.id)
)


class FeedWatch:
    """Enabled feeds counted per trust level (watched, failing), and the feeds signals name by id."""

    def __init__(self, per_trust: dict[str, tuple[int, int]], named: dict[str, tuple[str, bool]]) -> None:
        self.per_trust = per_trust
        self.named = named
        self.total = sum(n for n, _f in per_trust.values())
        self.failing = sum(f for _n, f in per_trust.values())

    @classmethod
    def load(cls, *, session: Session, signals: Iterable[Any] = ()) -> FeedWatch:
        """Two narrow queries: counts per trust level, and (trust, failing) of the feeds ``signals`` (rows
        with ``yes_when`` and ``no_when``) name by id."""
        per_trust = {trust: (int(n), int(f or 0)) for trust, n, f in column_rows(session, _PER_TRUST).all()}
        wanted = sorted({i for s in signals for i in _scope(s.yes_when, s.no_when).ids})
        named = {}
        if wanted:
            rows = column_rows(session, _NAMED, {"ids": wanted}).all()
            named = {i: (trust, bool(bad)) for i, trust, bad in rows}
        return cls(per_trust, named)

    def health(self, yes_when: Conditions, no_when: Conditions) -> str:
        """``ok``, ``degraded`` or ``blind`` for a signal with these conditions (see the module); the
        feeds it names by id must have been given to :meth:`load`."""
        scope = _scope(yes_when, no_when)
        if scope.every:
            watched, failing = self.total, self.failing
        else:
            counts = [self.per_trust.get(t, (0, 0)) for t in scope.trusts]
            watched, failing = sum(n for n, _f in counts), sum(f for _n, f in counts)
            for feed_id in scope.ids:  # named feeds outside those trust levels
                trust, bad = self.named.get(feed_id, (None, False))
                if trust is not None and trust not in scope.trusts:
                    watched += 1
                    failing += bad
        if watched == 0:
            return "blind"
        if failing == 0:
            return "ok"
        return "blind" if failing == watched else "degraded"


def watched_feed_ids(*, session: Session, yes_when: Conditions, no_when: Conditions) -> list[str]:
    """Ids of the enabled feeds that watch a signal with these conditions, sorted (one query)."""
    scope = _scope(yes_when, no_when)
    if scope.every:
        return list(column_rows(session, _EVERY_FEED).scalars().all())
    params = {"ids": sorted(scope.ids), "trusts": sorted(scope.trusts)}
    return list(column_rows(session, _SOME_FEEDS, params).scalars().all())


__all__ = ["FeedWatch", "watched_feed_ids"]
