"""What each page reads, through the same domain services the JSON API calls (no SQL here).

Each function takes a keyword-only read ``session`` and returns plain data (dicts and lists) for
:mod:`chipwatch.pages.views`; none changes anything. Lists are read page by page with the services' own
keyset pagination, up to :data:`ROW_CAP` rows, so a page never holds an unbounded list.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from sqlmodel import Session

from chipwatch.candidates import service as candidates
from chipwatch.kit.pagination import MAX_LIMIT
from chipwatch.knowledge import service as knowledge
from chipwatch.race import leaderboard
from chipwatch.race import service as race
from chipwatch.signals import service as signals
from chipwatch.sources import service as sources
from chipwatch.webhooks import deliveries as webhook_deliveries
from chipwatch.webhooks import endpoints as webhook_endpoints

ROW_CAP = 5000
"""At most this many rows of one list are read for a page."""

LEADERBOARD_BENCHMARKS = ("mlperf-inference", "inferencex")
ENTITY_KINDS = ("chips", "vendors", "models", "benchmarks")
LATEST_DEPLOYMENTS = 8
DELIVERIES_PER_ENDPOINT = 20
LEADERBOARD_ENTRIES = 50
CANDIDATES_SHOWN = 100


class PageNotFound(LookupError):
    """The page's subject (``kind`` ``id_``) does not exist."""

    def __init__(self, kind: str, id_: str) -> None:
        super().__init__(f"no {kind} with id {id_!r}")
        self.kind, self.id_ = kind, id_


def _collect(
    fetch: Callable[[str | None], tuple[Iterable[Any], str | None]], cap: int = ROW_CAP
) -> list[Any]:
    """Every item of a paged list (``fetch(cursor) -> (items, next_cursor)``), up to ``cap``."""
    rows: list[Any] = []
    cursor: str | None = None
    while len(rows) < cap:
        items, cursor = fetch(cursor)
        rows.extend(items)
        if cursor is None:
            break
    return rows[:cap]


def _kb_rows(session: Session, kind: str, **values: Any) -> list[dict[str, Any]]:
    """Every current (not retired) ``kind`` row matching the list filters ``values``, as dicts."""
    if any(f.param == "retired" for f in knowledge.FILTERS[kind]):
        values.setdefault("retired", False)

    def fetch(cursor: str | None):
        page = knowledge.list_rows(session=session, kind=kind, values=values, cursor=cursor, limit=MAX_LIMIT)
        return page["items"], page["next_cursor"]

    return [dict(row) for row in _collect(fetch)]


def all_sources(*, session: Session) -> list[dict[str, Any]]:
    """Every source with its health fields, ordered by id."""

    def fetch(cursor: str | None):
        page = sources.list_sources(session=session, cursor=cursor, limit=MAX_LIMIT)
        return page.items, page.next_cursor

    return [row.model_dump() for row in _collect(fetch)]


def entity_names(
    *, session: Session, ids: Iterable[str | None], kinds: Iterable[str] = ENTITY_KINDS
) -> dict[str, str]:
    """Display names of the named entities among ``ids``, looked up in ``kinds`` in that order (one query
    per kind; narrow ``kinds`` when the kind is known)."""
    missing = {i for i in ids if i}
    names: dict[str, str] = {}
    for kind in kinds:
        if not missing:
            break
        found = knowledge.names_of(session=session, kind=kind, ids=missing)
        names |= found
        missing -= set(found)
    return names


_NAME_FIELDS = {
    "chips": ("chip_id", "platform", "chip_ids", "baseline_ids"),
    "models": ("model_ids",),
    "vendors": ("vendor_id", "reported_by", "witnessed_by", "reproduced_by", "operator_id", "acquirer_id"),
    "benchmarks": ("benchmark_id",),
}


def _names_by_field(session: Session, rows: Iterable[dict[str, Any]]) -> dict[str, str]:
    """Names of every entity the rows' reference fields name, each looked up in its own kind."""
    rows = list(rows)
    names: dict[str, str] = {}
    for kind, fields in _NAME_FIELDS.items():
        ids: set[str] = set()
        for row in rows:
            for field in fields:
                value = row.get(field)
                ids.update(value if isinstance(value, list) else [value] if value else [])
        names |= entity_names(session=session, ids=ids, kinds=(kind,))
    return names


