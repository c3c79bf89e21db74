"""List answers written from column rows (kit.rows) are the bytes the pydantic models wrote before.

Each list route (items, every knowledge-base kind, the signal board) and the signal detail is read over
HTTP and compared byte for byte with the old serialisation: the ORM rows of the same ids validated into
the route's public model and written by pydantic, as FastAPI did with ``response_model``. The seeded
database is extended with generated rows that exercise the writers: null and sub-second times, unicode
and control characters, nested JSON, ranges, large and fractional floats, carriers of evidence.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, date, datetime, timedelta

import pytest
from pydantic import TypeAdapter
from sqlalchemy import select

from chipwatch.db import session_scope
from chipwatch.kit.pagination import Page
from chipwatch.kit.rows import dump_json, model_columns
from chipwatch.knowledge.models import KB_TABLES, Deployment, FundingRound, Result
from chipwatch.knowledge.schemas import API_MODELS
from chipwatch.signals import service as signals
from chipwatch.signals.models import Evidence, Signal
from chipwatch.signals.schemas import SignalPage, SignalWithEvidence
from chipwatch.sources.mentions import mentions_of
from chipwatch.sources.models import Item, ItemMention
from chipwatch.sources.schemas import ItemPublic
from chipwatch.sources.service import _item_view

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
ODD_TEXT = 'Jalapeño 推理 "quoted" \\ back\tslash\x01 \u2028 end'


def _generated_rows() -> None:
    """Items, facts and evidence whose values take every branch of the JSON writers."""
    with session_scope() as session:
        items = []
        for n in range(12):
            at = T0 + timedelta(minutes=n, microseconds=(n * 137_003) % 1_000_000)
            items.append(Item(
                source_id="36kr" if n % 2 else "nvidia-blog",
                guid=None if n % 3 == 0 else f"rows-{n}",
                link=None if n % 4 == 0 else f"https://rows.example/{n}",
                content_hash=hashlib.sha256(f"rows-{n}".encode()).hexdigest(),
                title=f"{ODD_TEXT} {n}",
                summary=None if n % 5 == 0 else f"summary {n} 兆瓦",
                author="Ann Author" if n % 2 else None,
                published_at=None if n % 6 == 0 else at,
                published_is_estimated=n % 6 == 0,
                published_precision="month" if n == 7 else None,
                published_reason="no date in the entry" if n % 6 == 0 else None,
                first_seen_at=at + timedelta(seconds=5),
                updated_at=at + timedelta(hours=1) if n % 3 == 1 else None,
            ))
        session.add_all(items)
        session.flush()
        for n, item in enumerate(items):
            for entity in ("jalapeno", "gb300")[: n % 3]:
                session.add(ItemMention(item_id=item.id, entity_id=entity, entity_kind="chip"))
        for n, value in enumerate((1e16, 0.1, 104.3, -0.0, 3.0, 1 / 3, None)):
            session.add(Result(
                id=f"rows-result-{n}", metric="throughput_per_kw", value=value,
                value_min=1.5 if value is None else None, value_max=1.9 if value is None else None,
                unit="x" if n % 2 else None, chip_ids=["jalapeno"], baseline_ids=["gb300"] if n % 2 else [],
                model_ids=[], interactivity_tok_s_user=None if n % 3 else 50.0, input_tokens=1024,
                speculative_decoding=None if n % 2 else True, headline=bool(n % 2),
                attributes={"note": ODD_TEXT, "nested": [[1, 2.5, None], {"k": [True, False]}]} if n else {},
                as_of=date(2026, 1, n + 1), as_of_precision="day",
            ))
        session.add(FundingRound(
            id="rows-round", vendor_id="groq", round_type="series", amount=230_000_000.0, currency="USD",
            announced_on=date(2026, 2, 1), source_id="36kr",
            attributes={"provenance_items": [{"source_id": "nvidia-blog", "item_id": 3}, {"x": 1}]},
        ))
        session.add(Deployment(id="rows-deployment", status="planned", capacity_mw=None, target_on=None))
        signal_id = session.scalars(select(Signal.id).order_by(Signal.id)).first()
        session.add(Evidence(
            signal_id=signal_id, ref_kind="item", ref_id=str(items[1].id), side="yes", condition_index=0,
            reason=ODD_TEXT, trust="press", source_id="36kr", title=items[1].title, url=items[1].link,
            published_at=items[1].published_at, recorded_at=T0 + timedelta(microseconds=1),
            sources=[
                {"source_id": "36kr", "item_id": items[1].id, "title": ODD_TEXT, "url": None,
                 "trust": "press", "published_at": "2026-03-01T12:01:00+00:00"},
                {"source_id": None, "item_id": None, "title": None, "url": None, "trust": None,
                 "published_at": None},
            ],
        ))


def _old_items_page(ids: list[int], next_cursor: str | None) -> bytes:
    """The pre-kit.rows answer of a page of items: ORM rows, a model per row, pydantic's writer."""
    with session_scope(write=False) as session:
        rows = {i.id: i for i in session.scalars(select(Item).where(Item.id.in_(ids)))}
        found = mentions_of(session=session, item_ids=ids)
        page = Page[ItemPublic](items=[_item_view(rows[i], found[i]) for i in ids], next_cursor=next_cursor)
    return TypeAdapter(Page[ItemPublic]).dump_json(page)


