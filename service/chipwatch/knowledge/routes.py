"""Knowledge-base endpoints: list (filters, cursor pages), detail, create and patch for every kind.

The eight kinds share one shape, so their routes are built from a table of filters rather than written
eight times; each still gets its own typed parameters, models and docs in the OpenAPI schema.
"""

import inspect
from typing import Any

from fastapi import APIRouter, Depends, Path, Query
from sqlmodel import Session

from chipwatch.api import (
    AdminDep,
    Conflict,
    CursorQ,
    LimitQ,
    NotFound,
    Page,
    decode_cursor,
    encode_cursor,
    invalid,
    read_session,
    require_reader,
    write_session,
)
from chipwatch.knowledge import service
from chipwatch.knowledge.models import API_MODELS, SLUG, Verification
from chipwatch.knowledge.service import Filter

router = APIRouter(prefix="/v1", dependencies=[Depends(require_reader)])

_PROVENANCE = [
    Filter("verification", "verification", description="vendor_reported | witnessed | independent"),
    Filter("source", "source_id", description="source id the fact was read from"),
    Filter("reported_by", "reported_by", ref="vendors", description="vendor id that produced the figure"),
]
FILTERS: dict[str, list[Filter]] = {
    "vendors": [
        Filter("kind", "kinds", mode="kinds", description="e.g. chip_maker, model_lab, cloud"),
        Filter("country", "country", description="ISO 3166-1 alpha-2"),
        Filter("owner", "owner_id", ref="vendors", description="parent vendor id"),
    ],
    "chips": [
        Filter("vendor", "vendor_id", ref="vendors", description="vendor id"),
        Filter("kind", "kind", description="chip | system | soc | accelerator"),
        *_PROVENANCE,
    ],
    "models": [Filter("developer", "developer_id", ref="vendors", description="vendor id"), *_PROVENANCE],
    "benchmarks": [Filter("owner", "owner_id", ref="vendors", description="vendor id")],
    "results": [
        Filter("chip", "chip_ids", mode="contains", ref="chips", description="system under test"),
        Filter("baseline", "baseline_ids", mode="contains", ref="chips", description="baseline chip"),
        Filter("model", "model_ids", mode="contains", ref="models", description="model id"),
        Filter("benchmark", "benchmark_id", ref="benchmarks", description="benchmark id"),
        Filter("metric", "metric", description="e.g. single_user_output_speed, throughput_per_kw"),
        Filter("operating_point", "operating_point", description="peak | iso_interactivity | low_latency"),
        *_PROVENANCE,
    ],
    "funding-rounds": [
        Filter("vendor", "vendor_id", ref="vendors", description="company funded or bought"),
        Filter("round_type", "round_type", description="e.g. strategic, acquisition"),
        Filter("acquirer", "acquirer_id", ref="vendors", description="acquiring vendor id"),
        Filter("currency", "currency", description="ISO 4217 code"),
        *_PROVENANCE,
    ],
    "deployments": [
        Filter("chip", "chip_id", ref="chips", description="chip id"),
        Filter("operator", "operator_id", ref="vendors", description="operator vendor id"),
        Filter("status", "status", description="planned | pilot | volume"),
        *_PROVENANCE,
    ],
    "claims": [
        Filter("subject", "subject_ids", mode="contains", description="entity id the claim is about"),
        Filter("topic", "topic", description="e.g. price, margin, forecast"),
        *_PROVENANCE,
    ],
}
LABELS = {
    "vendors": "vendor",
    "chips": "chip or system",
    "models": "model",
    "benchmarks": "benchmark",
    "results": "benchmark result",
    "funding-rounds": "funding round or acquisition",
    "deployments": "deployment",
    "claims": "claim",
}


def _query_for(flt: Filter) -> tuple[Any, Any]:
    if flt.param == "verification":
        return Verification | None, Query(None, description=flt.description)
    if flt.ref is not None or flt.mode == "contains":
        return str | None, Query(None, pattern=SLUG, max_length=64, description=flt.description)
    return str | None, Query(None, max_length=200, description=flt.description)


