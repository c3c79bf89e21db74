"""The statements an import runs do not grow with its rows: a new version of a dataset whose rows are
already stored, and one whose changes touch many fields, run a bounded number of statements (history
rows and events of every change in one executemany each, no lookup per stored row)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import event

from chipwatch.db import get_engine
from tests.fixtures.corpus import requires_corpus
from tests.fixtures.imports import CLUSTERS, EPOCH_NEW, EPOCH_OLD, history, import_corpus

pytestmark = requires_corpus


@contextmanager
def counted() -> Iterator[list[str]]:
    """The SQL statements executed on the test database inside the block."""
    engine = get_engine()
    seen: list[str] = []

    def count(_conn, _cursor, statement, _params, _context, _many) -> None:
        seen.append(statement)

    event.listen(engine, "before_cursor_execute", count)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", count)


def test_the_same_version_again_runs_a_few_statements(db):
    import_corpus("epoch-ml-hardware", EPOCH_NEW)
    first = import_corpus("epoch-gpu-clusters", CLUSTERS).report
    assert first.inserted > 700
    with counted() as seen:
        again = import_corpus("epoch-gpu-clusters", CLUSTERS).report
    assert (again.inserted, again.updated, again.unchanged) == (0, 0, first.inserted)
    assert len(seen) <= 12, seen


def test_changed_fields_do_not_cost_a_statement_each(db):
    import_corpus("epoch-ml-hardware", EPOCH_OLD)
    with counted() as seen:
        report = import_corpus("epoch-ml-hardware", EPOCH_NEW).report
    changed_fields = sum(len(change["fields"]) for change in report.report["changed"])
    assert report.updated >= 10 and changed_fields > report.updated
    # One UPDATE per changed fact (its own columns), the rest a fixed number however many fields changed.
    assert len(seen) <= report.updated + report.inserted // 500 + 25, len(seen)
    tdp = [row for row in history("chips", "google-tpu-v7-ironwood") if row.field == "nominal_power_w"]
    assert [(row.old_value, row.new_value) for row in tdp] == [(980.0, 960.0)]
