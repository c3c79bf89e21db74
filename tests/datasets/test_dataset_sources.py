"""Dataset sources polled like feeds: conditional GET against a real server on loopback, an import when
the bytes change, health and backoff when the server fails, the seeded public URLs."""

from __future__ import annotations

import asyncio
import socket

import pytest
from sqlalchemy import select
from werkzeug import Response

from chipwatch.db import session_scope
from chipwatch.imports.models import Import
from chipwatch.imports.polling import NotADatasetSource, check_dataset_source, check_due_datasets
from chipwatch.outbox.models import Event
from chipwatch.scheduler import collect_jobs
from chipwatch.sources.models import Source
from tests.fixtures.corpus import corpus_dir, requires_corpus
from tests.fixtures.imports import EPOCH_NEW, EPOCH_OLD, fact

pytestmark = requires_corpus

SEEDED = {
    "epoch-ml-hardware": ("epoch-ml-hardware", "https://epoch.ai/data/ml_hardware.csv"),
    "epoch-gpu-clusters": ("epoch-gpu-clusters", "https://epoch.ai/data/gpu_clusters.csv"),
    "epoch-funding-rounds": ("epoch-funding-rounds", "https://epoch.ai/data/ai_companies_funding_rounds.csv"),
    "mlperf-inference-v5-1": (
        "mlperf-inference-summary",
        "https://raw.githubusercontent.com/mlcommons/inference_results_v5.1/main/summary_results.json",
    ),
    "inferencex-evals": (
        "inferencex-evals",
        "https://raw.githubusercontent.com/SemiAnalysisAI/InferenceX-app/main/packages/db/data/supplemental-evals.json",
    ),
}


def _source(source_id: str) -> Source:
    with session_scope(write=False) as session:
        return session.get(Source, source_id)


def _point(source_id: str, url: str) -> None:
    with session_scope() as session:
        source = session.get(Source, source_id)
        source.url = url


def _health_events(source_id: str) -> list[dict]:
    with session_scope(write=False) as session:
        stmt = select(Event).where(Event.type == "source.health_changed", Event.source_id == source_id)
        return [e.data for e in session.scalars(stmt.order_by(Event.id))]


def test_the_public_datasets_are_seeded_as_sources(db):
    for source_id, (kind, url) in SEEDED.items():
        source = _source(source_id)
        assert (source.kind, source.url, source.enabled) == (kind, url, True)
        assert source.check_interval_s == 86400
    assert "imports.check_datasets" in {job.id for job in collect_jobs()}


def test_conditional_get_imports_only_what_changed(db, httpserver):
    old, new = (corpus_dir() / EPOCH_OLD).read_bytes(), (corpus_dir() / EPOCH_NEW).read_bytes()
    served = {"body": old, "etag": '"v1"'}

    def handler(request):
        if request.headers.get("If-None-Match") == served["etag"]:
            return Response(status=304, headers={"ETag": served["etag"]})
        return Response(served["body"], headers={"ETag": served["etag"], "Content-Type": "text/csv"})

    httpserver.expect_request("/ml_hardware.csv").respond_with_handler(handler)
    _point("epoch-ml-hardware", httpserver.url_for("/ml_hardware.csv"))
    first = asyncio.run(check_dataset_source("epoch-ml-hardware"))
    assert (first.status, first.http_status) == ("imported", 200) and first.import_id
    assert fact("chips", "google-tpu-v7-ironwood")["nominal_power_w"] == 980.0
    source = _source("epoch-ml-hardware")
    assert (source.etag, source.consecutive_failures, source.last_status) == ('"v1"', 0, "ok")

    second = asyncio.run(check_dataset_source("epoch-ml-hardware"))
    assert (second.status, second.http_status, second.import_id) == ("unchanged", 304, None)
    assert httpserver.log[-1][0].headers.get("If-None-Match") == '"v1"'

    served.update(body=new, etag='"v2"')
    third = asyncio.run(check_dataset_source("epoch-ml-hardware"))
    assert third.status == "imported" and fact("chips", "google-tpu-v7-ironwood")["nominal_power_w"] == 960.0
    with session_scope(write=False) as session:
        imports = list(session.scalars(select(Import).order_by(Import.id)))
    assert [(i.source_id, i.updated) for i in imports] == [
        ("epoch-ml-hardware", 3),
        ("epoch-ml-hardware", 10),
    ]
    assert imports[1].url == httpserver.url_for("/ml_hardware.csv") and imports[1].actor == "source"


