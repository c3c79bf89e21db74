"""A new or changed signal is matched against stored items in a read snapshot narrowed through the
mention index, then written in a short transaction: the outcome equals a full evaluation inside the
write transaction, and another writer is not blocked while the items are read (SQLite file, a real
second connection), its items still reaching the new signal."""

from __future__ import annotations

import hashlib
import itertools
from datetime import UTC, date, datetime, timedelta

import pytest
from sqlalchemy import create_engine, event, select, update
from sqlmodel import Session

from chipwatch.db import get_engine, session_scope
from chipwatch.knowledge.models import Chip, FactChange
from chipwatch.knowledge.schemas import API_MODELS
from chipwatch.knowledge.service import update_row
from chipwatch.seed_state import SeedDigest
from chipwatch.signals import service
from chipwatch.signals.models import Evidence, Signal
from chipwatch.sources.mentions import link_mentions
from chipwatch.sources.models import Item
from tests.fixtures.signals import definition

TODAY = date(2026, 9, 10)
PUBLISHED = datetime(2026, 9, 3, 8, 30, tzinfo=UTC)
_seq = itertools.count(1)

TEXTS = [
    ("Jalapeño shipped to a second cloud", "The chip shipped in volume this week."),
    ("Jalapeno benchmark", "New figures; nothing shipped yet."),
    ("GB300 racks shipped", "NVIDIA shipped more racks."),
    ("Groq news", "A quiet week."),
    ("辉达 and Jalapeño", "Jalapeño shipped, 据报道."),
] + [(f"Unrelated market item {n}", "Memory prices and shipping rates.") for n in range(40)]


def _store(session: Session, title: str, text: str, seen: datetime | None = None) -> Item:
    """One item stored and linked as a feed check does (link_mentions with the current names)."""
    source = "press-feed"
    n = next(_seq)
    item = Item(
        source_id=source, guid=f"snap-{n}", link=f"https://{source}.example/snap/{n}",
        content_hash=hashlib.sha256(f"snap{n}{title}".encode()).hexdigest(), title=title, summary=text,
        content=text, published_at=PUBLISHED, first_seen_at=seen or datetime.now(UTC),
    )
    session.add(item)
    session.flush()
    link_mentions(session=session, items=[item])
    return item


@pytest.fixture
def stored(feeds):
    """The items above, stored a day ago, with every entity's names last written (seeded or changed) a
    month ago: the mention index is complete for them, and the evaluation narrows through it."""
    month_ago = datetime.now(UTC) - timedelta(days=30)
    with session_scope() as session:
        session.execute(update(FactChange).values(changed_at=month_ago))
        session.execute(update(SeedDigest).values(loaded_at=month_ago))
        for title, text in TEXTS:
            _store(session, title, text, seen=datetime.now(UTC) - timedelta(days=1))
    return feeds


def _outcome(sid: str) -> tuple:
    with session_scope(write=False) as session:
        row = session.get(Signal, sid)
        evidence = session.scalars(select(Evidence).where(Evidence.signal_id == sid))
        refs = sorted((e.side, e.condition_index, e.ref_kind, e.ref_id) for e in evidence)
        return row.status, row.outcome, row.version, refs


CONDITIONS = [
    [{"item": {"mentions_all": ["jalapeno"], "terms_any": ["shipped"]}}],
    [{"item": {"mentions_any": ["gb300", "jalapeno"], "terms_any": ["benchmark"]}}],
    [{"item": {"terms_any": ["quiet week"]}}],  # no entity named: every item is read
]


