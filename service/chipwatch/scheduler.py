"""APScheduler wiring: collects each domain's declared jobs and runs them in the service process."""

from __future__ import annotations

import importlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.interval import IntervalTrigger

from chipwatch.config import Settings

log = logging.getLogger("chipwatch.scheduler")
JOB_MODULES = ("chipwatch.sources.jobs", "chipwatch.signals.jobs", "chipwatch.webhooks.jobs")


@dataclass(frozen=True)
class Job:
    """A scheduled entry point with a stable dotted id (``sources.check_due``)."""

    id: str
    func: Callable[[Settings], Awaitable[object]]
    interval_s: float
    run_at_start: bool = False
    description: str = ""


def collect_jobs() -> list[Job]:
    """Every domain's ``JOBS`` list; a domain without a jobs module contributes none."""
    jobs: list[Job] = []
    for name in JOB_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        jobs.extend(getattr(module, "JOBS", []))
    return jobs


class RunningScheduler:
    """An AsyncIOScheduler running every collected job; ``stop()`` shuts it down."""

    def __init__(self, scheduler: AsyncIOScheduler) -> None:
        self.scheduler = scheduler

    async def stop(self) -> None:
        self.scheduler.shutdown(wait=False)


async def start_scheduler(settings: Settings) -> RunningScheduler:
    """Start the jobs on the running event loop; each job never runs twice at once in this process."""
    from datetime import UTC, datetime

    scheduler = AsyncIOScheduler(timezone="UTC")
    for job in collect_jobs():
        extra = {"next_run_time": datetime.now(UTC)} if job.run_at_start else {}
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
    async def run() -> None:
        try:
            await job.func(settings)
        except Exception:  # a failing job must not stop the scheduler; it runs again next tick
            log.exception("job %s failed", job.id)

    run.__name__ = job.id
    return run