def _add_list_route(kind: str) -> None:
    filters = FILTERS[kind]
    public = API_MODELS[kind][2]

    def list_endpoint(session: Session, limit: int, cursor: str | None, **params: Any):
        after = decode_cursor(cursor, str)
        if after is not None and not isinstance(after, str):
            raise invalid("cursor", "malformed cursor")
        try:
            rows, last = service.list_rows(
                session=session,
                kind=kind,
                filters=[(f, params.get(f.param)) for f in filters],
                limit=limit,
                after_id=after,
            )
        except service.UnknownReference as exc:
            raise invalid(exc.field, f"no {exc.kind} with id {exc.ref_id!r}") from exc
        except service.InvalidValue as exc:
            raise invalid(exc.field, exc.message) from exc
        return {"items": rows, "next_cursor": encode_cursor(last) if last else None}

    params = [
        inspect.Parameter(
            "session", inspect.Parameter.KEYWORD_ONLY, default=Depends(read_session), annotation=Session
        ),
        inspect.Parameter("limit", inspect.Parameter.KEYWORD_ONLY, default=LimitQ, annotation=int),
        inspect.Parameter("cursor", inspect.Parameter.KEYWORD_ONLY, default=CursorQ, annotation=str | None),
    ]
    for flt in filters:
        annotation, default = _query_for(flt)
        params.append(
            inspect.Parameter(
                flt.param, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
            )
        )
    list_endpoint.__signature__ = inspect.Signature(params)
    names = ", ".join(f"`{f.param}`" for f in filters)
    router.add_api_route(
        f"/{kind}",
        list_endpoint,
        methods=["GET"],
        response_model=Page[public],
        name=f"list_{kind.replace('-', '_')}",
        summary=f"List {LABELS[kind]}s",
        description=f"{LABELS[kind].capitalize()} rows ordered by id, `limit` per page; filters: {names}. "
        "A filter naming an unknown id answers 422.",
        tags=["knowledge"],
    )


def _add_item_routes(kind: str) -> None:
    create, update, public = API_MODELS[kind]
    label = LABELS[kind]
    tag = ["knowledge"]
    id_path = Path(..., max_length=64, description=f"{label} id")

    def get_endpoint(id: str = id_path, session: Session = Depends(read_session)):
        row = service.get_row(session=session, kind=kind, id_=id)
        if row is None:
            raise NotFound(label, id)
        return row

    def create_endpoint(body: create, session: Session = Depends(write_session)):  # type: ignore[valid-type]
        try:
            return service.create_row(session=session, kind=kind, row_in=body)
        except service.DuplicateId as exc:
            raise Conflict(str(exc)) from exc
        except service.UnknownReference as exc:
            raise invalid(exc.field, f"no {exc.kind} with id {exc.ref_id!r}") from exc
        except service.InvalidValue as exc:
            raise invalid(exc.field, exc.message) from exc

    def patch_endpoint(body: update, id: str = id_path, session: Session = Depends(write_session)):  # type: ignore[valid-type]
        row = service.get_row(session=session, kind=kind, id_=id)
        if row is None:
            raise NotFound(label, id)
        try:
            return service.update_row(session=session, kind=kind, row=row, changes_in=body)
        except service.UnknownReference as exc:
            raise invalid(exc.field, f"no {exc.kind} with id {exc.ref_id!r}") from exc
        except service.InvalidValue as exc:
            raise invalid(exc.field, exc.message) from exc

    slug = kind.replace("-", "_")
    router.add_api_route(
        f"/{kind}/{{id}}",
        get_endpoint,
        methods=["GET"],
        response_model=public,
        name=f"get_{slug}",
        summary=f"Get one {label} (404 problem when unknown)",
        tags=tag,
        responses={404: {"description": "unknown id (problem+json)"}},
    )
    router.add_api_route(
        f"/{kind}",
        create_endpoint,
        methods=["POST"],
        response_model=public,
        status_code=201,
        dependencies=[AdminDep],
        name=f"create_{slug}",
        summary=f"Add a {label} (admin; 409 on a taken id, 422 on an unknown reference)",
        tags=tag,
    )
    router.add_api_route(
        f"/{kind}/{{id}}",
        patch_endpoint,
        methods=["PATCH"],
        response_model=public,
        dependencies=[AdminDep],
        name=f"update_{slug}",
        summary=f"Change fields of a {label} (admin)",
        tags=tag,
    )


for _kind in FILTERS:
    _add_list_route(_kind)
    _add_item_routes(_kind)
