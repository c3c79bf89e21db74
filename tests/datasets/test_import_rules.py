"""What an import must never do: take a file of the wrong kind, lose rows silently, land half-way, or
delete a fact. Bad rows are reported by number and skipped (or, strict, refuse the file); a version that
lacks a row retires its fact; an empty version is refused."""

from __future__ import annotations

import csv
import io

import pytest
from sqlalchemy import select, text
from sqlalchemy.exc import DBAPIError

from chipwatch.db import get_engine, session_scope
from chipwatch.imports.models import Import
from tests.fixtures.corpus import corpus_dir, requires_corpus
from tests.fixtures.imports import (
    EPOCH_NEW,
    FUNDING,
    MLPERF_V51,
    count,
    fact,
    fact_events,
    facts_by_key,
    history,
    import_bytes,
    import_corpus,
)

pytestmark = requires_corpus


def _epoch_rows() -> tuple[list[str], list[list[str]]]:
    rows = list(csv.reader(io.StringIO((corpus_dir() / EPOCH_NEW).read_text(encoding="utf-8-sig"))))
    return rows[0], rows[1:]


def _csv(header: list[str], rows: list[list[str]]) -> bytes:
    out = io.StringIO()
    csv.writer(out).writerows([header, *rows])
    return out.getvalue().encode()


def _refuse_updates_of_imports() -> None:
    with get_engine().begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(
                text(
                    "CREATE FUNCTION refuse_import() RETURNS trigger AS $$ BEGIN "
                    "RAISE EXCEPTION 'refused by trigger'; END $$ LANGUAGE plpgsql"
                )
            )
            conn.execute(
                text(
                    "CREATE TRIGGER refuse_import BEFORE UPDATE ON imports FOR EACH ROW "
                    "EXECUTE FUNCTION refuse_import()"
                )
            )
        else:
            conn.execute(
                text(
                    "CREATE TRIGGER refuse_import BEFORE UPDATE ON imports "
                    "BEGIN SELECT RAISE(ABORT, 'refused by trigger'); END"
                )
            )


def _imports() -> list[Import]:
    with session_scope(write=False) as session:
        return list(session.scalars(select(Import).order_by(Import.id)))


def test_file_of_the_wrong_kind_is_refused_naming_what_it_lacks(db):
    data = (corpus_dir() / FUNDING).read_bytes()
    outcome = import_bytes("epoch-ml-hardware", data, file_name="funding.csv")
    assert outcome.report is None
    assert outcome.refusal.missing == ("Hardware name", "Manufacturer", "Release date", "TDP (W)")
    assert "missing 'Hardware name'" in outcome.refusal.reason
    (refused,) = _imports()
    assert (refused.status, refused.kind, refused.inserted) == ("refused", "epoch-ml-hardware", 0)
    assert refused.report["missing"] == ["Hardware name", "Manufacturer", "Release date", "TDP (W)"]
    json_outcome = import_bytes("mlperf-inference-summary", b'[{"model": "x"}]')
    assert "ID" in json_outcome.refusal.missing and "Performance_Result" in json_outcome.refusal.missing


def test_bad_rows_are_reported_by_number_and_skipped(db):
    header, rows = _epoch_rows()
    rows = rows[:5]
    rows[2] = rows[2][:-3]  # a row cut short: its cells cannot be trusted
    rows[3][header.index("Hardware name")] = ""  # a row without its key
    report = import_bytes("epoch-ml-hardware", _csv(header, rows)).report
    assert (report.rows_read, report.inserted, report.skipped) == (5, 3, 2)
    assert report.report["skipped"] == [
        {"row": 3, "reason": f"{len(header) - 3} cells under a header of {len(header)}"},
        {"row": 4, "reason": "no Hardware name"},
    ]


def test_strict_refuses_the_whole_file(db):
    header, rows = _epoch_rows()
    rows = rows[:5]
    rows[1][header.index("Hardware name")] = ""
    chips_before = count("chips")
    outcome = import_bytes("epoch-ml-hardware", _csv(header, rows), strict=True)
    assert outcome.report is None and outcome.refusal.skipped == [{"row": 2, "reason": "no Hardware name"}]
    assert count("chips") == chips_before


def test_a_failed_import_leaves_the_knowledge_base_as_it_was(db):
    import_corpus("epoch-ml-hardware", EPOCH_NEW)
    header, rows = _epoch_rows()
    tdp = header.index("TDP (W)")
    for row in rows:
        if row[0] == "NVIDIA B200":
            row[tdp] = "1200"
    before = (
        fact("chips", "nvidia-b200"),
        len(history("chips", "nvidia-b200")),
        fact_events(),
        len(_imports()),
    )
    # The database refuses the import's last write (a trigger on the imports table): everything the
    # import wrote before it (the new TDP, its history, its event) rolls back with it.
    _refuse_updates_of_imports()
    with pytest.raises(DBAPIError, match="refused by trigger"):
        import_bytes("epoch-ml-hardware", _csv(header, rows))
    after = (
        fact("chips", "nvidia-b200"),
        len(history("chips", "nvidia-b200")),
        fact_events(),
        len(_imports()),
    )
    assert after == before and after[0]["nominal_power_w"] == 1000.0


