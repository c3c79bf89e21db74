"""``chipwatch signals`` (the real command) never cuts a value short: on a narrow terminal it leaves whole
columns out, last first, and says so; ``--columns`` picks them."""

from __future__ import annotations

from sqlalchemy import select

from chipwatch.db import session_scope
from chipwatch.signals.models import Signal
from tests.fixtures.cli import chipwatch, db_settings

ALL_COLUMNS = ["id", "status", "outcome", "deadline", "watch health", "known_at"]


def _ids(db) -> list[str]:
    with session_scope(db, write=False) as session:
        return list(session.scalars(select(Signal.id).order_by(Signal.id)))


def _header(output: str) -> list[str]:
    [line] = [line for line in output.splitlines() if line.lstrip("┃│ ").startswith("id ")]
    return [cell.strip() for cell in line.strip("┃│ ").replace("┃", "│").split("│")]


def test_at_80_columns_every_value_is_whole_and_the_left_out_columns_are_named(db, tmp_path):
    done = chipwatch("signals", cwd=tmp_path, COLUMNS="80", **db_settings(db))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "…" not in done.stdout
    assert _header(done.stdout) == ["id", "status", "outcome", "deadline"]
    rows = [line for line in lines if line.startswith("│")]
    assert [row.split("│")[1].strip() for row in rows] == _ids(db)
    bottom = lines.index(next(line for line in lines if line.startswith("└")))
    note = " ".join(" ".join(lines[bottom + 1:]).split())
    assert note == (
        "watch health, known_at left out to fit 80 columns; widen the terminal or pick with --columns"
    )


def test_a_wide_terminal_shows_every_column(db, tmp_path):
    done = chipwatch("signals", cwd=tmp_path, COLUMNS="200", **db_settings(db))
    assert done.returncode == 0, done.stderr
    assert _header(done.stdout) == ALL_COLUMNS
    assert "left out" not in done.stdout and "…" not in done.stdout


def test_columns_are_picked_by_name(db, tmp_path):
    picked = ("--columns", "id,known_at,status")
    done = chipwatch("signals", *picked, cwd=tmp_path, COLUMNS="80", **db_settings(db))
    assert done.returncode == 0, done.stderr
    assert _header(done.stdout) == ["id", "known_at", "status"]
    refused = chipwatch("signals", "-c", "id,health", cwd=tmp_path, **db_settings(db))
    assert refused.returncode == 2
    assert refused.stderr.strip() == (
        "chipwatch: unknown column health; choose from id, status, outcome, deadline, watch health, known_at"
    )


def test_a_column_is_picked_by_its_field_name_too(db, tmp_path):
    # The API calls it watch_health and the table spells known_at so: either spelling picks a column.
    picked = ("--columns", "id,watch_health,known at")
    done = chipwatch("signals", *picked, cwd=tmp_path, COLUMNS="120", **db_settings(db))
    assert done.returncode == 0, done.stderr
    assert _header(done.stdout) == ["id", "watch health", "known_at"]
