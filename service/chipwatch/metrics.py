"""Prometheus metrics: counters and histograms updated where the work happens, queue depth at scrape.

Each process (API replica, worker) exposes its own counters; the queue-depth gauges are read from the
database at scrape time, so every process reports the same shared backlog.
"""

from __future__ import annotations

import logging

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily

log = logging.getLogger("chipwatch.metrics")
REGISTRY = CollectorRegistry(auto_describe=True)

CHECKS = Counter("chipwatch_source_checks_total", "Source checks by outcome (ok, not_modified, error)",
                 ["outcome"], registry=REGISTRY)
FETCH_LATENCY = Histogram("chipwatch_fetch_latency_seconds", "Feed fetch latency in seconds",
                          buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 60), registry=REGISTRY)
ITEMS_STORED = Counter("chipwatch_items_stored_total", "Feed items stored (new or updated)", ["change"],
                       registry=REGISTRY)
TRANSITIONS = Counter("chipwatch_signal_transitions_total", "Signal transitions by cause kind and new status",
                      ["cause", "to_status"], registry=REGISTRY)
DELIVERIES = Counter("chipwatch_webhook_deliveries_total",
                     "Webhook delivery attempts by outcome (succeeded, failed, disabled)", ["outcome"],
                     registry=REGISTRY)
DELIVERY_LATENCY = Histogram("chipwatch_webhook_delivery_latency_seconds",
                             "Webhook delivery attempt latency in seconds",
                             buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15), registry=REGISTRY)


def _queue_depth_family() -> GaugeMetricFamily:
    return GaugeMetricFamily("chipwatch_queue_depth", "Work waiting, by queue", labels=["queue"])


class QueueDepthCollector:
    """Pending webhook deliveries, undispatched events and sources due now, read at scrape time."""

    def describe(self):
        """The metric this collector yields, without values: registering it runs no query."""
        yield _queue_depth_family()

    def collect(self):
        """The queue-depth gauge read from the database now (nothing when it cannot be read)."""
        # Imported here, not at the top: the domains import this module for their counters.
        from sqlalchemy import func, or_, select

        from chipwatch.db import session_scope
        from chipwatch.kit.time import utcnow
        from chipwatch.outbox.models import Event
        from chipwatch.sources.models import Source
        from chipwatch.webhooks.models import Delivery

        gauge = _queue_depth_family()
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
        gauge.add_metric(["webhook_deliveries"], deliveries or 0)
        gauge.add_metric(["events_undispatched"], events or 0)
        gauge.add_metric(["sources_due"], due or 0)
        yield gauge


REGISTRY.register(QueueDepthCollector())


def render() -> bytes:
    """The Prometheus text exposition of every chipwatch metric."""
    return generate_latest(REGISTRY)
