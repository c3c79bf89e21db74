"""Every feed of the shared corpus, served over HTTP and stored through check_source.

feedparser's own test suite (with the response headers each file declares), Miniflux's captured
real-world feeds and the AI-chip news feeds: each either stores its items or records a readable error
in its source's health, with no unhandled exception; what is stored is what the parser read; and a
second pass over the same documents (parsed again) adds and changes nothing.

The whole corpus runs once per module on one database and one local server, in two passes.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import select, update

from chipwatch.config import get_settings
from chipwatch.db import dispose_engines, session_scope
from chipwatch.sources.check import CheckOutcome
from chipwatch.sources.check_pass import check_sources
from chipwatch.sources.errors import FeedParseError
from chipwatch.sources.models import Item, Source
from chipwatch.sources.parse import ParsedFeed, parse_feed
from tests.fixtures.corpus import corpus_dir, requires_corpus
from tests.fixtures.database import clone_database, drop_database, use_database

pytestmark = requires_corpus

FOLDERS = ("feedparser-tests", "miniflux-testdata", "feeds-ai-chips")


@dataclass
class Served:
    source_id: str
    relative: str
    body: bytes
    headers: dict[str, str]


def declared_headers(body: bytes) -> dict[str, str]:
    """The simulated response headers a feedparser test file declares in its header comment."""
    head = body[:2048].decode("latin-1")
    return {
        m.group(1).strip(): m.group(2).strip()
        for m in re.finditer(r"^Header:\s*([\w-]+):[ \t]*(.*)$", head, re.M)
    }


def corpus_files() -> list[Served]:
    served = []
    for folder in FOLDERS:
        root = corpus_dir() / folder
        for n, path in enumerate(sorted(p for p in root.rglob("*") if p.is_file())):
            if path.name in ("date_vectors.json", "date_strings.json") or path.suffix == ".md":
                continue
            body = path.read_bytes()
            headers = declared_headers(body) if folder == "feedparser-tests" else {}
            served.append(
                Served(f"{folder[:8]}-{n}", f"{folder}/{path.relative_to(root).as_posix()}", body, headers)
            )
    return served


def content_type_for(item: Served) -> str:
    declared = item.headers.get("Content-type") or item.headers.get("Content-Type")
    if declared is not None:
        return declared
    return "application/json" if item.relative.endswith(".json") else "application/xml"


@dataclass
class CorpusRun:
    settings: object
    base_url: str
    files: dict[str, Served]
    first: dict[str, CheckOutcome]
    second: dict[str, CheckOutcome]


@pytest.fixture(scope="module")
def corpus_server(tmp_path_factory) -> Iterator[tuple[str, dict[str, Served]]]:
    """``(base URL, files by source id)`` of the corpus served by a separate local server process."""
    files = {f.source_id: f for f in corpus_files()}
    root = tmp_path_factory.mktemp("corpus-files")
    manifest = {}
    for n, f in enumerate(files.values()):
        body = root / f"{n}.bin"
        body.write_bytes(f.body)
        headers = {k: v for k, v in f.headers.items() if k.lower() != "content-type"}
        headers["Content-Type"] = content_type_for(f)  # verbatim, even when malformed
        manifest[f"/{f.relative}"] = [str(body), headers]
    (root / "manifest.json").write_text(json.dumps(manifest))
    script = Path(__file__).with_name("corpus_server.py")
    proc = subprocess.Popen(
        [sys.executable, str(script), str(root / "manifest.json")], stdout=subprocess.PIPE, text=True
    )
    try:
        port = int(proc.stdout.readline())
        yield f"http://127.0.0.1:{port}/", files
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="module")
def corpus_run(template_db, tmp_path_factory, corpus_server) -> Iterator[CorpusRun]:
    base_url, files = corpus_server
    data = tmp_path_factory.mktemp("corpus")
    url = clone_database(template_db, data / "data")
    with pytest.MonkeyPatch.context() as mp:
        settings = use_database(mp, url, data / "data")
        settings = settings.model_copy(update={"fetch_concurrency": 8, "fetch_per_host_limit": 8})
        try:
            with session_scope() as session:
                session.execute(update(Source).values(enabled=False))
                for f in files.values():
                    session.add(Source(id=f.source_id, name=f.relative[-200:], url=base_url + f.relative))
            ids = sorted(files)
            first = {o.source_id: o for o in asyncio.run(check_sources(ids, settings=settings))}
            # The second pass covers the documents that stored items, with their body digests
            # forgotten so that each is parsed and deduplicated against its stored items again.
            again = sorted(sid for sid, o in first.items() if o.new_items)
            with session_scope() as session:
                session.execute(update(Source).values(last_body_sha256=None))
            second = {o.source_id: o for o in asyncio.run(check_sources(again, settings=settings))}
            yield CorpusRun(settings, base_url, files, first, second)
        finally:
            dispose_engines()
            get_settings.cache_clear()
            drop_database(url)


def stored_titles() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    with session_scope(write=False) as session:
        for source_id, title in session.execute(select(Item.source_id, Item.title).order_by(Item.id)):
            found.setdefault(source_id, []).append(title)
    return found


def test_every_corpus_file_was_checked(corpus_run):
    assert set(corpus_run.first) == set(corpus_run.files)
    assert len(corpus_run.files) > 2100
    for outcome in corpus_run.first.values():
        assert outcome.status in ("ok", "error")
        assert outcome.http_status == 200, (outcome.source_id, outcome.error)


def test_stored_items_match_what_the_parser_reads(corpus_run):
    """Each document the parser accepts is stored (its first entry among the items); each it refuses
    is recorded as ``malformed feed: <the parser's reason>`` in the source's health."""
    titles = stored_titles()
    now = datetime.now(UTC)
    problems = []
    counts = {"stored": 0, "empty": 0, "refused": 0}
    for source_id, served in corpus_run.files.items():
        outcome = corpus_run.first[source_id]
        headers = {"content-type": content_type_for(served)}
        url = corpus_run.base_url + served.relative
        try:
            parsed: ParsedFeed | FeedParseError = parse_feed(served.body, url=url, headers=headers, now=now)
        except FeedParseError as exc:
            parsed = exc
        if isinstance(parsed, FeedParseError):
            counts["refused"] += 1
            if outcome.status != "error" or outcome.error != f"malformed feed: {parsed}":
                problems.append(f"{served.relative}: parser refused ({parsed}) but check said {outcome}")
            continue
        if outcome.status != "ok":
            problems.append(f"{served.relative}: parser read it but the check failed: {outcome.error}")
            continue
        mine = titles.get(source_id, [])
        if not parsed.entries:
            counts["empty"] += 1
            if mine:
                problems.append(f"{served.relative}: no entries but {len(mine)} items stored")
            continue
        counts["stored"] += 1
        if outcome.new_items != len(mine) or not 1 <= len(mine) <= len(parsed.entries):
            problems.append(f"{served.relative}: {outcome.new_items} new, {len(mine)} stored")
        elif parsed.entries[0].title.replace("\x00", "") not in mine:
            problems.append(f"{served.relative}: first title {parsed.entries[0].title!r} not in {mine[:3]}")
    assert not problems, "\n".join(problems[:30])
    assert counts["stored"] > 1100, counts
    assert counts["refused"] < 200, counts


def test_failures_are_readable_and_recorded_in_health(corpus_run):
    errors = {sid: o for sid, o in corpus_run.first.items() if o.status == "error"}
    assert errors
    with session_scope(write=False) as session:
        rows = {s.id: s for s in session.scalars(select(Source).where(Source.id.in_(list(errors))))}
    for source_id, outcome in errors.items():
        assert outcome.error.startswith("malformed feed: "), outcome.error
        assert "Traceback" not in outcome.error
        source = rows[source_id]
        assert source.last_status == "error"
        assert source.consecutive_failures == 1
        assert source.last_error == outcome.error
        assert source.items_count == 0


def test_a_second_pass_over_the_same_documents_adds_and_changes_nothing(corpus_run):
    assert len(corpus_run.second) > 1100
    added = {sid: o.new_items for sid, o in corpus_run.second.items() if o.new_items}
    changed = {sid: o.updated_items for sid, o in corpus_run.second.items() if o.updated_items}
    assert added == {}, [corpus_run.files[s].relative for s in list(added)[:20]]
    assert changed == {}, [corpus_run.files[s].relative for s in list(changed)[:20]]
    for sid, outcome in corpus_run.second.items():
        assert outcome.status == corpus_run.first[sid].status


def _source_of(corpus_run, relative: str) -> str:
    return next(sid for sid, f in corpus_run.files.items() if f.relative == relative)


def test_ai_chip_feeds_are_stored_with_the_right_values(corpus_run):
    expected = {
        "feeds-ai-chips/ati-ai-rss-feeds__the-batch.xml": 16,
        "feeds-ai-chips/ati-ai-rss-feeds__tldr-ai.xml": 20,
        "feeds-ai-chips/depodefi-rss-miner__amd-press-releases.xml": 10,
        "feeds-ai-chips/depodefi-rss-miner__nvidia-generative-ai-blog.xml": 14,
    }
    with session_scope(write=False) as session:
        for relative, count in expected.items():
            source = session.get(Source, _source_of(corpus_run, relative))
            assert (source.items_count, source.kind, source.last_status) == (count, "rss", "ok"), relative
        nvidia = _source_of(corpus_run, "feeds-ai-chips/depodefi-rss-miner__nvidia-generative-ai-blog.xml")
        first = session.scalars(select(Item).where(Item.source_id == nvidia).order_by(Item.id)).first()
        assert first.link == "https://blogs.nvidia.com/blog/mbl-human-memory-ai-vr-rtx/"
        assert first.title == "Marine Biological Laboratory Explores Human Memory With AI and Virtual Reality"
        assert first.published_at is not None and first.published_at.tzinfo is not None
        amd = _source_of(corpus_run, "feeds-ai-chips/depodefi-rss-miner__amd-press-releases.xml")
        titles = list(session.scalars(select(Item.title).where(Item.source_id == amd)))
        assert "AMD and HPE Expand Collaboration to Advance Open Rack-Scale AI Infrastructure" in titles


def test_feedparser_expectations_survive_storage(corpus_run):
    """Spot checks from feedparser's own ``Expect:`` lines, read back from the database."""
    cases = {
        "feedparser-tests/wellformed/rss/item_title.xml": ("title", "Item 1 title"),
        "feedparser-tests/wellformed/atom10/entry_title.xml": ("title", "Example Atom"),
        "feedparser-tests/wellformed/rss/item_guid.xml": ("guid", "http://guid.example.com/"),
    }
    with session_scope(write=False) as session:
        for relative, (column, value) in cases.items():
            source_id = _source_of(corpus_run, relative)
            item = session.scalars(select(Item).where(Item.source_id == source_id)).one()
            assert getattr(item, column) == value, relative
