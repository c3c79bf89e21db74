"""Scheduled entry points of the imports domain, collected by :mod:`chipwatch.scheduler`."""

from __future__ import annotations

from chipwatch.config import Settings
from chipwatch.imports.polling import DatasetCheck, check_due_datasets
from chipwatch.kit.jobs import Job


async def _check_datasets_job(settings: Settings) -> list[DatasetCheck]:
    return await check_due_datasets(settings)


JOBS = [
    Job(
        "imports.check_datasets",
        _check_datasets_job,
        interval_s=300,
        run_at_start=True,
        description="claim the dataset sources that are due, fetch them and import what changed",
    )
]

__all__ = ["JOBS"]
