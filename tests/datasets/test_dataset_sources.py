"""Dataset sources checked like feeds, by the one check (the sources check pass, POST
/v1/sources/{id}/check): conditional GET against a real server on loopback, an import when the bytes
change, health and backoff when the server fails or the file is refused, the seeded public URLs."""

from __future__ import annotations

import asyncio
import socket

import pytest
from sqlalchemy import select, update
from werkzeug import Response

from chipwatch.config import get_settings
from chipwatch.db import session_scope
from chipwatch.imports.models import Import
from chipwatch.outbox.models import Event
from chipwatch.scheduler import collect_jobs
from chipwatch.sources.check import CheckOutcome, check_now
from chipwatch.sources.check_pass import check_due, check_sources
from chipwatch.sources.errors import NotAFeed, SourceNotFound
from chipwatch.sources.models import Source
from chipwatch.wiring import wire
from tests.fixtures.corpus import corpus_dir, requires_corpus
from tests.fixtures.imports import EPOCH_NEW, EPOCH_OLD, fact, import_corpus
from tests.fixtures.sources import Entry, add_source, rss

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


@pytest.fixture(autouse=True)
def _wired() -> None:
    """The dataset importer is registered by the wiring, as in the service and the worker."""
    wire()


def check_dataset_source(source_id: str) -> CheckOutcome:
    """One check of ``source_id`` now, as ``POST /v1/sources/{id}/check`` runs it."""
    return asyncio.run(check_now(source_id))


def check_due_now() -> list[CheckOutcome]:
    """One scheduled pass (the ``sources.check_due`` job's body)."""
    return asyncio.run(check_due(get_settings()))


def _only_enabled(*source_ids: str) -> None:
    with session_scope() as session:
        session.execute(update(Source).values(enabled=False))
        session.execute(update(Source).where(Source.id.in_(source_ids)).values(enabled=True))


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
    # One scheduled pass checks feeds and dataset sources alike: no job of their own.
    assert [job.id for job in collect_jobs() if "check" in job.id] == ["sources.check_due"]


def test_conditional_get_imports_only_what_changed(db, httpserver):
    old, new = (corpus_dir() / EPOCH_OLD).read_bytes(), (corpus_dir() / EPOCH_NEW).read_bytes()
    served = {"body": old, "etag": '"v1"'}

    def handler(request):
        if request.headers.get("If-None-Match") == served["etag"]:
            return Response(status=304, headers={"ETag": served["etag"]})
        return Response(served["body"], headers={"ETag": served["etag"], "Content-Type": "text/csv"})

    httpserver.expect_request("/ml_hardware.csv").respond_with_handler(handler)
    _point("epoch-ml-hardware", httpserver.url_for("/ml_hardware.csv"))
    first = check_dataset_source("epoch-ml-hardware")
    assert (first.status, first.http_status) == ("ok", 200) and first.import_id
    assert fact("chips", "google-tpu-v7-ironwood")["nominal_power_w"] == 980.0
    source = _source("epoch-ml-hardware")
    assert (source.etag, source.consecutive_failures, source.last_status) == ('"v1"', 0, "ok")

    second = check_dataset_source("epoch-ml-hardware")
    assert (second.status, second.http_status, second.import_id) == ("not_modified", 304, None)
    assert httpserver.log[-1][0].headers.get("If-None-Match") == '"v1"'

    served.update(body=new, etag='"v2"')
    third = check_dataset_source("epoch-ml-hardware")
    assert (
        third.status == "ok"
        and third.import_id
        and fact("chips", "google-tpu-v7-ironwood")["nominal_power_w"] == 960.0
    )
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
    failed = check_dataset_source("epoch-funding-rounds")
    assert failed.status == "error" and failed.import_id is None and failed.error
    source = _source("epoch-funding-rounds")
    assert (source.consecutive_failures, source.last_status) == (1, "error") and source.last_error
    assert source.next_check_at > source.last_checked_at
    assert [e["healthy"] for e in _health_events("epoch-funding-rounds")] == [False]

    httpserver.expect_request("/funding.csv").respond_with_data(
        (corpus_dir() / "epoch-ai/ai_companies_funding_rounds.csv").read_bytes(), content_type="text/csv"
    )
    _point("epoch-funding-rounds", httpserver.url_for("/funding.csv"))
    recovered = check_dataset_source("epoch-funding-rounds")
    assert recovered.status == "ok" and recovered.import_id
    assert _source("epoch-funding-rounds").consecutive_failures == 0
    assert [e["healthy"] for e in _health_events("epoch-funding-rounds")] == [False, True]


def test_a_file_of_the_wrong_kind_is_a_failure_of_the_source(db, httpserver):
    httpserver.expect_request("/clusters.csv").respond_with_data(
        b"Name,Owner\nx,y\n", content_type="text/csv"
    )
    _point("epoch-gpu-clusters", httpserver.url_for("/clusters.csv"))
    check = check_dataset_source("epoch-gpu-clusters")
    assert check.status == "error" and "import refused" in check.error and "missing 'Status'" in check.error
    with session_scope(write=False) as session:
        refused = session.get(Import, check.import_id)
    assert (refused.status, refused.source_id) == ("refused", "epoch-gpu-clusters")
    source = _source("epoch-gpu-clusters")
    assert (source.consecutive_failures, source.last_status, source.last_error) == (1, "error", check.error)


# The evals file lists 66 runs, each a result of its own.
EVAL_ROWS = 66


