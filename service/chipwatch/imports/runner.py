"""The edges of an import, shared by ``chipwatch import`` and ``POST /v1/imports``: getting the bytes (a
file, an upload or a URL fetched through the guarded fetcher: SSRF guard, size and time caps) and owning
the transaction (commit; roll back a dry run; record a refusal in a transaction of its own).

The check of a dataset source (the sources domain's check pass, or ``POST /v1/sources/{id}/check``)
reaches the same :func:`~chipwatch.imports.service.run_import` through :func:`import_from_source`, which
the wiring registers as the sources domain's dataset importer; it runs inside the check's transaction.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from sqlmodel import Session

from chipwatch.config import Settings, get_settings
from chipwatch.db import session_scope
from chipwatch.imports.schemas import ImportPublic
from chipwatch.imports.service import (
    ImportFile,
    ImportRefused,
    ImportRequest,
    Progress,
    record_refusal,
    run_import,
)
from chipwatch.sources.fetch import fetch_feed, make_client
from chipwatch.sources.hooks import DatasetImported


class FetchFailed(ValueError):
    """The URL could not be fetched (network, HTTP status, a limit, or the SSRF guard refused it)."""


class TooLarge(ValueError):
    """The file is larger than ``fetch_max_bytes``."""


@dataclass(slots=True)
class ImportOutcome:
    """An import's result: the report of what was (or, for a dry run, would have been) written, or the
    refusal (``refused_id``: the recorded refused import, None for a dry run)."""

    report: ImportPublic | None = None
    refusal: ImportRefused | None = None
    refused_id: int | None = None


class _DryRun(Exception):
    """Raised inside the transaction of a dry run so that it rolls back."""


def is_url(text: str) -> bool:
    """True for an http(s) URL, as opposed to a file path."""
    return text.startswith(("http://", "https://"))


async def fetch_dataset(url: str, *, settings: Settings | None = None) -> tuple[bytes, str]:
    """The bytes at ``url`` and the final URL after redirects, fetched as feeds are (SSRF guard on every
    hop, ``fetch_max_bytes``, ``fetch_timeout_s``). Raises :class:`FetchFailed` with a readable reason."""
    settings = settings or get_settings()
    async with make_client(settings) as client:
        fetched = await fetch_feed(client, url, settings=settings)
    if fetched.status != "ok" or fetched.body is None:
        raise FetchFailed(fetched.error or f"no body (HTTP {fetched.http_status})")
    return fetched.body, fetched.final_url


def read_file(path: Path, *, settings: Settings | None = None) -> bytes:
    """A local file's bytes; raises :class:`TooLarge` past ``fetch_max_bytes`` (the same cap as a URL)."""
    settings = settings or get_settings()
    size = path.stat().st_size
    if size > settings.fetch_max_bytes:
        raise TooLarge(
            f"{path.name} is {size} bytes; the limit is {settings.fetch_max_bytes} (fetch_max_bytes)"
        )
    return path.read_bytes()


BATCH_FILES = {
    "mlperf-system": "*.json",
    "mlperf-log-summary": "*mlperf_log_summary.txt",
    "benchmark-serving": "*.json",
}
"""The files a directory of a one-row kind is searched for (recursively)."""


def batch_files(kind: str, locations: list[Path]) -> list[Path]:
    """The files of a batch of ``kind``: each location a file, or a directory searched recursively for
    the kind's files (:data:`BATCH_FILES`; in an MLPerf submission tree, the system descriptions are the
    JSON files of its ``systems`` directories). Sorted, each once. Raises ValueError for a kind that is
    not imported in batches, and FileNotFoundError for a location that does not exist."""
    pattern = BATCH_FILES.get(kind)
    if pattern is None:
        raise ValueError(f"{kind} files are imported one at a time; give one file")
    found: set[Path] = set()
    for location in locations:
        if location.is_dir():
            files = [path for path in location.rglob(pattern) if path.is_file()]
            if kind == "mlperf-system" and any(path.parent.name == "systems" for path in files):
                files = [path for path in files if path.parent.name == "systems"]
            found.update(files)
        elif location.is_file():
            found.add(location)
        else:
            raise FileNotFoundError(f"no such file or directory: {location}")
    return sorted(found)


