"""Helpers for the sources tests: feed documents, source rows, and a synchronous refresh."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from email.utils import format_datetime
from xml.sax.saxutils import escape

import pytest
from sqlalchemy import func, select

from chipwatch.config import Settings
from chipwatch.db import session_scope
from chipwatch.sources.fetch import make_client
from chipwatch.sources.models import Item, Source
from chipwatch.sources.service import CheckOutcome, refresh_source
from chipwatch.webhooks.models import Event


@pytest.fixture
def httpserver(httpserver_ipv4):
    """pytest-httpserver bound to 127.0.0.1 (the plugin's default host is "localhost")."""
    return httpserver_ipv4


@dataclass
class Entry:
    """One RSS item for :func:`rss`; None leaves the element out."""

    title: str
    guid: str | None = None
    link: str | None = None
    body: str | None = None
    date: datetime | None = None


def rss(entries: list[Entry], *, title: str = "Chip News", extra: str = "") -> bytes:
    """An RSS 2.0 document with ``entries`` (``extra`` goes into the channel, e.g. lastBuildDate)."""
    items = []
    for e in entries:
        parts = [f"<title>{escape(e.title)}</title>"]
        if e.guid is not None:
            parts.append(f'<guid isPermaLink="false">{escape(e.guid)}</guid>')
        if e.link is not None:
            parts.append(f"<link>{escape(e.link)}</link>")
        if e.body is not None:
            parts.append(f"<description>{escape(e.body)}</description>")
        if e.date is not None:
            parts.append(f"<pubDate>{format_datetime(e.date, usegmt=True)}</pubDate>")
        items.append("<item>" + "".join(parts) + "</item>")
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
        f"<title>{escape(title)}</title><link>https://news.example.com/</link>{extra}"
        + "".join(items)
        + "</channel></rss>"
    ).encode()


def add_source(source_id: str, url: str, **fields) -> None:
    """Insert a feed source row (kind ``unknown``, trust ``press`` unless given)."""
    values = {"name": source_id.replace("-", " ").title(), "kind": "unknown", "trust": "press", **fields}
    with session_scope() as session:
        session.add(Source(id=source_id, url=url, **values))


def refresh(source_id: str, settings: Settings | None = None) -> CheckOutcome:
    """Run :func:`refresh_source` to completion with a fresh shared client."""
    from chipwatch.config import get_settings

    cfg = settings or get_settings()

    async def go() -> CheckOutcome:
        async with make_client(cfg) as client:
            return await refresh_source(source_id, settings=cfg, client=client)

    return asyncio.run(go())


def source_row(source_id: str) -> Source:
    with session_scope(write=False) as session:
        return session.get(Source, source_id)


def items_of(source_id: str) -> list[Item]:
    with session_scope(write=False) as session:
        return list(session.scalars(select(Item).where(Item.source_id == source_id).order_by(Item.id)))


def item_count() -> int:
    with session_scope(write=False) as session:
        return session.scalar(select(func.count()).select_from(Item))


def health_events(source_id: str) -> list[dict]:
    with session_scope(write=False) as session:
        rows = session.scalars(
            select(Event)
            .where(Event.type == "source.health_changed", Event.source_id == source_id)
            .order_by(Event.id)
        )
        return [row.data for row in rows]


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A server that accepts TCP connections (via the listen backlog) but never answers."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/feed.xml"
    finally:
        sock.close()


@pytest.fixture
def closed_port_url() -> str:
    """A URL on a local port nothing listens on."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}/feed.xml"
