"""The ``chipwatch_queue_depth`` gauge: work waiting, read from the database at scrape time.

Every process reports the same shared backlog: pending webhook deliveries, outbox events not yet fanned
out, and sources due for a check. Registered on :data:`chipwatch.metrics.REGISTRY` by
:func:`chipwatch.wiring.wire`; importing this module registers nothing and queries nothing.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily
from sqlalchemy import func, or_, select

from chipwatch.db import session_scope
from chipwatch.kit.time import utcnow
from chipwatch.metrics import REGISTRY
from chipwatch.outbox.models import Event
from chipwatch.sources.models import Source
from chipwatch.webhooks.models import Delivery

log = logging.getLogger("chipwatch.metrics")


def _family() -> GaugeMetricFamily:
    return GaugeMetricFamily("chipwatch_queue_depth", "Work waiting, by queue", labels=["queue"])


class QueueDepthCollector:
    """Pending webhook deliveries, undispatched events and sources due now, read at scrape time."""

    def describe(self) -> Iterator[GaugeMetricFamily]:
        """The metric this collector yields, without values: registering it runs no query."""
        yield _family()

    def collect(self) -> Iterator[GaugeMetricFamily]:
        """The gauge read from the database now; nothing (and a warning) when it cannot be read."""
        try:
            now = utcnow()
            with session_scope(write=False) as session:
                deliveries = session.scalar(select(func.count()).where(Delivery.status == "pending"))
                events = session.scalar(select(func.count()).where(Event.dispatched.is_(False)))
                due = session.scalar(
                    select(func.count())
                    .select_from(Source)
                    .where(Source.enabled.is_(True), Source.url.is_not(None))
                    .where(or_(Source.next_check_at.is_(None), Source.next_check_at <= now))
                )
        except Exception:  # a scrape must not fail because the database is briefly unreachable
            log.warning("queue depth unavailable", exc_info=True)
            return
        gauge = _family()
        gauge.add_metric(["webhook_deliveries"], deliveries or 0)
        gauge.add_metric(["events_undispatched"], events or 0)
        gauge.add_metric(["sources_due"], due or 0)
        yield gauge


_lock = threading.Lock()
_registered: list[QueueDepthCollector] = []


def register_queue_depth() -> None:
    """Add the gauge to the metrics registry; calling it again changes nothing."""
    with _lock:
        if not _registered:
            _registered.append(QueueDepthCollector())
            REGISTRY.register(_registered[0])