def _due_again(*source_ids: str) -> None:
    with session_scope() as session:
        session.execute(update(Source).where(Source.id.in_(source_ids)).values(next_check_at=None))


def test_the_check_pass_checks_dataset_sources_beside_feeds(db, httpserver):
    """One scheduled pass claims the due dataset source with the due feed: the file is imported, the
    next pass sends its ETag and gets a 304, and a bad file later is the source's failure in its health."""
    evals = (corpus_dir() / "inferencex/inferencex-app__supplemental-evals.json").read_bytes()
    served = {"body": evals, "etag": '"e1"'}

    def handler(request):
        if request.headers.get("If-None-Match") == served["etag"]:
            return Response(status=304, headers={"ETag": served["etag"]})
        return Response(served["body"], headers={"ETag": served["etag"], "Content-Type": "application/json"})

    import_corpus("epoch-ml-hardware", EPOCH_NEW)  # the chips the runs name (B200, H200, MI355X...)
    httpserver.expect_request("/evals.json").respond_with_handler(handler)
    httpserver.expect_request("/feed.xml").respond_with_data(
        rss([Entry("MLPerf Inference v5.1 results", guid="a")]), content_type="application/rss+xml"
    )
    add_source("chip-news", httpserver.url_for("/feed.xml"))
    _point("inferencex-evals", httpserver.url_for("/evals.json"))
    _only_enabled("inferencex-evals", "chip-news")

    first = {o.source_id: o for o in check_due_now()}
    assert set(first) == {"inferencex-evals", "chip-news"}
    assert (first["chip-news"].status, first["chip-news"].new_items, first["chip-news"].import_id) == (
        "ok",
        1,
        None,
    )
    imported = first["inferencex-evals"]
    assert (imported.status, imported.http_status, imported.new_items) == ("ok", 200, 0)
    with session_scope(write=False) as session:
        imp = session.get(Import, imported.import_id)
    assert (imp.status, imp.kind, imp.source_id, imp.actor) == (
        "applied",
        "inferencex-evals",
        "inferencex-evals",
        "source",
    )
    assert (imp.rows_read, imp.inserted, imp.waiting) == (
        EVAL_ROWS,
        EVAL_ROWS,
        0,
    ) and imp.url == httpserver.url_for("/evals.json")
    source = _source("inferencex-evals")
    assert (source.etag, source.last_status, source.consecutive_failures) == ('"e1"', "ok", 0)
    assert (source.claimed_by, source.claimed_until) == (None, None)
    assert source.next_check_at > source.last_checked_at
    assert check_due_now() == []  # neither is due again before its interval

    _due_again("inferencex-evals")
    (second,) = check_due_now()
    assert (second.source_id, second.status, second.http_status, second.import_id) == (
        "inferencex-evals",
        "not_modified",
        304,
        None,
    )
    assert httpserver.log[-1][0].headers.get("If-None-Match") == '"e1"'

    served.update(body=b'{"not": "evals"}', etag='"e2"')
    _due_again("inferencex-evals")
    (third,) = check_due_now()
    assert third.status == "error" and third.error.startswith("import refused: ")
    source = _source("inferencex-evals")
    assert (source.consecutive_failures, source.last_status, source.last_error) == (1, "error", third.error)
    assert source.etag == '"e1"'  # a refused file's validators are not kept: the next check fetches it whole
    assert [e["healthy"] for e in _health_events("inferencex-evals")] == [False]
    with session_scope(write=False) as session:
        stmt = select(Import).where(Import.source_id == "inferencex-evals").order_by(Import.id)
        statuses = [i.status for i in session.scalars(stmt)]
    assert statuses == ["applied", "refused"]


def test_manual_check_over_the_api(client, admin_headers, httpserver):
    httpserver.expect_request("/evals.json").respond_with_data(
        (corpus_dir() / "inferencex/inferencex-app__supplemental-evals.json").read_bytes()
    )
    _point("inferencex-evals", httpserver.url_for("/evals.json"))
    r = client.post("/v1/sources/inferencex-evals/check", headers=admin_headers)
    assert r.status_code == 200 and r.json()["status"] == "ok" and r.json()["import_id"]
    assert client.get(f"/v1/imports/{r.json()['import_id']}").json()["source_id"] == "inferencex-evals"
    again = client.post("/v1/sources/inferencex-evals/check", headers=admin_headers).json()
    assert (again["status"], again["import_id"]) == ("ok", None)  # the same bytes: nothing to import
    r = client.post("/v1/sources/36kr/check", headers=admin_headers)  # a seed article
    assert r.status_code == 409 and "not a polled feed or dataset source" in r.json()["detail"]


def test_a_source_that_is_not_checked_is_refused_before_fetching(db):
    with pytest.raises(SourceNotFound):
        check_dataset_source("no-such-source")
    with pytest.raises(NotAFeed):
        check_dataset_source("36kr")  # a seed article


def test_a_removed_dataset_source_is_neither_claimed_nor_checked_by_hand(client, admin_headers, httpserver):
    httpserver.expect_request("/evals.json").respond_with_data(b"[]")
    _point("inferencex-evals", httpserver.url_for("/evals.json"))
    _only_enabled("inferencex-evals")
    assert client.delete("/v1/sources/inferencex-evals", headers=admin_headers).status_code in (200, 204)
    assert check_due_now() == []
    (outcome,) = asyncio.run(check_sources(["inferencex-evals"]))
    assert outcome.status == "error" and "removed" in outcome.error
    assert client.post("/v1/sources/inferencex-evals/check", headers=admin_headers).status_code == 409
    assert not httpserver.log