def _walk(client, path: str) -> list[tuple[dict, bytes]]:
    """Every page of a list (json, raw bytes) following next_cursor."""
    pages, cursor = [], None
    while True:
        sep = "&" if "?" in path else "?"
        r = client.get(path + (f"{sep}cursor={cursor}" if cursor else ""))
        assert r.status_code == 200, r.text
        assert r.headers["content-type"] == "application/json"
        pages.append((r.json(), r.content))
        cursor = r.json()["next_cursor"]
        if cursor is None:
            return pages


@pytest.mark.parametrize(
    "query", ["limit=5", "limit=3&mentions=jalapeno", "limit=4&source=36kr", "q=Jalape%C3%B1o&limit=5"]
)
def test_item_pages_are_the_bytes_the_model_wrote(client, query):
    _generated_rows()
    pages = _walk(client, f"/v1/items?{query}")
    assert sum(len(p["items"]) for p, _ in pages) >= 4
    for page, raw in pages:
        assert raw == _old_items_page([i["id"] for i in page["items"]], page["next_cursor"])


@pytest.mark.parametrize("kind", sorted(KB_TABLES))
def test_knowledge_pages_are_the_bytes_the_model_wrote(client, kind):
    _generated_rows()
    table, public = KB_TABLES[kind], API_MODELS[kind][2]
    adapter = TypeAdapter(Page[public])
    path = f"/v1/{kind}?limit=7" + ("&chip=jalapeno" if kind == "results" else "")
    pages = _walk(client, path)
    assert sum(len(p["items"]) for p, _ in pages) >= 2
    for page, raw in pages:
        ids = [row["id"] for row in page["items"]]
        with session_scope(write=False) as session:
            rows = {r.id: r for r in session.scalars(select(table).where(table.id.in_(ids)))}
            # What FastAPI did with the ORM rows a route returned under response_model=Page[public]
            old = adapter.validate_python(
                {"items": [rows[i].model_dump() for i in ids], "next_cursor": page["next_cursor"]}
            )
        assert raw == adapter.dump_json(old)
    if kind == "funding-rounds":
        [round_] = [r for p, _ in pages for r in p["items"] if r["id"] == "rows-round"]
        assert round_["sources"] == ["36kr", "nvidia-blog"]


def test_signal_board_and_details_are_the_bytes_the_model_wrote(client):
    _generated_rows()
    [(page, raw)] = _walk(client, "/v1/signals?limit=500")
    with session_scope(write=False) as session:
        assert raw == SignalPage.model_validate(page).model_dump_json().encode()
        assert len(page["items"]) == len(session.scalars(select(Signal.id)).all()) >= 2
        for summary in page["items"]:
            signal = session.get(Signal, summary["id"])
            # The model the write routes still answer with, built from ORM objects and validated
            old = signals.signal_detail(session=session, signal=signal)
            detail = client.get(f"/v1/signals/{signal.id}")
            assert detail.status_code == 200
            assert detail.content == old.model_dump_json().encode(), signal.id
    evidence = [e for s in page["items"] for e in client.get(f"/v1/signals/{s['id']}").json()["evidence"]]
    assert any(e["reason"] == ODD_TEXT and len(e["sources"]) == 2 for e in evidence)


def test_model_columns_follow_the_model_and_dump_json_writes_like_pydantic():
    columns = model_columns(Item, ItemPublic, skip=("mentions",))
    assert [c.key for c in columns] == [f for f in ItemPublic.model_fields if f != "mentions"]
    with pytest.raises(AttributeError):
        model_columns(Item, SignalWithEvidence)
    moments = [T0, T0.replace(microsecond=500), None, date(2026, 1, 2)]
    assert dump_json(moments) == TypeAdapter(list[datetime | date | None]).dump_json(moments)
    # beyond 64 bits orjson refuses; the fallback writes the same text the standard way
    assert dump_json({"n": 2**70, "at": T0, "s": "é"}) == (
        '{"n":1180591620717411303424,"at":"2026-03-01T12:00:00Z","s":"é"}'.encode()
    )
