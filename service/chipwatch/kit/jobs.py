"""Job declarations: each domain lists its scheduled entry points as :class:`Job` values in ``JOBS``;
the scheduler and the CLI (``chipwatch jobs list|run``) take them from
:func:`chipwatch.scheduler.collect_jobs`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from chipwatch.config import Settings


@dataclass(frozen=True)
class Job:
    """A scheduled entry point with a stable dotted id (``sources.check_due``).

    ``func(settings)`` does one round of the work; it runs every ``interval_s`` seconds, and once at
    start-up when ``run_at_start``. Manual runs (``chipwatch jobs run ID``) call the same ``func``.
    """

    id: str
    func: Callable[[Settings], Awaitable[object]]
    interval_s: float
    run_at_start: bool = False
    description: str = ""


def find_job(jobs: Sequence[Job], job_id: str) -> Job:
    """The job of ``jobs`` whose id is ``job_id``; KeyError naming the known ids otherwise."""
    for job in jobs:
        if job.id == job_id:
            return job
    raise KeyError(f"no job {job_id!r}; known: {', '.join(j.id for j in jobs)}")
