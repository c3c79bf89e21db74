"""The imports API (upload or URL, dry run, strict, refusals, listing), the aliases API (waiting rows let
through by a new alias), fact history over HTTP, and ``chipwatch import``."""

from __future__ import annotations

from sqlalchemy import select
from typer.testing import CliRunner

from chipwatch.cli import app
from chipwatch.db import session_scope
from chipwatch.imports.models import Import
from tests.fixtures.corpus import corpus_dir, requires_corpus
from tests.fixtures.imports import (
    EPOCH_NEW,
    EPOCH_OLD,
    FUNDING,
    MLPERF_V51,
    count,
    facts_by_key,
    import_corpus,
)
from tests.fixtures.webhooks import set_env

pytestmark = requires_corpus


def _upload(client, headers, kind: str, relative: str, **params):
    path = corpus_dir() / relative
    files = {"file": (path.name, path.read_bytes(), "application/octet-stream")}
    return client.post("/v1/imports", data={"kind": kind}, files=files, params=params, headers=headers)


def test_upload_answers_the_report_and_is_listed(client, admin_headers):
    r = _upload(client, admin_headers, "epoch-funding-rounds", FUNDING)
    assert r.status_code == 201, r.text
    body = r.json()
    assert (body["kind"], body["status"], body["inserted"], body["file_name"]) == (
        "epoch-funding-rounds",
        "applied",
        36,
        "ai_companies_funding_rounds.csv",
    )
    assert len(body["sha256"]) == 64 and body["dry_run"] is False
    listed = client.get("/v1/imports").json()["items"]
    assert [i["id"] for i in listed] == [body["id"]]
    assert client.get(f"/v1/imports/{body['id']}").json()["inserted"] == 36
    assert client.get("/v1/imports/999").status_code == 404
    closed = client.get("/v1/funding-rounds", params={"status": "closed", "limit": 500}).json()["items"]
    assert {row["status"] for row in closed} == {"closed"}
    # The file's 32 closed rounds; the seeded rounds (seed_data/funding_rounds.yaml) have no row key.
    assert len([row for row in closed if row["row_key"] is not None]) == 32


def test_writes_need_the_admin_token(client):
    path = corpus_dir() / FUNDING
    r = client.post(
        "/v1/imports", data={"kind": "epoch-funding-rounds"}, files={"file": ("f.csv", path.read_bytes())}
    )
    assert r.status_code == 401 and r.headers["content-type"].startswith("application/problem+json")


def test_import_from_a_url_on_loopback(client, admin_headers, httpserver):
    data = (corpus_dir() / EPOCH_NEW).read_bytes()
    httpserver.expect_request(
        "/repo/0123456789abcdef0123456789abcdef01234567/ml_hardware.csv"
    ).respond_with_data(data, content_type="text/csv")
    url = httpserver.url_for("/repo/0123456789abcdef0123456789abcdef01234567/ml_hardware.csv")
    r = client.post("/v1/imports", data={"kind": "epoch-ml-hardware", "url": url}, headers=admin_headers)
    assert r.status_code == 201, r.text
    body = r.json()
    assert (body["url"], body["commit"], body["inserted"]) == (
        url,
        "0123456789abcdef0123456789abcdef01234567",
        167,
    )


def test_the_ssrf_guard_refuses_a_private_url(client, admin_headers, httpserver, monkeypatch):
    set_env(monkeypatch, allow_private_networks="0")
    httpserver.expect_request("/data.csv").respond_with_data(b"x")
    r = client.post(
        "/v1/imports",
        data={"kind": "epoch-ml-hardware", "url": httpserver.url_for("/data.csv")},
        headers=admin_headers,
    )
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "url"
    assert "could not fetch" in r.json()["errors"][0]["message"]
    assert httpserver.log == []  # refused before any connection


def test_refusals_are_problems_and_listed(client, admin_headers):
    r = _upload(client, admin_headers, "epoch-ml-hardware", FUNDING)
    assert r.status_code == 422 and r.headers["content-type"].startswith("application/problem+json")
    problem = r.json()
    assert problem["title"] == "Import refused" and "Hardware name" in problem["missing"]
    (listed,) = client.get("/v1/imports").json()["items"]
    assert (listed["id"], listed["status"]) == (problem["import_id"], "refused")
    neither = client.post("/v1/imports", data={"kind": "epoch-ml-hardware"}, headers=admin_headers)
    assert neither.status_code == 422
    assert neither.json()["errors"] == [
        {"field": "file", "message": "give a file to upload or a url to fetch"}
    ]
    path = corpus_dir() / FUNDING
    both = client.post(
        "/v1/imports",
        data={"kind": "epoch-funding-rounds", "url": "https://example.org/funding.csv"},
        files={"file": (path.name, path.read_bytes(), "text/csv")},
        headers=admin_headers,
    )
    assert both.status_code == 422
    assert both.json()["errors"] == [{"field": "file", "message": "give either a file or a url, not both"}]
    unknown = client.post(
        "/v1/imports", data={"kind": "no-such-kind"}, files={"file": (path.name, path.read_bytes())},
        headers=admin_headers,
    )
    assert unknown.status_code == 422 and [e["field"] for e in unknown.json()["errors"]] == ["kind"]
    assert len(client.get("/v1/imports").json()["items"]) == 1  # a kind that does not exist is not listed


