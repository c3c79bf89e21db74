"""Row claims on a real database: leases, the due guard, release, and SKIP LOCKED on PostgreSQL."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from sqlalchemy import and_, select
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from chipwatch.db import get_engine, is_postgres, session_scope
from chipwatch.kit.claims import Heartbeat, claim_rows, new_worker_id, release_rows, renew_rows, unclaimed
from chipwatch.kit.time import utcnow
from chipwatch.types import UTCDateTime


class _Base(DeclarativeBase):
    pass


class Job(_Base):
    """A claimable table of the test's own, outside the application's metadata."""

    __tablename__ = "kit_claim_probe"
    id: Mapped[int] = mapped_column(primary_key=True)
    ready: Mapped[bool] = mapped_column(default=True)
    claimed_until: Mapped[object] = mapped_column(UTCDateTime, nullable=True)
    claimed_by: Mapped[str | None] = mapped_column(nullable=True)


@pytest.fixture
def jobs(db):
    engine = get_engine(db)
    _Base.metadata.create_all(engine)
    with session_scope(db) as session:
        session.add_all([Job(id=i, ready=i != 3) for i in range(1, 7)])
    yield db
    _Base.metadata.drop_all(engine)


def _due(now):
    return and_(Job.ready.is_(True), unclaimed(Job, now))


def _claim(settings, ids, worker, now, lease_s=60):
    with session_scope(settings) as session:
        return sorted(
            claim_rows(session=session, table=Job, ids=ids, due=_due(now), worker_id=worker,
                       lease_until=now + timedelta(seconds=lease_s))
        )


def _holders(settings):
    with session_scope(settings, write=False) as session:
        return dict(session.execute(select(Job.id, Job.claimed_by).order_by(Job.id)).all())


def test_a_claim_takes_due_rows_once(jobs):
    now = utcnow()
    assert _claim(jobs, [1, 2, 3, 4], "a", now) == [1, 2, 4]  # 3 is not due
    assert _claim(jobs, [1, 2, 4, 5], "b", now) == [5]  # live claims are not taken over
    assert _holders(jobs) == {1: "a", 2: "a", 3: None, 4: "a", 5: "b", 6: None}


def test_a_lapsed_lease_is_claimable_again(jobs):
    now = utcnow()
    assert _claim(jobs, [1, 2], "a", now, lease_s=5) == [1, 2]
    assert _claim(jobs, [1, 2], "b", now + timedelta(seconds=6)) == [1, 2]
    assert _holders(jobs)[1] == "b"


def test_release_hands_back_only_the_holders_claims(jobs):
    now = utcnow()
    _claim(jobs, [1, 2], "a", now)
    _claim(jobs, [4], "b", now)
    with session_scope(jobs) as session:
        assert release_rows(session=session, table=Job, ids=[1, 2, 4], worker_id="a") == 2
        assert release_rows(session=session, table=Job, ids=[], worker_id="a") == 0
    assert _holders(jobs) == {1: None, 2: None, 3: None, 4: "b", 5: None, 6: None}
    assert _claim(jobs, [1, 2], "c", now) == [1, 2]


def test_an_empty_candidate_list_claims_nothing(jobs):
    assert _claim(jobs, [], "a", utcnow()) == []


def test_rows_being_claimed_elsewhere_are_skipped_not_waited_for(jobs):
    if not is_postgres(get_engine(jobs)):
        pytest.skip("SQLite serialises claimants at BEGIN IMMEDIATE; SKIP LOCKED is PostgreSQL's")
    now = utcnow()
    lease = now + timedelta(seconds=60)
    with session_scope(jobs) as first:
        taken = claim_rows(session=first, table=Job, ids=[1, 2], due=_due(now), worker_id="a",
                           lease_until=lease)
        # Uncommitted: the rows are locked, so a second claimant passes over them at once.
        assert sorted(taken) == [1, 2]
        assert _claim(jobs, [1, 2, 4], "b", now) == [4]
    assert _holders(jobs)[1] == "a"


def test_worker_ids_are_distinct_and_fit_the_column():
    ids = {new_worker_id() for _ in range(50)}
    assert len(ids) == 50 and all(0 < len(i) <= 64 and i.count(":") >= 2 for i in ids)


def _leases(settings):
    with session_scope(settings, write=False) as session:
        return dict(session.execute(select(Job.id, Job.claimed_until).order_by(Job.id)).all())


def test_a_renewal_extends_only_the_holders_live_claims(jobs):
    now = utcnow()
    _claim(jobs, [1, 2], "a", now, lease_s=5)
    _claim(jobs, [4], "b", now, lease_s=5)
    later = now + timedelta(seconds=40)
    with session_scope(jobs) as session:
        renewed = renew_rows(session=session, table=Job, ids=[1, 2, 4, 5], worker_id="a", lease_until=later)
    assert sorted(renewed) == [1, 2]
    leases = _leases(jobs)
    assert leases[1] == leases[2] == later
    assert leases[4] == now + timedelta(seconds=5) and leases[5] is None


def test_a_heartbeat_keeps_held_claims_alive_until_dropped(jobs):
    """Held claims outlive a 0.6 s lease for as long as they are held; a dropped one lapses and is
    claimable by another worker."""
    now = utcnow()
    _claim(jobs, [1, 2], "a", now, lease_s=0.6)

    def in_transaction(fn):
        def run():
            with session_scope(jobs) as session:
                return fn(session)

        return asyncio.to_thread(run)

    async def hold_for(seconds: float) -> Heartbeat:
        async with Heartbeat(table=Job, worker_id="a", lease_s=0.6, run_write=in_transaction) as beat:
            beat.hold([1, 2])
            await asyncio.sleep(seconds / 2)
            beat.drop([2])
            await asyncio.sleep(seconds / 2)
        return beat

    beat = asyncio.run(hold_for(2.0))
    assert beat.beats >= 4 and beat.failures == 0
    after = utcnow()
    leases = _leases(jobs)
    assert leases[1] > after, "the held claim was renewed to beyond the end"
    assert leases[2] < after, "the dropped claim was left to lapse"
    assert _claim(jobs, [1, 2], "b", after) == [2]
