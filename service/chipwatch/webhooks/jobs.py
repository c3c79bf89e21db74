"""Scheduled entry points of the webhooks domain and the long-running dispatcher's start-up."""

from __future__ import annotations

import logging

from chipwatch.config import Settings
from chipwatch.kit.jobs import Job
from chipwatch.webhooks.dispatcher import Dispatcher, DispatchStats, run_once, running_dispatcher

log = logging.getLogger(__name__)


async def deliver_due(settings: Settings) -> DispatchStats | None:
    """Send every webhook delivery due now; wake the in-process dispatcher instead when one runs.

    The job is the safety net under the dispatcher (which commits wake at once): it covers events
    written by other processes and processes that run the scheduler without a dispatcher.  Returns the
    stats of the sends it made, or None when it only woke the dispatcher.
    """
    dispatcher = running_dispatcher()
    if dispatcher is not None:
        dispatcher.wake()
        return None
    stats = await run_once(settings)
    if stats.claimed:
        log.info("webhook deliveries sent: %s", stats)
    return stats


async def start_dispatcher(settings: Settings, **dispatcher_kwargs) -> Dispatcher:
    """Start a background :class:`Dispatcher` on the running loop; ``await d.stop()`` at shutdown.

    ``dispatcher_kwargs`` go to :class:`Dispatcher` (``lease_s``, ``poll_interval_s``, ``worker_id``).
    """
    dispatcher = Dispatcher(settings, **dispatcher_kwargs)
    await dispatcher.start()
    return dispatcher


JOBS = [
    Job(
        "webhooks.deliver",
        deliver_due,
        interval_s=5,
        run_at_start=True,
        description="fan out outbox events and send due webhook deliveries (wakes the dispatcher)",
    )
]
