"""Seed loading: validation before any write, idempotent upserts, updates on edit, precise refusals."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy import select

from chipwatch.config import Settings
from chipwatch.db import get_engine, session_scope
from chipwatch.knowledge.models import Result, Vendor
from chipwatch.migrate import upgrade_to_head
from chipwatch.paths import SCHEMA_DIR, SEED_DIR
from chipwatch.seeds import KINDS, SIGNAL_DEFINITION_COLUMNS, SeedError, SeedReport, load_seeds
from chipwatch.signals.models import Signal
from chipwatch.sources.models import SourceBase
from tests.fixtures.seed_facts import EXPECTED_COUNTS

R3 = "r03-jalapeno-gpt-oss-single-user"
R4 = "r04-jalapeno-deepseek-r1-single-user"
R5 = "r05-jalapeno-kimi-k2-5-single-user"

TEST_SIGNALS = """\
$schema: ../schema/signals-file.schema.json
signals:
  - id: test-104x-reproduced
    question: Has an independent party reproduced the 104.3x per-kW figure?
    opened_on: 2026-08-25
    review: manual
    subjects: [jalapeno, gb200]
    yes_when:
      - result: {chip: jalapeno, baseline: gb200, verification: independent}
  - id: test-100mw-by-end-2026
    question: Does Jalapeño reach 100 MW by the end of 2026?
    opened_on: 2026-08-25
    deadline: 2026-12-31
    on_deadline: "no"
    review: auto
    subjects: [jalapeno, openai]
    yes_when:
      - deployment: {chip: jalapeno, capacity_mw_gte: 100, by: 2026-12-31}
      - item: {mentions_all: [jalapeno], number: {unit: MW, gte: 100}, published_after: 2026-08-25}
"""


# ---------------------------------------------------------------- fixtures and helpers
def _settings(data_dir: Path) -> Settings:
    return Settings(data_dir=data_dir, database_url=f"sqlite:///{(data_dir / 'chipwatch.db').as_posix()}")


def _copy_db(template: Settings, data_dir: Path) -> Settings:
    data_dir.mkdir(parents=True)
    shutil.copyfile(template.data_dir / "chipwatch.db", data_dir / "chipwatch.db")
    return _settings(data_dir)


@pytest.fixture(scope="module")
def templates(tmp_path_factory) -> dict[str, Settings]:
    """Two database files built once per module: migrated and empty, and migrated and seeded."""
    empty = _settings(tmp_path_factory.mktemp("empty"))
    upgrade_to_head(empty)
    get_engine(empty).dispose()  # closes the connections, so the WAL is folded into the file copied
    seeded = _copy_db(empty, tmp_path_factory.mktemp("seeded") / "data")
    load(seeded)
    get_engine(seeded).dispose()
    return {"empty": empty, "seeded": seeded}


@pytest.fixture
def settings(templates, tmp_path) -> Settings:
    """This test's own copy of a freshly migrated, empty SQLite file."""
    settings = _copy_db(templates["empty"], tmp_path / "data")
    yield settings
    get_engine(settings).dispose()


@pytest.fixture
def seeded(templates, tmp_path) -> Settings:
    """This test's own copy of the migrated database after one load of the real seed_data."""
    settings = _copy_db(templates["seeded"], tmp_path / "data")
    yield settings
    get_engine(settings).dispose()


@pytest.fixture
def seed_copy(tmp_path) -> Path:
    """A private copy of seed_data/ that a test may edit."""
    return Path(shutil.copytree(SEED_DIR, tmp_path / "seed_data"))


def load(settings: Settings, seed_dir: Path = SEED_DIR, schema_dir: Path = SCHEMA_DIR) -> SeedReport:
    with session_scope(settings) as session:
        return load_seeds(session=session, seed_dir=seed_dir, schema_dir=schema_dir)