def test_an_unreachable_source_fails_politely_and_recovers(db, httpserver):
    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        dead_port = probe.getsockname()[1]
    _point("epoch-funding-rounds", f"http://127.0.0.1:{dead_port}/ai_companies_funding_rounds.csv")
    failed = asyncio.run(check_dataset_source("epoch-funding-rounds"))
    assert failed.status == "error" and failed.import_id is None and failed.error
    source = _source("epoch-funding-rounds")
    assert (source.consecutive_failures, source.last_status) == (1, "error") and source.last_error
    assert source.next_check_at > source.last_checked_at
    assert [e["healthy"] for e in _health_events("epoch-funding-rounds")] == [False]

    httpserver.expect_request("/funding.csv").respond_with_data(
        (corpus_dir() / "epoch-ai/ai_companies_funding_rounds.csv").read_bytes(), content_type="text/csv"
    )
    _point("epoch-funding-rounds", httpserver.url_for("/funding.csv"))
    recovered = asyncio.run(check_dataset_source("epoch-funding-rounds"))
    assert recovered.status == "imported"
    assert _source("epoch-funding-rounds").consecutive_failures == 0
    assert [e["healthy"] for e in _health_events("epoch-funding-rounds")] == [False, True]


def test_a_file_of_the_wrong_kind_is_a_failure_of_the_source(db, httpserver):
    httpserver.expect_request("/clusters.csv").respond_with_data(
        b"Name,Owner\nx,y\n", content_type="text/csv"
    )
    _point("epoch-gpu-clusters", httpserver.url_for("/clusters.csv"))
    check = asyncio.run(check_dataset_source("epoch-gpu-clusters"))
    assert check.status == "refused" and "missing 'Status'" in check.error
    with session_scope(write=False) as session:
        refused = session.get(Import, check.import_id)
    assert (refused.status, refused.source_id) == ("refused", "epoch-gpu-clusters")
    assert _source("epoch-gpu-clusters").consecutive_failures == 1


def test_the_job_claims_due_dataset_sources_only(db, httpserver):
    httpserver.expect_request("/evals.json").respond_with_data(
        (corpus_dir() / "inferencex/inferencex-app__supplemental-evals.json").read_bytes()
    )
    with session_scope() as session:
        for source in session.scalars(
            select(Source).where(Source.kind.in_(list(k for k, _ in SEEDED.values())))
        ):
            source.enabled = source.id == "inferencex-evals"
        session.get(Source, "inferencex-evals").url = httpserver.url_for("/evals.json")
    checks = asyncio.run(check_due_datasets())
    assert [(c.source_id, c.status) for c in checks] == [("inferencex-evals", "imported")]
    assert asyncio.run(check_due_datasets()) == []  # not due again before its interval
    assert _source("inferencex-evals").claimed_by is None


def test_manual_check_over_the_api(client, admin_headers, httpserver):
    httpserver.expect_request("/evals.json").respond_with_data(
        (corpus_dir() / "inferencex/inferencex-app__supplemental-evals.json").read_bytes()
    )
    _point("inferencex-evals", httpserver.url_for("/evals.json"))
    r = client.post("/v1/imports/sources/inferencex-evals/check", headers=admin_headers)
    assert r.status_code == 200 and r.json()["status"] == "imported" and r.json()["import_id"]
    assert client.post("/v1/imports/sources/semianalysis/check", headers=admin_headers).status_code == 404


def test_a_source_that_is_no_dataset_is_refused_before_fetching(db):
    for source_id in ("no-such-source", "mlcommons-news"):  # unknown; a feed
        with pytest.raises(NotADatasetSource):
            asyncio.run(check_dataset_source(source_id))