@pytest.mark.parametrize("yes", CONDITIONS, ids=["mentions-all", "mentions-any", "terms-only"])
def test_snapshot_evaluation_equals_a_full_one_in_the_write_transaction(stored, yes):
    with session_scope(write=False) as snapshot, session_scope() as session:
        _row, narrowed = service.create_signal(
            session=session, signal_in=definition("via-snapshot", yes, review="manual"), today=TODAY,
            snapshot=snapshot,
        )
    with session_scope() as session:
        _row, full = service.create_signal(
            session=session, signal_in=definition("in-one-transaction", yes, review="manual"), today=TODAY
        )
    via_snapshot, in_one = _outcome("via-snapshot"), _outcome("in-one-transaction")
    assert via_snapshot == in_one
    assert via_snapshot[3], "the condition should match some stored item"
    assert narrowed.items == full.items
    if "mentions_all" in yes[0]["item"] or "mentions_any" in yes[0]["item"]:
        # read through the mention index: far fewer rows than the 45 stored items
        assert narrowed.items < 10
    else:
        assert narrowed.items >= len(TEXTS)


def test_an_edit_through_a_snapshot_equals_one_in_the_write_transaction(stored):
    for sid in ("edited-via-snapshot", "edited-in-one"):
        with session_scope() as session:
            service.create_signal(session=session, signal_in=definition(sid, review="manual"), today=TODAY)
    change = {"yes_when": CONDITIONS[1]}
    with session_scope(write=False) as snapshot, session_scope() as session:
        service.update_signal(
            session=session, signal_id="edited-via-snapshot", changes=change, today=TODAY, snapshot=snapshot
        )
    with session_scope() as session:
        service.update_signal(session=session, signal_id="edited-in-one", changes=change, today=TODAY)
    assert _outcome("edited-via-snapshot") == _outcome("edited-in-one")
    assert _outcome("edited-in-one")[3]


def test_an_entity_renamed_after_items_were_linked_still_finds_them(stored):
    # Stored before the alias exists, so linked without it; the alias is then added as the API does
    # (recorded in the chip's history): the snapshot must still read that item.
    with session_scope() as session:
        pepper = _store(session, "Pepper chip ships", "The Pepper accelerator shipped today.").id
    with session_scope() as session:
        aliases = [*session.get(Chip, "jalapeno").aliases, "Pepper"]
        chip_update = API_MODELS["chips"][1]
        update_row(session=session, kind="chips", id_="jalapeno", changes_in=chip_update(aliases=aliases))
    yes = [{"item": {"mentions_all": ["jalapeno"], "terms_any": ["shipped"]}}]
    with session_scope(write=False) as snapshot, session_scope() as session:
        service.create_signal(
            session=session, signal_in=definition("renamed", yes, review="manual"), today=TODAY,
            snapshot=snapshot,
        )
    refs = {ref_id for _s, _c, kind, ref_id in _outcome("renamed")[3] if kind == "item"}
    assert str(pepper) in refs


def test_another_writer_is_not_blocked_while_a_create_reads_the_items(stored):
    engine = get_engine(stored)
    if engine.dialect.name != "sqlite":
        pytest.skip("SQLite's database-wide write lock is what this is about; PostgreSQL locks rows")
    # A second writer of its own (not the app's pool), failing at once if the write lock is held.
    other = create_engine(engine.url, connect_args={"timeout": 0.5})
    written: list[int] = []

    def write_meanwhile(conn, _cursor, statement, _params, _context, _many):
        if written or "FROM items JOIN sources" not in statement or conn.info.get("write"):
            return
        with Session(other) as session:
            item = _store(session, "Jalapeño shipped to a third cloud", "Shipped meanwhile.")
            session.commit()
            written.append(item.id)

    event.listen(engine, "before_cursor_execute", write_meanwhile)
    try:
        with session_scope(write=False) as snapshot, session_scope() as session:
            service.create_signal(
                session=session, signal_in=definition("meanwhile", CONDITIONS[0], review="manual"),
                today=TODAY, snapshot=snapshot,
            )
    finally:
        event.remove(engine, "before_cursor_execute", write_meanwhile)
        other.dispose()
    assert written, "the other writer should have written while the items were read"
    refs = {ref_id for _s, _c, kind, ref_id in _outcome("meanwhile")[3] if kind == "item"}
    assert str(written[0]) in refs, "an item written during the snapshot still reaches the new signal"