def snapshot(settings: Settings) -> dict[str, list[dict[str, Any]]]:
    """Every seeded table's full contents, state and timestamp columns included."""
    with session_scope(settings, write=False) as session:
        return {
            kind.name: sorted(
                (row.model_dump() for row in session.scalars(select(kind.model))), key=lambda r: r["id"]
            )
            for kind in KINDS
        }


def edit_yaml(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")


def entry(data: dict[str, Any], key: str, entry_id: str) -> dict[str, Any]:
    return next(item for item in data[key] if item["id"] == entry_id)


def real_signal_count() -> int:
    path = SEED_DIR / "signals.yaml"
    return len(yaml.safe_load(path.read_text(encoding="utf-8"))["signals"]) if path.exists() else 0


# ---------------------------------------------------------------- loading
def expected_counts() -> dict[str, int]:
    """Rows per kind after a load: the fact tables from the facts table, feeds and signals from their
    files."""
    import yaml

    from chipwatch.paths import SEED_DIR

    feeds = yaml.safe_load((SEED_DIR / "sources.yaml").read_text())["sources"]
    counts = {**EXPECTED_COUNTS, "sources": len(feeds), "signals": real_signal_count()}
    # Seed files beside the founding facts: dataset sources, the vendors and benchmark they name, aliases.
    for path in [*sorted(SEED_DIR.glob("dataset_*.yaml")), SEED_DIR / "aliases.yaml"]:
        doc = yaml.safe_load(path.read_text())
        key = next(k for k in doc if k != "$schema")
        counts[key] = counts.get(key, 0) + len(doc[key])
    return counts


def test_first_load_inserts_every_seed_row(settings):
    report = load(settings)
    expected = expected_counts()
    assert report.counts() == {k: {"inserted": n, "updated": 0, "unchanged": 0} for k, n in expected.items()}
    assert {kind: len(rows) for kind, rows in snapshot(settings).items()} == expected
    assert report.changed


def test_reseed_changes_nothing(seeded):
    before = snapshot(seeded)
    report = load(seeded)
    assert not report.changed
    expected = expected_counts()
    assert report.counts() == {k: {"inserted": 0, "updated": 0, "unchanged": n} for k, n in expected.items()}
    assert snapshot(seeded) == before


def test_edited_value_is_updated_on_next_load(seeded, seed_copy):
    edit_yaml(seed_copy / "results.yaml", lambda d: entry(d, "results", R3).update(value=1500))
    report = load(seeded, seed_copy)
    assert report.kinds["results"].updated == [R3]
    assert report.touched("results") == [R3]
    assert sum(c["updated"] for c in report.counts().values()) == 1
    with session_scope(seeded, write=False) as session:
        assert session.get(Result, R3).value == 1500
    assert not load(seeded, seed_copy).changed


def test_removed_optional_field_returns_to_its_default(seeded, seed_copy):
    edit_yaml(seed_copy / "results.yaml", lambda d: entry(d, "results", R3).pop("baseline_value"))
    assert load(seeded, seed_copy).kinds["results"].updated == [R3]
    with session_scope(seeded, write=False) as session:
        assert session.get(Result, R3).baseline_value is None


def test_rows_not_in_seed_data_are_left_alone(seeded):
    with session_scope(seeded) as session:
        session.add(Vendor(id="analyst-added", name="Added by an analyst", source_id="36kr"))
    load(seeded)
    with session_scope(seeded, write=False) as session:
        assert session.get(Vendor, "analyst-added").name == "Added by an analyst"


def test_iso_string_dates_load_like_yaml_dates(seeded, seed_copy):
    edit_yaml(seed_copy / "results.yaml", lambda d: entry(d, "results", R3).update(as_of="2026-08-25"))
    assert not load(seeded, seed_copy).changed


def test_json_seed_files_are_accepted(seeded, seed_copy):
    data = yaml.safe_load((seed_copy / "benchmarks.yaml").read_text(encoding="utf-8"))
    (seed_copy / "benchmarks.yaml").unlink()
    (seed_copy / "benchmarks.json").write_text(json.dumps(data, default=str), encoding="utf-8")
    assert not load(seeded, seed_copy).changed


def test_schemas_match_the_tables():
    """Seed field names are the table columns, and every schema refuses unknown fields."""
    for kind in KINDS:
        if kind.name == "signals":
            continue
        schema = json.loads((SCHEMA_DIR / kind.schema).read_text(encoding="utf-8"))
        item = schema["$defs"]["entry"]
        assert schema["$id"] == f"https://chipwatch.dev/schema/{kind.schema}"
        assert schema["additionalProperties"] is False and item["additionalProperties"] is False
        assert set(item["properties"]) == set(kind.columns), kind.name
    sources = next(k for k in KINDS if k.name == "sources")
    assert set(sources.columns) == {"id", *SourceBase.model_fields}


def test_every_seed_file_names_its_schema():
    for path in sorted(SEED_DIR.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert data["$schema"].startswith("../schema/") and data["$schema"].endswith(".schema.json"), (
            path.name
        )


# ---------------------------------------------------------------- refusals
def _bad_enum(d: Path) -> None:
    edit_yaml(d / "results.yaml", lambda x: entry(x, "results", R4).update(verification="witnesed"))


def _missing_required(d: Path) -> None:
    edit_yaml(d / "results.yaml", lambda x: entry(x, "results", R3).pop("metric"))


def _missing_id(d: Path) -> None:
    edit_yaml(d / "chips.yaml", lambda x: x["chips"][2].pop("id"))


def _wrong_type(d: Path) -> None:
    edit_yaml(d / "chips.yaml", lambda x: entry(x, "chips", "jalapeno").update(nominal_power_w="700 W"))


def _unknown_field(d: Path) -> None:
    edit_yaml(d / "vendors.yaml", lambda x: entry(x, "vendors", "nvidia").update(colour="green"))


def _unknown_nested_field(d: Path) -> None:
    edit_yaml(
        d / "vendors.yaml", lambda x: entry(x, "vendors", "xiaomi")["people"][0].update(title="president")
    )


def _bad_date(d: Path) -> None:
    edit_yaml(
        d / "funding_rounds.yaml",
        lambda x: entry(x, "funding_rounds", "xiwang-2026-08-round").update(announced_on="2026-02-30"),
    )


def _impossible_unquoted_date(d: Path) -> None:
    path = d / "funding_rounds.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("as_of: 2025-01-01", "as_of: 2025-13-01"))


def _range_not_midpoint(d: Path) -> None:
    edit_yaml(
        d / "results.yaml", lambda x: entry(x, "results", "r01-jalapeno-perf-per-watt").update(value=1.8)
    )


def _dangling_chip(d: Path) -> None:
    edit_yaml(d / "results.yaml", lambda x: entry(x, "results", R5).update(chip_ids=["jalapeno", "tpu-v9"]))


def _dangling_source(d: Path) -> None:
    edit_yaml(
        d / "claims.yaml",
        lambda x: entry(x, "claims", "inference-cost-1000x-forecast").update(source_id="nowhere"),
    )


def _duplicate_id(d: Path) -> None:
    edit_yaml(d / "vendors.yaml", lambda x: x["vendors"].append(dict(entry(x, "vendors", "nvidia"))))


def _no_schema(d: Path) -> None:
    edit_yaml(d / "models.yaml", lambda x: x.pop("$schema"))


def _unknown_schema(d: Path) -> None:
    edit_yaml(d / "benchmarks.yaml", lambda x: x.update({"$schema": "../schema/benchmark.schema.json"}))


def _yaml_syntax_error(d: Path) -> None:
    path = d / "deployments.yaml"
    path.write_text(
        path.read_text(encoding="utf-8") + "  - id: [unclosed\n    status: planned\n", encoding="utf-8"
    )


REFUSALS = [
    pytest.param(
        _bad_enum,
        [f"results.yaml: entry '{R4}' field 'verification': 'witnesed' is not one of", "'witnessed'"],
        id="bad-enum",
    ),
    pytest.param(
        _missing_required, [f"results.yaml: entry '{R3}' field 'metric': required"], id="missing-required"
    ),
    pytest.param(_missing_id, ["chips.yaml: entry [2] field 'id': required"], id="missing-id"),
    pytest.param(
        _wrong_type,
        ["chips.yaml: entry 'jalapeno' field 'nominal_power_w': '700 W' is not of type"],
        id="wrong-type",
    ),
    pytest.param(
        _unknown_field, ["vendors.yaml: entry 'nvidia' field 'colour': unknown field"], id="unknown-field"
    ),
    pytest.param(
        _unknown_nested_field,
        ["vendors.yaml: entry 'xiaomi' field 'people.0.title': unknown field"],
        id="unknown-nested-field",
    ),
    pytest.param(
        _bad_date,
        [
            "funding_rounds.yaml: entry 'xiwang-2026-08-round' field 'announced_on': "
            "'2026-02-30' is not a 'date'"
        ],
        id="bad-date",
    ),
    pytest.param(
        _impossible_unquoted_date,
        ["funding_rounds.yaml: entry 'groq-acquisition-nvidia' field 'as_of': '2025-13-01' is not a 'date'"],
        id="impossible-date",
    ),
    pytest.param(
        _range_not_midpoint,
        ["results.yaml: entry 'r01-jalapeno-perf-per-watt' field 'value': 1.8 is not the midpoint"],
        id="range-midpoint",
    ),
    pytest.param(
        _dangling_chip,
        [f"results.yaml: entry '{R5}' field 'chip_ids': unknown chip id 'tpu-v9'"],
        id="dangling-chip",
    ),
    pytest.param(
        _dangling_source,
        ["claims.yaml: entry 'inference-cost-1000x-forecast' field 'source_id': unknown source id 'nowhere'"],
        id="dangling-source",
    ),
    pytest.param(
        _duplicate_id, ["vendors.yaml: entry 'nvidia' [25] field 'id': duplicate id"], id="duplicate-id"
    ),
    pytest.param(_no_schema, ["models.yaml: field '$schema': names no schema"], id="no-schema"),
    pytest.param(
        _unknown_schema,
        ["benchmarks.yaml: field '$schema': unknown schema '../schema/benchmark.schema.json'"],
        id="unknown-schema",
    ),
    pytest.param(_yaml_syntax_error, ["deployments.yaml: YAML syntax error at line"], id="yaml-syntax"),
]


@pytest.mark.parametrize(("break_seeds", "expected"), REFUSALS)
def test_refusal_names_file_entry_and_field_and_writes_nothing(seeded, seed_copy, break_seeds, expected):
    # A valid edit rides along with the broken one: a partial write would show up as R3 changing.
    edit_yaml(seed_copy / "results.yaml", lambda d: entry(d, "results", R3).update(value=1500))
    break_seeds(seed_copy)
    before = snapshot(seeded)
    with session_scope(seeded) as session:
        with pytest.raises(SeedError) as caught:
            load_seeds(session=session, seed_dir=seed_copy)
        # The scope commits whatever the session holds: nothing may have been added or flushed.
        assert not session.new and not session.dirty
    message = str(caught.value)
    for part in expected:
        assert part in message, message
    assert caught.value.issues and isinstance(caught.value, ValueError)
    assert snapshot(seeded) == before


def test_every_issue_is_reported_at_once(seeded, seed_copy):
    _bad_enum(seed_copy)
    _unknown_field(seed_copy)
    with pytest.raises(SeedError) as caught:
        load(seeded, seed_copy)
    assert {issue.file for issue in caught.value.issues} == {"results.yaml", "vendors.yaml"}


def test_missing_seed_directory_is_refused(settings, tmp_path):
    with pytest.raises(SeedError, match="seed directory not found"):
        load(settings, tmp_path / "nowhere")


# ---------------------------------------------------------------- signals
@pytest.fixture
def signal_seeds(seed_copy) -> Path:
    """seed_data with a two-signal signals.yaml of the test's own, so assertions do not hang on the
    wording of the real watch signals."""
    (seed_copy / "signals.yaml").write_text(TEST_SIGNALS, encoding="utf-8")
    return seed_copy


@pytest.fixture
def schema_dir(tmp_path) -> Path:
    """The real schemas, plus a permissive signals-file schema if the real one is not there yet."""
    target = Path(shutil.copytree(SCHEMA_DIR, tmp_path / "schema"))
    if not (target / "signals-file.schema.json").exists():
        (target / "signals-file.schema.json").write_text(
            json.dumps({"$id": "https://chipwatch.dev/schema/signals-file.schema.json", "type": "object"})
        )
    return target


def test_signal_definitions_are_upserted_and_state_is_kept(settings, signal_seeds, schema_dir):
    report = load(settings, signal_seeds, schema_dir)
    assert sorted(report.kinds["signals"].inserted) == ["test-100mw-by-end-2026", "test-104x-reproduced"]
    resolved_at = datetime(2026, 9, 1, 12, 0, tzinfo=UTC)
    with session_scope(settings) as session:
        signal = session.get(Signal, "test-104x-reproduced")
        assert signal.status == "open" and signal.version == 0
        assert signal.yes_when[0]["result"]["chip"] == "jalapeno"
        signal.status, signal.outcome, signal.version = "resolved", "yes", 3
        signal.resolved_at = signal.known_at = resolved_at

    text = (signal_seeds / "signals.yaml").read_text(encoding="utf-8")
    text = text.replace("the 104.3x per-kW figure?", "the 104.3x figure?").replace(
        "review: manual", "review: auto"
    )
    (signal_seeds / "signals.yaml").write_text(text, encoding="utf-8")
    report = load(settings, signal_seeds, schema_dir)
    assert report.kinds["signals"].updated == ["test-104x-reproduced"]
    assert report.kinds["signals"].unchanged == 1
    with session_scope(settings, write=False) as session:
        signal = session.get(Signal, "test-104x-reproduced")
        assert signal.question.endswith("the 104.3x figure?") and signal.review == "auto"
        assert (signal.status, signal.outcome, signal.version) == ("resolved", "yes", 3)
        assert signal.resolved_at.replace(tzinfo=UTC) == resolved_at
        other = session.get(Signal, "test-100mw-by-end-2026")
        assert other.deadline.isoformat() == "2026-12-31"
        assert other.yes_when[1]["item"]["published_after"] == "2026-08-25"
    assert not load(settings, signal_seeds, schema_dir).changed


def test_signal_definition_columns_are_the_only_ones_seeded():
    assert set(SIGNAL_DEFINITION_COLUMNS) == {
        "id",
        "question",
        "description",
        "opened_on",
        "deadline",
        "on_deadline",
        "review",
        "require_fact",
        "subjects",
        "tags",
        "yes_when",
        "no_when",
    }


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "result: {chip: jalapeno,",
            "result: {chip: jalapeno-2,",
            "signals.yaml: entry 'test-104x-reproduced' field 'yes_when.0.result.chip': "
            "unknown chip id 'jalapeno-2'",
        ),
        (
            "deadline: 2026-12-31",
            "deadline: 2026-08-01",
            "signals.yaml: entry 'test-100mw-by-end-2026' field 'deadline': must not be before opened_on",
        ),
        (
            "subjects: [jalapeno, openai]",
            "subjects: [jalapeno, open-ai]",
            "signals.yaml: entry 'test-100mw-by-end-2026' field 'subjects': unknown vendor, chip, model or "
            "benchmark id 'open-ai'",
        ),
    ],
)
def test_bad_signal_definition_is_refused(seeded, signal_seeds, schema_dir, old, new, expected):
    path = signal_seeds / "signals.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    before = snapshot(seeded)
    with pytest.raises(SeedError) as caught:
        load(seeded, signal_seeds, schema_dir)
    assert expected in str(caught.value)
    assert snapshot(seeded) == before