def test_dry_run_answers_200_and_writes_nothing(client, admin_headers):
    chips = count("chips")
    r = _upload(client, admin_headers, "epoch-ml-hardware", EPOCH_NEW, dry_run="true")
    assert r.status_code == 200 and r.json()["dry_run"] is True and r.json()["inserted"] == 167
    assert count("chips") == chips and client.get("/v1/imports").json()["items"] == []


def test_options_sent_in_the_form_are_refused_not_dropped(client, admin_headers):
    # dry_run belongs in the query string; dropped from the form, the import would have been written.
    path = corpus_dir() / EPOCH_NEW
    chips = count("chips")
    r = client.post(
        "/v1/imports",
        data={"kind": "epoch-ml-hardware", "dry_run": "true", "hardwre": "x"},
        files={"file": (path.name, path.read_bytes())},
        headers=admin_headers,
    )
    assert r.status_code == 422 and r.headers["content-type"].startswith("application/problem+json")
    assert r.json()["errors"] == [
        {"field": "dry_run",
         "message": "unknown form field; dry_run goes in the query string (?dry_run=...), not the form"},
        {"field": "hardwre", "message": "unknown form field; did you mean 'hardware'?"},
    ]
    assert count("chips") == chips and client.get("/v1/imports").json()["items"] == []


def test_a_form_field_given_twice_is_refused_not_cut_to_its_last_value(client, admin_headers):
    # Two uploads under ``file`` (several go under ``files``) kept only the second; two kinds kept the last.
    paths = sorted((corpus_dir() / "mlperf-inference/v5.1_systems").glob("*.json"))[:2]
    uploads = [("file", (path.name, path.read_bytes(), "application/json")) for path in paths]
    chips = count("chips")
    r = client.post("/v1/imports", data={"kind": ["mlperf-system", "epoch-ml-hardware"]}, files=uploads,
                    headers=admin_headers)
    assert r.status_code == 422 and r.headers["content-type"].startswith("application/problem+json")
    assert r.json()["errors"] == [
        {"field": "kind", "message": "given 2 times; give it once"},
        {"field": "file", "message": "given 2 times; give it once (several files go in files)"},
    ]
    assert count("chips") == chips and client.get("/v1/imports").json()["items"] == []
    several = [("files", upload[1]) for upload in uploads]
    r = client.post("/v1/imports", data={"kind": "mlperf-system"}, files=several, params={"dry_run": "true"},
                    headers=admin_headers)
    assert r.status_code == 200 and r.json()["rows_read"] == 2, r.text


def test_history_of_an_imported_fact_over_http(client, admin_headers):
    _upload(client, admin_headers, "epoch-ml-hardware", EPOCH_OLD)
    second = _upload(client, admin_headers, "epoch-ml-hardware", EPOCH_NEW).json()
    items = client.get("/v1/chips/google-tpu-v7-ironwood/history", params={"limit": 500}).json()["items"]
    tdp = [i for i in items if i["field"] == "nominal_power_w"]
    assert [(i["old_value"], i["new_value"], i["cause"], i["cause_ref"]) for i in tdp] == [
        (980.0, 960.0, "import", str(second["id"]))
    ]
    chip = client.get("/v1/chips/google-tpu-v7-ironwood").json()
    assert chip["dataset"] == "epoch-ml-hardware" and chip["dataset_version"] == second["sha256"]


