"""Scheduled entry points of the sources domain, collected by :mod:`chipwatch.scheduler`."""

from __future__ import annotations

from chipwatch.config import Settings
from chipwatch.kit.jobs import Job
from chipwatch.sources.check import CheckOutcome
from chipwatch.sources.check_pass import check_due
from chipwatch.sources.relink import relink_mentions_job


async def _check_due_job(settings: Settings) -> list[CheckOutcome]:
    return await check_due(settings)


JOBS = [
    Job(
        "sources.check_due",
        _check_due_job,
        interval_s=30,
        run_at_start=True,
        description="claim the feeds that are due and check them",
    ),
    Job(
        "sources.relink_mentions",
        relink_mentions_job,
        interval_s=30,
        run_at_start=True,
        description="match stored items again with the names of entities whose names changed",
    ),
]

__all__ = ["JOBS"]