def read_batch(paths: list[Path], *, settings: Settings | None = None) -> tuple[ImportFile, ...]:
    """The files at ``paths``, each named by its path as given (``/`` separated: an MLPerf path names
    the system, a LoadGen run's context); each is capped as one file is (:func:`read_file`)."""
    return tuple(ImportFile(path.as_posix(), read_file(path, settings=settings)) for path in paths)


def execute_import(
    request: ImportRequest,
    *,
    dry_run: bool = False,
    settings: Settings | None = None,
    progress: Progress | None = None,
) -> ImportOutcome:
    """Run :func:`~chipwatch.imports.service.run_import` in a transaction of its own and commit it; a
    dry run computes the same report and rolls back. A refused import is recorded as refused (not for a
    dry run) and returned with its reason, never raised. Database errors propagate."""
    outcome = ImportOutcome()
    try:
        with session_scope(settings) as session:
            imp = run_import(session=session, request=request, progress=progress)
            outcome.report = ImportPublic.model_validate(imp)
            if dry_run:
                outcome.report.dry_run, outcome.report.id = True, None
                raise _DryRun
    except _DryRun:
        pass
    except ImportRefused as refusal:
        outcome.refusal = refusal
        if not dry_run:
            with session_scope(settings) as session:
                outcome.refused_id = record_refusal(session=session, request=request, refusal=refusal).id
    return outcome


async def submit(
    *,
    kind: str,
    data: bytes | None,
    url: str | None,
    options: dict[str, object],
    file_name: str | None = None,
    commit: str | None = None,
    strict: bool = False,
    dry_run: bool = False,
    actor: str = "admin",
    settings: Settings | None = None,
    files: tuple[ImportFile, ...] = (),
) -> ImportOutcome:
    """An import of uploaded ``data``, of the file at ``url``, or of several uploaded ``files`` of a
    one-row kind as one import (exactly one of them), run as :func:`execute_import` in a worker thread.
    Raises ValueError when none or more than one is given, and :class:`FetchFailed` when the URL cannot
    be fetched."""
    offered = (("file", data), ("url", url), ("files", files or None))
    given = [name for name, value in offered if value is not None]
    if not given:
        raise ValueError("give a file to upload or a url to fetch")
    if given == ["file", "url"]:
        raise ValueError("give either a file or a url, not both")
    if len(given) > 1:
        raise ValueError(f"give one of a file, several files or a url, not {' and '.join(given)}")
    final_url = None
    if url is not None:
        data, final_url = await fetch_dataset(url, settings=settings)
    request = ImportRequest(
        kind=kind,
        data=data or b"",
        file_name=file_name,
        url=final_url or url,
        commit=commit,
        options={k: v for k, v in options.items() if v is not None},
        strict=strict,
        actor=actor,
        files=files,
    )
    return await asyncio.to_thread(execute_import, request, dry_run=dry_run, settings=settings)


def import_from_source(
    *, session: Session, source_id: str, kind: str, body: bytes, url: str
) -> DatasetImported:
    """Import the changed bytes of dataset source ``source_id`` (of dataset ``kind``, fetched from the
    final ``url``) in the check's ``session``; flushes, never commits.

    Returns the applied import's id, or, for a refused file, the recorded refusal's id with ``error``
    ``import refused: <reason>``. Other exceptions propagate: the check records them as the source's
    failure and nothing of the import lands.
    """
    name = url.rsplit("?", 1)[0].rsplit("/", 1)[-1]
    request = ImportRequest(
        kind=kind, data=body, file_name=name, url=url, source_id=source_id, actor="source"
    )
    try:
        # A savepoint: whatever a refused import flushed goes, the check's health update stays.
        with session.begin_nested():
            imp = run_import(session=session, request=request)
    except ImportRefused as refusal:
        refused = record_refusal(session=session, request=request, refusal=refusal)
        return DatasetImported(refused.id, f"import refused: {refusal.reason}")
    return DatasetImported(imp.id)
