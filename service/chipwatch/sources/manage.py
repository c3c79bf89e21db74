"""Changing and removing sources (``PATCH`` and ``DELETE /v1/sources/{id}``). Flushes; never commits.

Removing a source is what an analyst expects of a feed that is gone for good: it is no longer checked,
listed or exported, but nothing it brought in is lost. Its items stay (they are evidence of signals and
provenance of facts) and remain readable at ``/v1/items?source=<id>``; the source row stays too, with
``removed_at``, at ``/v1/sources/<id>`` and in ``/v1/sources?removed=true``. ``PATCH`` with
``{"enabled": true}`` brings it back; adding its URL or id again says so.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlmodel import Session

from chipwatch.config import Settings
from chipwatch.kit.time import as_utc, utcnow
from chipwatch.sources.check import is_feed
from chipwatch.sources.errors import (
    InvalidSource,
    InvalidSourceURL,
    SourceConflict,
    SourceNotFound,
    SourceRemoved,
)
from chipwatch.sources.models import Source
from chipwatch.sources.schemas import SourceUpdate
from chipwatch.sources.service import check_source_url, reference_problems, taken_message, url_taken

# Columns that describe what was fetched from the old address; a new URL starts without them.
_FETCH_STATE = ("etag", "last_modified", "last_body_sha256", "permanent_redirects", "redirect_target")


def _get(session: Session, source_id: str) -> Source:
    source = session.get(Source, source_id)
    if source is None:
        raise SourceNotFound(source_id)
    return source


def _new_url(session: Session, source: Source, url: str, settings: Settings) -> tuple[str | None, list]:
    """The checked new URL (None when unchanged) and its problems."""
    try:
        checked = check_source_url(url, settings=settings)
    except InvalidSourceURL as exc:
        return None, exc.problems
    if checked == source.url:
        return None, []
    taken = url_taken(session, checked, besides=source.id)
    if taken is not None:
        raise SourceConflict(taken_message(session, taken, f"already watches {checked}"))
    return checked, []


def _schedule(source: Source, changes: dict[str, Any], now: datetime) -> None:
    """When the next check is due after ``changes``: at once for a new URL or a source enabled again,
    else (a new fixed interval) that long after the last check."""
    if changes.get("enabled") is False:
        source.claimed_until = source.claimed_by = None  # a check in flight finishes; none is started
        return
    if "url" in changes or changes.get("enabled") is True:
        source.next_check_at = now
    elif "check_interval_s" in changes and changes["check_interval_s"] is not None:
        last = as_utc(source.last_checked_at)
        source.next_check_at = last + timedelta(seconds=changes["check_interval_s"]) if last else now


def update_source(
    *, session: Session, source_id: str, changes_in: SourceUpdate, settings: Settings
) -> Source:
    """Apply the fields set in ``changes_in`` to the source ``source_id``; returns the row.

    A new URL is checked as a new source's is and forgets what was fetched from the old one (validators,
    body digest, redirect count; a feed's kind is detected again); ``enabled: true`` on a removed source
    restores it. Raises :class:`~chipwatch.sources.errors.SourceNotFound`,
    :class:`~chipwatch.sources.errors.InvalidSource` listing every refused field,
    :class:`~chipwatch.sources.errors.SourceConflict` for a URL another source watches, and
    :class:`~chipwatch.sources.errors.SourceRemoved` for a change to a removed source that does not
    restore it.
    """
    source = _get(session, source_id)
    changes = changes_in.model_dump(exclude_unset=True)
    if source.removed_at is not None and changes.get("enabled") is not True:
        raise SourceRemoved(
            f"source {source_id!r} was removed at {source.removed_at.isoformat()}; "
            'include {"enabled": true} to restore it'
        )
    problems: list[tuple[str, str]] = []
    for field in ("url", "name", "trust", "enabled"):
        if field in changes and changes[field] is None:
            problems.append((field, "must not be null"))
    new_url = None
    if changes.get("url") is not None:
        new_url, url_problems = _new_url(session, source, changes["url"], settings)
        problems += url_problems
    problems += reference_problems(session=session, publisher_id=changes.get("publisher_id"))
    if problems:
        raise InvalidSource(problems)
    changes.pop("url", None)
    if new_url is not None:
        changes["url"] = new_url
        for column in _FETCH_STATE:
            setattr(source, column, Source.model_fields[column].default)
        if is_feed(source):
            source.kind = "unknown"
        source.url = new_url
    for field, value in changes.items():
        if field != "url":
            setattr(source, field, value)
    if changes.get("enabled") is True:
        source.removed_at = None
    _schedule(source, changes, utcnow())
    session.add(source)
    session.flush()
    return source


def remove_source(*, session: Session, source_id: str, now: datetime | None = None) -> Source:
    """Remove the source ``source_id`` from use (see the module): disabled, unclaimed, marked
    ``removed_at``; its items are kept. Returns the row. Raises
    :class:`~chipwatch.sources.errors.SourceNotFound` or :class:`~chipwatch.sources.errors.SourceRemoved`
    when it was removed already."""
    source = _get(session, source_id)
    if source.removed_at is not None:
        raise SourceRemoved(f"source {source_id!r} was removed at {source.removed_at.isoformat()}")
    source.removed_at = now or utcnow()
    source.enabled = False
    source.claimed_until = source.claimed_by = None
    source.next_check_at = None
    session.add(source)
    session.flush()
    return source


__all__ = ["remove_source", "update_source"]
