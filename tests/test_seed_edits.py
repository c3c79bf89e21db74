"""A seed load keeps edits: it applies a seeded row only where the seed entry changed since the last load,
and when the row was edited as well it keeps the edit and reports the conflict (load summary, history).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy import delete, select, text

from chipwatch.db import session_scope
from chipwatch.knowledge.models import FactChange, Result
from chipwatch.outbox.models import Event
from chipwatch.paths import PROJECT_ROOT, SEED_DIR
from chipwatch.seed_state import EDITED, SeedConflict, SeedDigest
from chipwatch.seeds import load_seeds
from chipwatch.signals.models import Signal
from tests.fixtures.cli import chipwatch, db_settings

R3 = "r03-jalapeno-gpt-oss-single-user"  # seeded: verification witnessed, reproduced_by null
SIGNAL = "jalapeno-104x-reproduced"
EDIT = {"verification": "independent", "reproduced_by": "semianalysis"}


@pytest.fixture
def seed_copy(tmp_path) -> Path:
    """A private copy of seed_data/ that a test edits."""
    return Path(shutil.copytree(SEED_DIR, tmp_path / "seed_data"))


def _edit_entry(seed_dir: Path, file: str, key: str, entry_id: str, **changes: Any) -> None:
    path = seed_dir / file
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    next(item for item in data[key] if item["id"] == entry_id).update(changes)
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")


def _load(seed_dir: Path = SEED_DIR):
    with session_scope() as session:
        return load_seeds(session=session, seed_dir=seed_dir)


def _result(result_id: str = R3) -> Result:
    with session_scope(write=False) as session:
        return session.get(Result, result_id)


def _history(result_id: str = R3) -> list[tuple[str, str, str | None, Any, Any]]:
    with session_scope(write=False) as session:
        rows = session.scalars(
            select(FactChange).where(FactChange.kind == "results", FactChange.fact_id == result_id)
            .order_by(FactChange.id)
        )
        return [(r.action, r.cause, r.field, r.old_value, r.new_value) for r in rows]


def _fact_events() -> int:
    with session_scope(write=False) as session:
        return len(session.scalars(select(Event.id).where(Event.type == "fact.changed")).all())


def test_an_api_edit_survives_init_run_again(db, client, admin_headers, tmp_path):
    patched = client.patch(f"/v1/results/{R3}", json=EDIT, headers=admin_headers)
    assert patched.status_code == 200, patched.text
    done = chipwatch("init", cwd=tmp_path, **db_settings(db))
    assert done.returncode == 0, done.stderr
    assert "1 edited since seeded (kept)" in done.stdout and "conflict" not in done.stdout
    result = _result()
    assert (result.verification, result.reproduced_by) == ("independent", "semianalysis")
    assert client.get(f"/v1/results/{R3}").json()["verification"] == "independent"


def test_a_changed_seed_entry_is_applied_to_a_row_nobody_edited(db, seed_copy):
    events_before = _fact_events()
    _edit_entry(seed_copy, "results.yaml", "results", R3, value=1500)
    report = _load(seed_copy)
    assert report.kinds["results"].updated == [R3] and report.conflicts == []
    assert _result().value == 1500
    assert _history() == [("updated", "seed", "value", 1459.0, 1500.0)]
    assert _fact_events() == events_before + 1
    again = _load(seed_copy)
    assert not again.changed and again.kinds["results"].kept == []


def test_when_both_changed_the_edit_is_kept_and_the_conflict_reported(db, client, admin_headers, seed_copy):
    assert client.patch(f"/v1/results/{R3}", json=EDIT, headers=admin_headers).status_code == 200
    events_before = _fact_events()
    _edit_entry(seed_copy, "results.yaml", "results", R3, verification="independent", reproduced_by="nvidia",
                value=1500)
    report = _load(seed_copy)

    # reproduced_by differs both ways; verification agrees already; value was not edited but the row
    # as a whole was, so the load leaves all of it to the analyst.
    fields = {"reproduced_by": ("semianalysis", "nvidia"), "value": (1459.0, 1500)}
    expected = SeedConflict("results", R3, fields)
    assert report.conflicts == [expected]
    assert report.kinds["results"].updated == [] and not report.changed
    assert "1 conflicting with an edit (edit kept)" in str(report)
    assert (
        'conflict: results r03-jalapeno-gpt-oss-single-user: reproduced_by kept "semianalysis" (seed says '
        '"nvidia"); value kept 1459.0 (seed says 1500)'
    ) in report.summary()
    result = _result()
    assert (result.verification, result.reproduced_by, result.value) == ("independent", "semianalysis", 1459)
    assert _history()[-2:] == [
        ("seed_conflict", "seed", "reproduced_by", "semianalysis", "nvidia"),
        ("seed_conflict", "seed", "value", 1459.0, 1500),
    ]
    assert _fact_events() == events_before  # nothing changed, nothing announced
    shown = client.get(f"/v1/results/{R3}/history").json()["items"]
    assert [h["action"] for h in shown][-2:] == ["seed_conflict", "seed_conflict"]

    # Reported once: the next load with the same seed keeps the edit quietly.
    again = _load(seed_copy)
    assert again.conflicts == [] and again.kinds["results"].kept == [R3]
    # A newer seed change is a conflict again; the edit still stands.
    _edit_entry(seed_copy, "results.yaml", "results", R3, value=1600)
    assert [c.row_id for c in _load(seed_copy).conflicts] == [R3]
    assert _result().reproduced_by == "semianalysis"


def test_setting_the_seed_value_through_the_api_hands_the_row_back_to_the_seed(db, client, admin_headers,
                                                                                 seed_copy):
    assert client.patch(f"/v1/results/{R3}", json={"value": 1400}, headers=admin_headers).status_code == 200
    _edit_entry(seed_copy, "results.yaml", "results", R3, value=1500)
    assert [c.row_id for c in _load(seed_copy).conflicts] == [R3]
    assert client.patch(f"/v1/results/{R3}", json={"value": 1500}, headers=admin_headers).status_code == 200
    assert _load(seed_copy).kinds["results"].unchanged > 0
    with session_scope(write=False) as session:
        assert session.get(SeedDigest, ("results", R3)).row_sha256 != EDITED
    _edit_entry(seed_copy, "results.yaml", "results", R3, value=1550)
    report = _load(seed_copy)
    assert report.kinds["results"].updated == [R3] and _result().value == 1550


def test_a_database_seeded_before_digests_keeps_api_edits_and_takes_seed_changes(db, client, admin_headers,
                                                                                  seed_copy):
    edited, untouched = R3, "r01-jalapeno-perf-per-watt"
    assert client.patch(f"/v1/results/{edited}", json=EDIT, headers=admin_headers).status_code == 200
    with session_scope() as session:
        session.execute(delete(SeedDigest))
    _edit_entry(seed_copy, "results.yaml", "results", edited, reproduced_by="nvidia")
    _edit_entry(seed_copy, "results.yaml", "results", untouched, notes="from the seed")
    report = _load(seed_copy)
    # An edit shows in the fact's history; a row without one takes the seed change as before.
    assert [c.row_id for c in report.conflicts] == [edited]
    assert report.kinds["results"].updated == [untouched]
    assert _result(edited).reproduced_by == "semianalysis"
    assert _result(untouched).notes == "from the seed"
    with session_scope(write=False) as session:
        assert session.scalar(select(SeedDigest).where(SeedDigest.row_id == "nvidia")) is not None


def test_a_signal_edited_through_the_api_keeps_its_definition(db, client, admin_headers, seed_copy):
    question = "Has anyone but the vendor reproduced Jalapeño's 104.3x figure? (edited)"
    r = client.patch(f"/v1/signals/{SIGNAL}", json={"question": question}, headers=admin_headers)
    assert r.status_code == 200, r.text
    assert _load(seed_copy).kinds["signals"].kept == [SIGNAL]
    _edit_entry(seed_copy, "signals.yaml", "signals", SIGNAL, question="A new seeded question?")
    report = _load(seed_copy)
    [conflict] = report.conflicts
    assert (conflict.kind, conflict.row_id) == ("signals", SIGNAL)
    assert conflict.fields["question"] == (question, "A new seeded question?")
    with session_scope(write=False) as session:
        assert session.get(Signal, SIGNAL).question == question


def test_the_seed_command_prints_each_conflict(db, client, admin_headers, tmp_path):
    # chipwatch reads seed_data/ from its project root: a copy with one entry edited.
    root = tmp_path / "project"
    for name in ("schema", "seed_data", "migrations"):
        shutil.copytree(PROJECT_ROOT / name, root / name)
    shutil.copy(PROJECT_ROOT / "alembic.ini", root / "alembic.ini")
    assert client.patch(f"/v1/results/{R3}", json=EDIT, headers=admin_headers).status_code == 200
    _edit_entry(root / "seed_data", "results.yaml", "results", R3, verification="witnessed", value=1460)
    done = chipwatch("seed", cwd=tmp_path, CHIPWATCH_PROJECT_ROOT=str(root), **db_settings(db))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[0].startswith("seed data loaded: 0 inserted, 0 updated, ")
    assert ", 1 conflicting with an edit (edit kept) from " in lines[0]
    assert lines[1] == (
        f'conflict, edit kept: results {R3}: reproduced_by kept "semianalysis" (seed says null); '
        'verification kept "independent" (seed says "witnessed"); value kept 1459.0 (seed says 1460)'
    )
    with session_scope(write=False) as session:
        assert session.execute(text("SELECT verification FROM results WHERE id = :id"), {"id": R3}).scalar() \
            == "independent"
