"""Prometheus metrics: counters and histograms updated where the work happens.

Each process (API replica, worker) exposes its own counters. The queue-depth gauges, read from the
database at scrape time, are added by :mod:`chipwatch.queue_depth` when the process is wired; this
module imports no domain, so every domain may import it.
"""

from __future__ import annotations

import logging

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

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


def render() -> bytes:
    """The Prometheus text exposition of every chipwatch metric."""
    return generate_latest(REGISTRY)
