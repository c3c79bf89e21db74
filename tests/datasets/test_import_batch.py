"""A directory (or several files) of a one-row kind is one import: one transaction, one version (the
SHA-256 over the files' sorted digests), each row keyed as its file alone would be, errors reported by
file name, and the same directory again changes nothing."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from chipwatch.cli import app
from chipwatch.db import session_scope
from chipwatch.imports.models import Import
from chipwatch.imports.runner import batch_files, execute_import, read_batch
from chipwatch.imports.service import ImportFile, ImportRequest
from chipwatch.knowledge.models import FactChange
from tests.fixtures.corpus import corpus_dir, requires_corpus
from tests.fixtures.imports import EPOCH_NEW, SERVING_DIR, facts_by_key, import_corpus

pytestmark = requires_corpus

SYSTEMS_DIR = "mlperf-inference/v5.1_systems"
LOGS_DIR = "mlperf-inference/v5.1_log_summaries"


@pytest.fixture
def chips(db):
    """The Epoch hardware export imported: the chips MLPerf and InferenceX names resolve to."""
    import_corpus("epoch-ml-hardware", EPOCH_NEW)
    return db


def _batch(kind: str, directory: Path, *, strict: bool = False, **options) -> ImportRequest:
    files = read_batch(batch_files(kind, [directory]))
    return ImportRequest(
        kind, b"", file_name=directory.name, files=files, options=options, strict=strict, actor="test"
    )


def _history_rows() -> int:
    with session_scope(write=False) as session:
        return session.scalar(select(func.count()).select_from(FactChange))


def test_a_serving_directory_is_one_import_with_the_files_values(chips):
    directory = corpus_dir() / SERVING_DIR
    paths = sorted(directory.glob("*.json"))
    report = execute_import(_batch("benchmark-serving", directory, hardware="B200")).report
    assert report is not None and report.status == "applied"
    counts = (report.rows_read, report.inserted, report.skipped, report.waiting)
    assert counts == (len(paths), len(paths), 0, 0)
    digests = sorted(hashlib.sha256(path.read_bytes()).hexdigest() for path in paths)
    assert report.sha256 == hashlib.sha256("\n".join(digests).encode()).hexdigest()
    assert report.report["files"] == len(paths)
    results = facts_by_key("results", "benchmark-serving")
    assert len(results) == len(paths)
    for path in paths:
        document = json.loads(path.read_bytes())
        run = results[f"B200/MiniMaxAI/MiniMax-M2.5/{path.name}"]
        assert run["value"] == pytest.approx(document["output_throughput"])
        assert run["attributes"]["ttft_ms"]["p50_ms"] == pytest.approx(document["median_ttft_ms"])
        assert run["operating_point"] == f"concurrency_{document['max_concurrency']}"
        assert run["dataset_version"] == report.sha256 and run["import_id"] == report.id
    with session_scope(write=False) as session:
        assert session.scalar(select(func.count()).select_from(Import)) == 2  # the hardware, then this


def test_the_same_directory_again_changes_nothing(chips):
    directory = corpus_dir() / SYSTEMS_DIR
    first = execute_import(_batch("mlperf-system", directory)).report
    assert first.rows_read == 12 and first.inserted + first.waiting == 12 and first.inserted > 0
    before, systems = _history_rows(), facts_by_key("chips", "mlperf-system")
    again = execute_import(_batch("mlperf-system", directory)).report
    counts = (again.inserted, again.updated, again.unchanged, again.waiting)
    assert counts == (0, 0, first.inserted, first.waiting)
    assert again.sha256 == first.sha256
    assert _history_rows() == before and facts_by_key("chips", "mlperf-system") == systems
    # A file imported on its own is the fact its batch wrote: the same key, unchanged.
    one = "closed__AMD__8xMI325X_2xEPYC_9575F_1.json"
    alone = import_corpus("mlperf-system", f"{SYSTEMS_DIR}/{one}").report
    assert (alone.inserted, alone.unchanged) == (0, 1)
    document = json.loads((directory / one).read_bytes())
    system = systems["closed/AMD/8xMI325X_2xEPYC_9575F_1"]
    assert system["name"] == document["system_name"].strip()
    accelerators = int(document["accelerators_per_node"]) * int(document["number_of_nodes"])
    assert system["attributes"]["accelerator_count"] == accelerators


def test_log_summaries_by_directory_read_their_context_from_the_file_names(chips):
    directory = corpus_dir() / LOGS_DIR
    execute_import(_batch("mlperf-system", corpus_dir() / SYSTEMS_DIR))
    report = execute_import(_batch("mlperf-log-summary", directory)).report
    assert report.rows_read == 4 and report.inserted + report.waiting == 4
    results = facts_by_key("results", "mlperf-log-summary")
    for path in sorted(directory.glob("*.txt")):
        division, submitter, system, model, rest = path.name.split("__", 4)
        scenario = rest.split("__")[0]
        key = f"{division}/{submitter}/{system}/{model}/{scenario}"
        lines = dict(
            (name.strip(), value.strip())
            for name, value in (line.split(":", 1) for line in path.read_text().splitlines() if ":" in line)
        )
        if key in results and "Tokens per second" in lines:
            assert results[key]["value"] == pytest.approx(float(lines["Tokens per second"]))
            assert results[key]["attributes"]["valid"] is (lines["Result is"] == "VALID")
    assert "closed/AMD/8xMI325X_2xEPYC_9575F_1/llama2-70b-99/Offline" in results


def test_errors_are_reported_by_file_name_and_strict_refuses_the_batch(chips, tmp_path):
    directory = tmp_path / "systems"
    directory.mkdir()
    good = "closed__AMD__8xMI325X_2xEPYC_9575F_1.json"
    shutil.copy(corpus_dir() / SYSTEMS_DIR / good, directory / good)
    (directory / "closed__X__not-a-system.json").write_text('{"results": []}')
    blank = json.loads((corpus_dir() / SYSTEMS_DIR / good).read_bytes())
    blank["system_name"] = ""
    (directory / "closed__AMD__blank.json").write_text(json.dumps(blank))

    report = execute_import(_batch("mlperf-system", directory)).report
    assert (report.rows_read, report.inserted, report.skipped) == (2, 1, 2)
    by_file = {Path(issue["file"]).name: issue for issue in report.report["skipped"]}
    assert set(by_file) == {"closed__X__not-a-system.json", "closed__AMD__blank.json"}
    assert "system_name" in by_file["closed__X__not-a-system.json"]["missing"]
    assert by_file["closed__AMD__blank.json"]["row"] == 1

    refused = execute_import(_batch("mlperf-system", directory, strict=True))
    assert refused.report is None and refused.refusal is not None
    assert {Path(issue["file"]).name for issue in refused.refusal.skipped} == set(by_file)


def test_two_files_with_one_row_key_are_one_fact(chips, tmp_path):
    name = "concurrency_4_req_rate_inf_gpus_16_ctx_8_gen_8.json"
    data = (corpus_dir() / SERVING_DIR / name).read_bytes()
    changed = json.loads(data)
    changed["output_throughput"] += 1.0
    files = (
        ImportFile(f"a/{name}", data),
        ImportFile(f"b/{name}", data),
        ImportFile(f"c/{name}", json.dumps(changed).encode()),
    )
    request = ImportRequest("benchmark-serving", b"", files=files, options={"hardware": "B200"})
    report = execute_import(request).report
    assert (report.inserted, report.duplicates, report.skipped) == (1, 1, 1)
    assert report.report["duplicates"][0]["first_file"] == f"a/{name}"
    assert report.report["skipped"][0]["file"] == f"c/{name}"


def test_the_cli_imports_a_directory(chips):
    runner = CliRunner()
    directory = str(corpus_dir() / SERVING_DIR)
    result = runner.invoke(
        app, ["import", "benchmark-serving", directory, "--hardware", "B200"], terminal_width=200
    )
    assert result.exit_code == 0, result.output
    assert "8 files, one import" in result.output
    assert len(facts_by_key("results", "benchmark-serving")) == 8
    whole = runner.invoke(app, ["import", "epoch-ml-hardware", directory], terminal_width=200)
    assert whole.exit_code == 2 and "one at a time" in whole.output


def test_the_api_imports_several_uploaded_files_as_one(client, admin_headers):
    client.post(  # the chips the runs name
        "/v1/imports",
        data={"kind": "epoch-ml-hardware"},
        files={"file": ("ml_hardware.csv", (corpus_dir() / EPOCH_NEW).read_bytes(), "text/csv")},
        headers=admin_headers,
    )
    paths = sorted((corpus_dir() / SERVING_DIR).glob("*.json"))[:3]
    uploads = [("files", (path.name, path.read_bytes(), "application/json")) for path in paths]
    form = {"kind": "benchmark-serving", "hardware": "B200"}
    r = client.post("/v1/imports", data=form, files=uploads, headers=admin_headers)
    assert r.status_code == 201, r.text
    body = r.json()
    assert (body["rows_read"], body["inserted"], body["report"]["files"]) == (3, 3, 3)
    results = facts_by_key("results", "benchmark-serving")
    for path in paths:
        run = results[f"B200/MiniMaxAI/MiniMax-M2.5/{path.name}"]
        assert run["value"] == pytest.approx(json.loads(path.read_bytes())["output_throughput"])
    whole = client.post(
        "/v1/imports", data={"kind": "epoch-funding-rounds"}, files=uploads[:2], headers=admin_headers
    )
    assert whole.status_code == 422 and "one at a time" in whole.json()["detail"]


def test_the_cli_counts_a_directory_of_one_file_in_the_singular(chips, tmp_path):
    source = sorted((corpus_dir() / SERVING_DIR).glob("*.json"))[0]
    shutil.copy(source, tmp_path / source.name)
    result = CliRunner().invoke(
        app, ["import", "benchmark-serving", str(tmp_path), "--hardware", "B200"], terminal_width=200
    )
    assert result.exit_code == 0, result.output
    assert "1 file, one import" in result.output