def test_a_new_alias_lets_waiting_rows_through(client, admin_headers):
    import_corpus("epoch-ml-hardware", EPOCH_NEW)
    import_corpus("mlperf-inference-summary", MLPERF_V51)
    unresolved = {u["name"]: u for u in client.get("/v1/aliases/unresolved").json()}
    l40s = unresolved["NVIDIA L40S"]
    assert (l40s["kind"], l40s["rows_waiting"], l40s["datasets"]) == ("chip", 9, ["mlperf-inference-summary"])
    assert "Cambricon" in unresolved and unresolved["Cambricon"]["rows_waiting"] == 0  # a manufacturer

    chip = {"id": "nvidia-l40s", "name": "NVIDIA L40S", "vendor_id": "nvidia"}
    assert client.post("/v1/chips", json=chip, headers=admin_headers).status_code == 201
    body = {"kind": "chip", "alias": "L40S", "target_id": "nvidia-l40s"}
    r = client.post("/v1/aliases", json=body, headers=admin_headers)
    assert r.status_code == 201, r.text
    assert r.json()["applied"] == 9 and r.json()["alias"]["tokens"] == "l40s"
    l40s_results = [
        row
        for row in facts_by_key("results", "mlperf-inference-summary").values()
        if row["chip_ids"] == ["nvidia-l40s"]
    ]
    assert len(l40s_results) == 9
    assert "NVIDIA L40S" not in {u["name"] for u in client.get("/v1/aliases/unresolved").json()}

    again = client.post("/v1/aliases", json={**body, "alias": "l40s"}, headers=admin_headers)
    assert again.status_code == 409
    unknown = client.post(
        "/v1/aliases", json={**body, "alias": "L40", "target_id": "no-such-chip"}, headers=admin_headers
    )
    assert unknown.status_code == 422 and unknown.json()["errors"][0]["field"] == "target_id"


def test_seeded_aliases_are_editable(client, admin_headers):
    seeded = client.get("/v1/aliases/mi300x").json()
    assert (seeded["alias"], seeded["target_id"], seeded["origin"]) == (
        "MI300X",
        "amd-instinct-mi300x",
        "seed",
    )
    r = client.patch("/v1/aliases/mi300x", json={"note": "checked"}, headers=admin_headers)
    assert r.status_code == 200 and r.json()["alias"]["note"] == "checked"
    assert client.delete("/v1/aliases/mi300x", headers=admin_headers).status_code == 204
    assert client.get("/v1/aliases/mi300x").status_code == 404
    assert client.get("/v1/aliases", params={"kind": "chip"}).json()["items"]


def test_every_problem_of_an_alias_is_reported_in_one_answer(client, admin_headers):
    def fields(resp) -> list[str]:
        assert resp.status_code == 422 and resp.headers["content-type"] == "application/problem+json"
        return sorted(e["field"] for e in resp.json()["errors"])

    # A type error in one field no longer hides the unknown target or the name with no letters.
    body = {"kind": "chip", "alias": "--", "target_id": "no-such-chip", "note": 5}
    assert fields(client.post("/v1/aliases", json=body, headers=admin_headers)) == [
        "alias", "note", "target_id"]
    assert fields(client.post("/v1/aliases", json={**body, "note": None}, headers=admin_headers)) == [
        "alias", "target_id"]
    # A change is checked against the stored alias's kind, with a null beside a bad target.
    change = {"alias": None, "target_id": "no-such-chip"}
    assert fields(client.patch("/v1/aliases/mi300x", json=change, headers=admin_headers)) == [
        "alias", "target_id"]
    assert fields(client.patch("/v1/aliases/mi300x", json={**change, "note": 5}, headers=admin_headers)) == [
        "alias", "note", "target_id"]
    assert client.get("/v1/aliases/mi300x").json()["target_id"] == "amd-instinct-mi300x"


def test_cli_import_prints_the_summary(db):
    runner = CliRunner()
    path = str(corpus_dir() / FUNDING)
    result = runner.invoke(app, ["import", "epoch-funding-rounds", path], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "import 1: epoch-funding-rounds" in result.output and "36" in result.output
    refused = runner.invoke(app, ["import", "epoch-ml-hardware", path], terminal_width=200)
    assert refused.exit_code == 1 and "import refused, nothing written" in refused.output
    missing = runner.invoke(app, ["import", "epoch-ml-hardware", "/no/such/file.csv"], terminal_width=200)
    assert missing.exit_code == 2 and "cannot read" in missing.output
    unknown = runner.invoke(app, ["import", "no-such-kind", path], terminal_width=200)
    assert unknown.exit_code == 2 and "unknown dataset kind 'no-such-kind'" in unknown.output
    with session_scope(write=False) as session:  # the applied one and the refused one; none of no kind
        kinds = session.scalars(select(Import.kind).order_by(Import.id)).all()
    assert kinds == ["epoch-funding-rounds", "epoch-ml-hardware"]


def test_an_upload_larger_than_the_general_body_cap_is_read(client, admin_headers):
    """Dataset files run past the 1 MiB body cap of other writes: the import route allows up to the fetch
    cap, so a 2 MiB file of the wrong kind is read and refused for its columns, not cut off with a 413."""
    body = b"Name,Other\n" + b"x,y\n" * (2 * 1024 * 1024 // 4)
    r = client.post(
        "/v1/imports",
        data={"kind": "epoch-ml-hardware"},
        files={"file": ("big.csv", body, "text/csv")},
        headers=admin_headers,
    )
    assert r.status_code == 422, r.text
    assert "Hardware name" in r.json()["missing"]
    assert r.json()["detail"].startswith("not an epoch-ml-hardware file: the header lacks required columns")