def test_missing_rows_are_retired_never_deleted_and_come_back(db):
    header, rows = _epoch_rows()
    import_bytes("epoch-ml-hardware", _csv(header, rows))
    without = [row for row in rows if row[0] != "NVIDIA B200"]
    second = import_bytes("epoch-ml-hardware", _csv(header, without)).report
    assert (second.retired, second.report["retired"]) == (1, ["nvidia-b200"])
    b200 = fact("chips", "nvidia-b200")
    assert b200 is not None and b200["retired_at"] is not None and b200["retired_in_import_id"] == second.id
    retired = [e for e in fact_events() if e["action"] == "retired"]
    assert [(e["fact_id"], e["cause_ref"]) for e in retired] == [("nvidia-b200", str(second.id))]
    third = import_bytes("epoch-ml-hardware", _csv(header, rows)).report
    assert (third.restored, third.report["restored"], third.updated) == (1, ["nvidia-b200"], 0)
    assert fact("chips", "nvidia-b200")["retired_at"] is None
    assert [h.action for h in history("chips", "nvidia-b200")] == ["created", "retired", "restored"]


def test_an_empty_version_is_refused_rather_than_retiring_everything(db):
    header, rows = _epoch_rows()
    import_bytes("epoch-ml-hardware", _csv(header, rows))
    outcome = import_bytes("epoch-ml-hardware", _csv(header, []))
    assert outcome.report is None and "holds no rows" in outcome.refusal.reason
    assert all(row["retired_at"] is None for row in facts_by_key("chips", "epoch-ml-hardware").values())


def test_duplicate_rows_in_one_file_are_one_fact_and_reported(db):
    header, rows = _epoch_rows()
    rows = [*rows[:3], rows[1]]
    report = import_bytes("epoch-ml-hardware", _csv(header, rows)).report
    assert (report.inserted, report.duplicates) == (3, 1)
    assert report.report["duplicates"] == [{"row": 4, "key": rows[1][0], "first_row": 2}]


def test_dry_run_reports_and_writes_nothing(db):
    chips_before, imports_before = count("chips"), len(_imports())
    outcome = import_corpus("epoch-ml-hardware", EPOCH_NEW, dry_run=True)
    assert outcome.report.dry_run is True and outcome.report.id is None and outcome.report.inserted == 167
    assert count("chips") == chips_before and len(_imports()) == imports_before


def test_a_new_fact_takes_the_next_free_id_when_its_own_are_taken(db):
    """Ids already used by facts of other origins are skipped: the row key's id, then its numbered
    successors, read from the table for the file's rows only."""
    import json

    from chipwatch.imports.build import Built
    from chipwatch.imports.plan import id_choices
    from chipwatch.knowledge.models import Result

    element = next(
        e
        for e in json.loads((corpus_dir() / MLPERF_V51).read_bytes())
        if (e["ID"], e["Model"], e["Scenario"]) == ("5.1-0061", "llama2-70b-99", "Offline")
    )
    key = "5.1-0061/llama2-70b-99/Offline"
    _hinted, base = id_choices(Built("results", row_key=key))
    assert base.startswith("5-1-0061-llama2-70b-99-offline-")
    import_corpus("epoch-ml-hardware", EPOCH_NEW)  # the chip the row names (NVIDIA B200)
    with session_scope() as session:
        for taken_id in (base, f"{base}2"):
            session.add(Result(id=taken_id, metric="tokens_per_s", value=1.0))
    data = json.dumps([element]).encode()
    report = import_bytes("mlperf-inference-summary", data, file_name="summary_results.json").report
    assert (report.status, report.inserted) == ("applied", 1)
    written = facts_by_key("results", "mlperf-inference-summary")[key]
    assert written["id"] == f"{base}3" and written["value"] == 102909.0
    assert fact("results", base)["value"] == 1.0


def test_an_update_that_changes_a_results_chip_moves_its_index_rows(db):
    """A re-imported result whose accelerator is now another chip: the fact, its history and its
    ``result_entities`` rows all name the new chip, none the old one."""
    import json

    from chipwatch.knowledge.models import Result, ResultEntity

    element = next(
        e
        for e in json.loads((corpus_dir() / MLPERF_V51).read_bytes())
        if (e["ID"], e["Model"], e["Scenario"]) == ("5.1-0061", "llama2-70b-99", "Offline")
    )
    key = "5.1-0061/llama2-70b-99/Offline"
    import_corpus("epoch-ml-hardware", EPOCH_NEW)
    first = import_bytes("mlperf-inference-summary", json.dumps([element]).encode()).report
    assert (first.status, first.inserted) == ("applied", 1)
    written = facts_by_key("results", "mlperf-inference-summary")[key]
    old_chips = written["chip_ids"]
    assert len(old_chips) == 1 and "b200" in old_chips[0]

    def index_chips(result_id: str) -> list[str]:
        with session_scope(write=False) as session:
            stmt = select(ResultEntity.entity_id).where(
                ResultEntity.result_id == result_id, ResultEntity.role == "chip"
            )
            return sorted(session.scalars(stmt))

    assert index_chips(written["id"]) == old_chips
    changed = {**element, "Accelerator": "AMD Instinct MI325X 256GB HBM3e"}
    second = import_bytes("mlperf-inference-summary", json.dumps([changed]).encode()).report
    assert (second.status, second.updated) == ("applied", 1)
    now = fact("results", written["id"])
    assert len(now["chip_ids"]) == 1 and "mi325x" in now["chip_ids"][0]
    assert now["chip_ids"] != old_chips
    assert index_chips(written["id"]) == now["chip_ids"]
    fields = {change.field: change.new_value for change in history("results", written["id"])}
    assert fields["chip_ids"] == now["chip_ids"]
    with session_scope(write=False) as session:  # read back through the ORM as well
        assert session.get(Result, written["id"]).chip_ids == now["chip_ids"]
