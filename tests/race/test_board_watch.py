"""The board's watch health, built from three narrow feed columns grouped by trust, equals the rule
applied feed by feed to every source row (the way the board used to be built), on the seeded database
with feeds failing in several patterns, on the board, the signal list and each signal's detail."""

from __future__ import annotations

import pytest
from sqlalchemy import select, update

from chipwatch.db import session_scope
from chipwatch.race.service import build_race
from chipwatch.signals import service as signals_service
from chipwatch.signals.models import Signal
from chipwatch.sources.models import FEED_KINDS, Source


def _reference(signal: Signal, sources: list[Source]) -> tuple[str, list[str]]:
    """Watch health and watched feed ids by the rule of DESIGN.md, one source row at a time."""
    feeds = [s for s in sources if s.enabled and s.url and s.kind in FEED_KINDS]
    items = [c["item"] for c in (*signal.yes_when, *signal.no_when) if "item" in c]
    if not items:
        mine = feeds
    else:
        chosen = {}
        for cond in items:
            ids, trusts = set(cond.get("sources") or []), set(cond.get("source_trust") or [])
            for src in feeds:
                if (ids and src.id in ids) or (not ids and (not trusts or src.trust in trusts)):
                    chosen[src.id] = src
        mine = list(chosen.values())
    failing = sum(1 for s in mine if s.consecutive_failures > 0)
    health = "blind" if not mine or failing == len(mine) else "ok" if failing == 0 else "degraded"
    return health, sorted(s.id for s in mine)


def _fail(where) -> None:
    with session_scope() as session:
        session.execute(update(Source).where(where).values(consecutive_failures=3))


PATTERNS = {
    "all-healthy": None,
    "one-press-feed": lambda: Source.id == _first_feed("press"),
    "every-independent-feed": lambda: Source.trust == "independent",
    "every-feed": lambda: Source.kind.in_(FEED_KINDS),
    "one-named-feed-disabled": "disable",
}


def _first_feed(trust: str) -> str:
    with session_scope(write=False) as session:
        feeds = select(Source.id).where(Source.kind.in_(FEED_KINDS), Source.url.is_not(None))
        return session.scalars(feeds.where(Source.trust == trust).order_by(Source.id)).first()


def _named_feed() -> str | None:
    """A feed some signal's condition names by id, if any."""
    with session_scope(write=False) as session:
        for signal in session.scalars(select(Signal)):
            for cond in (*signal.yes_when, *signal.no_when):
                for source_id in (cond.get("item") or {}).get("sources") or []:
                    return source_id
    return None


@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_board_health_equals_the_rule_feed_by_feed(db, pattern):
    how = PATTERNS[pattern]
    if how == "disable":
        named = _named_feed() or _first_feed("press")
        with session_scope() as session:
            session.execute(update(Source).where(Source.id == named).values(enabled=False))
        _fail(Source.id == _first_feed("independent"))
    elif how is not None:
        _fail(how())
    with session_scope(write=False) as session:
        sources = list(session.scalars(select(Source)))
        signals = list(session.scalars(select(Signal).order_by(Signal.id)))
        expected = {s.id: _reference(s, sources) for s in signals}
        board = build_race(session=session)
        listed = signals_service.list_signals(session=session, limit=500)["items"]
        details = {s.id: signals_service.signal_detail(session=session, signal=s) for s in signals}
    assert len(expected) >= 5
    assert {row["id"]: row["watch_health"] for row in board["signals"]} == {
        k: v[0] for k, v in expected.items()
    }
    assert {row["id"]: row["watch_health"] for row in listed} == {k: v[0] for k, v in expected.items()}
    assert {k: (d.watch_health, d.watched_sources) for k, d in details.items()} == expected
    healths = {v[0] for v in expected.values()}
    if pattern == "all-healthy":
        assert healths == {"ok"}
    if pattern == "every-feed":
        assert healths == {"blind"}
    if pattern in ("one-press-feed", "every-independent-feed"):
        assert healths - {"ok"}, "the pattern should leave some signal not ok"
