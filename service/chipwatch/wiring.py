"""Cross-domain wiring, done once at start-up by ``create_app`` and the CLI, never by importing a module.

Producers know nothing of their consumers: the knowledge base and the sources call whatever listeners
were registered here, so neither imports the signals domain.

* a fact written to the knowledge base (API or seed) -> signal evaluation of that fact;
* a fact retracted -> signals it decided are evaluated again; an entity a signal names is not retracted;
* items stored by a feed check -> signal evaluation of those items, and the candidate facts read from
  them (chipwatch.candidates); before its write, the check builds the signal rules in a read
  transaction, so they are not compiled under the write lock;
* the changed file of a dataset source, fetched by the same check -> an import (chipwatch.imports);
* the metrics registry -> the queue-depth gauge, read from the domains' tables at scrape time.

Scheduled jobs are declared by each domain (``JOBS`` in its ``jobs.py``) and collected by
:func:`chipwatch.scheduler.collect_jobs`.
"""

from __future__ import annotations

from chipwatch.candidates.service import propose_from_items
from chipwatch.imports.runner import import_from_source
from chipwatch.queue_depth import register_queue_depth
from chipwatch.signals.evaluation import evaluate_items, register_fact_listener
from chipwatch.signals.retraction import register_retraction_listener
from chipwatch.signals.rules_cache import compiled_rules
from chipwatch.sources.hooks import on_dataset_fetched, on_items_stored, on_prepare_store


def wire() -> None:
    """Register every cross-domain listener; calling it again registers nothing twice."""
    register_fact_listener()
    register_retraction_listener()
    on_items_stored(evaluate_items)
    on_items_stored(propose_from_items)
    on_prepare_store(compiled_rules)
    on_dataset_fetched(import_from_source)
    register_queue_depth()