def race_page(*, session: Session) -> dict[str, Any]:
    """The board (``race.build_race``), each signal's latest evidence, the latest deployments and every
    source, with the names of the chips, models and vendors they name."""
    board = race.build_race(session=session)
    latest = race.latest_deployments(session=session, limit=LATEST_DEPLOYMENTS)
    results, funding = board["headline_results"], board["latest_funding"]
    chips = {c for r in results for c in (*r["chips"], *r["baselines"])} | {d["chip_id"] for d in latest}
    models = {m for r in results for m in r["models"]}
    vendors = {f["vendor"] for f in funding} | {f["acquirer"] for f in funding}
    vendors |= {r[k] for r in results for k in ("reported_by", "witnessed_by", "reproduced_by")}
    vendors |= {d[k] for d in latest for k in ("operator_id", "reported_by", "witnessed_by", "reproduced_by")}
    names = entity_names(session=session, ids=chips, kinds=("chips",))
    names |= entity_names(session=session, ids=models, kinds=("models",))
    names |= entity_names(session=session, ids=vendors, kinds=("vendors",))
    return {
        "race": board,
        "evidence": signals.latest_evidence(session=session),
        "deployments": latest,
        "sources": all_sources(session=session),
        "names": names,
    }


def signal_page(
    *, session: Session, signal_id: str, condition_ids: Callable[[dict], set[str]]
) -> dict[str, Any]:
    """One signal with its evidence and history, and the names of the entities it names.

    Raises :class:`PageNotFound`.
    """
    try:
        detail = signals.get_signal(session=session, signal_id=signal_id)
    except signals.SignalNotFound as exc:
        raise PageNotFound("signal", signal_id) from exc
    history = signals.signal_history(session=session, signal_id=signal_id)["items"]
    ids = set(detail["subjects"])
    for cond in (*detail["yes_when"], *detail["no_when"]):
        ids |= condition_ids(cond)
    return {"signal": detail, "history": history, "names": entity_names(session=session, ids=ids)}


