"""Scheduled signal work: deadlines (resolve the lapsed, warn of the near), hourly and at start-up."""

from __future__ import annotations

import asyncio
import logging
from datetime import date

from chipwatch.config import Settings
from chipwatch.db import session_scope
from chipwatch.kit.jobs import Job
from chipwatch.kit.time import utcnow
from chipwatch.signals.deadlines import evaluate_deadlines
from chipwatch.signals.record import EvaluationReport

__all__ = ["DEADLINES_INTERVAL_S", "JOBS", "check_deadlines", "run_deadlines"]

log = logging.getLogger("chipwatch.signals")

DEADLINES_INTERVAL_S = 3600
"""Deadlines are dates (UTC days): an hourly check resolves a lapsed signal within an hour of midnight."""


def run_deadlines(settings: Settings, *, today: date | None = None) -> EvaluationReport:
    """Evaluate every open signal's deadline in one write transaction (``today``: UTC date, default now).

    The code path of the ``signals.deadlines`` job, usable from a CLI or a test. Returns the report.
    """
    today = today or utcnow().date()
    with session_scope(settings) as session:
        report = evaluate_deadlines(session=session, today=today)
    if report.transitions or report.deadline_warnings:
        log.info(
            "deadlines evaluated",
            extra={"resolved": len(report.transitions), "warned": len(report.deadline_warnings)},
        )
    return report


async def check_deadlines(settings: Settings) -> EvaluationReport:
    """The ``signals.deadlines`` job: :func:`run_deadlines` in a worker thread (the loop never blocks)."""
    return await asyncio.to_thread(run_deadlines, settings)


JOBS = [
    Job(
        id="signals.deadlines",
        func=check_deadlines,
        interval_s=DEADLINES_INTERVAL_S,
        run_at_start=True,
        description="resolve open signals whose deadline passed; warn once when a deadline is near",
    )
]
