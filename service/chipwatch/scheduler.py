"""APScheduler wiring: collects each domain's declared jobs and runs them in the service process."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.interval import IntervalTrigger

from chipwatch.config import Settings
from chipwatch.kit.jobs import Job
from chipwatch.kit.time import utcnow
from chipwatch.signals.jobs import JOBS as SIGNAL_JOBS
from chipwatch.sources.jobs import JOBS as SOURCE_JOBS
from chipwatch.webhooks.jobs import JOBS as WEBHOOK_JOBS

log = logging.getLogger("chipwatch.scheduler")


def collect_jobs() -> list[Job]:
    """Every domain's declared jobs (``JOBS`` of each ``jobs`` module), named here one by one."""
    return [*SOURCE_JOBS, *SIGNAL_JOBS, *WEBHOOK_JOBS]


class RunningScheduler:
    """An AsyncIOScheduler running every collected job; ``stop()`` shuts it down."""

    def __init__(self, scheduler: AsyncIOScheduler) -> None:
        self.scheduler = scheduler

    async def stop(self) -> None:
        self.scheduler.shutdown(wait=False)


async def start_scheduler(settings: Settings, jobs: Sequence[Job]) -> RunningScheduler:
    """Start ``jobs`` on the running event loop; each job never runs twice at once in this process.

    Returns the running scheduler; ``await running.stop()`` shuts it down.
    """
    scheduler = AsyncIOScheduler(timezone="UTC")
    for job in jobs:
        extra = {"next_run_time": utcnow()} if job.run_at_start else {}
        scheduler.add_job(
            _guarded(job, settings),
            IntervalTrigger(seconds=job.interval_s),
            id=job.id,
            max_instances=1,
            coalesce=True,
            **extra,
        )
    scheduler.start()
    log.info("scheduler started with %d jobs", len(scheduler.get_jobs()))
    return RunningScheduler(scheduler)


def _guarded(job: Job, settings: Settings) -> Callable[[], Awaitable[None]]:
    """``job`` for the scheduler: an exception is logged, and the job runs again at its next tick."""

    async def run() -> None:
        try:
            await job.func(settings)
        except Exception:  # a failing job must not stop the scheduler; it runs again next tick
            log.exception("job %s failed", job.id)

    run.__name__ = job.id
    return run