def _sources_by_id(session: Session, ids: Iterable[str | None]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for source_id in sorted({i for i in ids if i}):
        row = sources.get_source(session=session, source_id=source_id)
        if row is not None:
            found[source_id] = {"id": row.id, "name": row.name, "url": row.url, "trust": row.trust}
    return found


def chip_page(*, session: Session, chip_id: str) -> dict[str, Any]:
    """A chip with its results (as the system under test, and as a baseline), deployments, its vendor
    and the vendor's funding rounds, the sources they cite and the names of what they name.

    Raises :class:`PageNotFound`.
    """
    try:
        chip = knowledge.get_row(session=session, kind="chips", id_=chip_id).model_dump()
    except knowledge.RowNotFound as exc:
        raise PageNotFound("chip", chip_id) from exc
    results = _kb_rows(session, "results", chip=chip_id)
    as_baseline = _kb_rows(session, "results", baseline=chip_id)
    deployments = _kb_rows(session, "deployments", chip=chip_id)
    vendor = funding = None
    if chip["vendor_id"]:
        vendor = knowledge.get_row(session=session, kind="vendors", id_=chip["vendor_id"]).model_dump()
        funding = _kb_rows(session, "funding-rounds", vendor=chip["vendor_id"])
    rows = [chip, *results, *as_baseline, *deployments, *(funding or []), *([vendor] if vendor else [])]
    names = _names_by_field(session, rows)
    return {
        "chip": chip,
        "vendor": vendor,
        "results": results,
        "as_baseline": as_baseline,
        "deployments": deployments,
        "funding": funding or [],
        "sources": _sources_by_id(session, (r.get("source_id") for r in rows)),
        "names": names,
    }


def leaderboard_boards(*, session: Session) -> list[tuple[str, str, str | None, str]]:
    """Every leaderboard the results allow: ``(benchmark, model, scenario, metric)`` for each model
    (id, else the result's own model name), scenario and metric (stated, or derived at import) of a
    current single-chip result of the leaderboard benchmarks; comparisons against a baseline (unit
    ``x``) are left out."""
    boards: set[tuple[str, str, str | None, str]] = set()
    for benchmark in LEADERBOARD_BENCHMARKS:
        try:
            knowledge.get_row(session=session, kind="benchmarks", id_=benchmark)
        except knowledge.RowNotFound:
            continue
        for r in _kb_rows(session, "results", benchmark=benchmark):
            if r["unit"] == "x" or len(r["chip_ids"]) != 1:
                continue
            models = r["model_ids"] or ([r["model_label"]] if r["model_label"] else [])
            metrics = [r["metric"]] + [
                d["name"] for d in r["derived"] or [] if d.get("name") in leaderboard.DERIVED_METRICS
            ]
            boards |= {(benchmark, m, r["operating_point"], metric) for m in models for metric in metrics}
    return sorted(boards, key=lambda b: (b[0], b[1], b[2] or "", b[3]))


def leaderboard_page(
    *, session: Session, benchmark: str | None, model: str | None, scenario: str | None
) -> dict[str, Any]:
    """The leaderboards (``race.leaderboard.build_leaderboard``, the best result per chip) of every
    board :func:`leaderboard_boards` finds that matches the given benchmark, model and scenario, the
    choices of each filter, and the names of the chips, models and benchmarks they name."""
    found = leaderboard_boards(session=session)
    chosen = [
        b
        for b in found
        if (benchmark is None or b[0] == benchmark)
        and (model is None or b[1] == model)
        and (scenario is None or (b[2] or "") == scenario)
    ]
    boards = [
        leaderboard.build_leaderboard(
            session=session, benchmark=b, model=m, scenario=s, metric=metric, limit=LEADERBOARD_ENTRIES
        )
        for b, m, s, metric in chosen
    ]
    entries = [e for board in boards for e in board["entries"]]
    names = entity_names(session=session, ids={b for b, *_ in found}, kinds=("benchmarks",))
    names |= entity_names(session=session, ids={m for _b, m, *_ in found}, kinds=("models",))
    names |= entity_names(session=session, ids={e["chip"] for e in entries}, kinds=("chips",))
    vendors = {e["result"][k] for e in entries for k in ("reported_by", "witnessed_by")}
    names |= entity_names(session=session, ids=vendors, kinds=("vendors",))
    source_ids = (e["result"]["source_id"] for board in boards for e in board["entries"])
    return {
        "boards": boards,
        "choices": {
            "benchmark": sorted({b for b, _m, _s, _metric in found}),
            "model": sorted({m for _b, m, _s, _metric in found}),
            "scenario": sorted({s for _b, _m, s, _metric in found if s}),
        },
        "names": names,
        "sources": _sources_by_id(session, source_ids),
    }


def sources_page(*, session: Session) -> dict[str, Any]:
    """Every source with its health fields."""
    return {"sources": all_sources(session=session)}


def webhooks_page(*, session: Session) -> dict[str, Any]:
    """Every webhook endpoint with its latest deliveries (newest first, each with its attempts)."""

    def fetch(cursor: str | None):
        return webhook_endpoints.list_endpoints(session=session, cursor=cursor, limit=MAX_LIMIT)

    endpoints = []
    for endpoint in _collect(fetch):
        items, _next = webhook_deliveries.list_deliveries(
            session=session, endpoint_id=endpoint.id, status=None, cursor=None, limit=DELIVERIES_PER_ENDPOINT
        )
        endpoints.append(
            {
                "id": endpoint.id,
                "url": endpoint.url,
                "description": endpoint.description,
                "enabled": endpoint.enabled,
                "disabled_reason": endpoint.disabled_reason,
                "event_types": endpoint.event_types,
                "deliveries": items,
            }
        )
    return {"endpoints": endpoints}


def candidates_page(*, session: Session, status: str | None) -> dict[str, Any]:
    """Candidate facts read from the news (``candidates.service.list_candidates``), newest first, the
    first :data:`CANDIDATES_SHOWN` with ``status`` (None: any)."""
    page = candidates.list_candidates(
        session=session, status=status, kind=None, cursor=None, limit=CANDIDATES_SHOWN
    )
    return {"candidates": page["items"], "more": page["next_cursor"] is not None}
