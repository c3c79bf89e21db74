"""Knowledge-base endpoints: list (filters, cursor pages), detail, create, patch, retract (DELETE) and
restore for every kind.

The eight kinds share one shape, so their routes are built from the service's table of filters rather
than written eight times; each still gets its own typed parameters, models and docs in the OpenAPI
schema.
"""

import inspect
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from typing import Any

from fastapi import APIRouter, Depends, Path, Query, Request
from sqlmodel import Session

from chipwatch.kit.auth import AdminDep, require_reader
from chipwatch.kit.errors import ApiError, Conflict, NotFound
from chipwatch.kit.pagination import CursorQ, LimitQ, Page
from chipwatch.kit.query import choice
from chipwatch.kit.rows import json_response
from chipwatch.kit.sessions import ReadSession, WriteSession
from chipwatch.kit.validation import body_check
from chipwatch.knowledge import checks, retraction, service
from chipwatch.knowledge.checks import Invalid
from chipwatch.knowledge.schemas import API_MODELS
from chipwatch.knowledge.service import FILTERS, Filter
from chipwatch.vocab.slugs import SLUG, SLUG_MAX_LENGTH
from chipwatch.vocab.verification import Verification

router = APIRouter(prefix="/v1", dependencies=[Depends(require_reader)])

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


@contextmanager
def _problems(kind: str) -> Iterator[None]:
    """Service refusals as problems: 404 unknown row; 409 taken id, a change to a retracted fact, a
    retraction that is done already or still referenced; 422 listing every bad reference or value."""
    try:
        yield
    except service.RowNotFound as exc:
        raise NotFound(LABELS[kind], exc.id_) from exc
    except (service.DuplicateId, service.FactRetracted, retraction.AlreadyRetracted, retraction.NotRetracted,
            retraction.StillReferenced) as exc:
        raise Conflict(str(exc)) from exc
    except Invalid as exc:
        errors = [{"field": field, "message": message} for field, message in exc.problems]
        raise ApiError(422, "Unprocessable Content", str(exc), errors=errors) from exc


RetractedQ = Query(
    False,
    description="true: only the facts an analyst retracted (each with retracted_at and retraction_reason); "
    "default false: the facts in force",
)
ReasonQ = Query(None, max_length=retraction.MAX_REASON_CHARS, description="why the fact is withdrawn")


def _query_for(flt: Filter) -> tuple[Any, Any]:
    if flt.mode == "retired":
        return bool, Query(False, description=flt.description)
    if flt.mode == "gte":
        return float | None, Query(None, ge=0, description=flt.description)
    if flt.mode == "after":
        return date | None, Query(None, description=flt.description)
    if flt.param == "verification":
        return Verification | None, Query(None, description=flt.description)
    if flt.choices:
        return choice(flt.choices) | None, Query(None, description=flt.description)
    if flt.ref is not None or flt.mode == "contains":
        return str | None, Query(None, pattern=SLUG, max_length=SLUG_MAX_LENGTH, description=flt.description)
    return str | None, Query(None, max_length=200, description=flt.description)


def _add_list_route(kind: str) -> None:
    filters = FILTERS[kind]
    public = API_MODELS[kind][2]

    def list_endpoint(session: Session, limit: int, cursor: str | None, retracted: bool, **params: Any):
        with _problems(kind):
            page = service.list_rows(
                session=session, kind=kind, values=params, cursor=cursor, limit=limit, retracted=retracted
            )
        # Written from the rows as they are (the model's bytes, kit.rows): no model validated per row.
        return json_response(page)

    params = [
        inspect.Parameter(
            "session", inspect.Parameter.KEYWORD_ONLY, default=ReadSession, annotation=Session
        ),
        inspect.Parameter("limit", inspect.Parameter.KEYWORD_ONLY, default=LimitQ, annotation=int),
        inspect.Parameter("cursor", inspect.Parameter.KEYWORD_ONLY, default=CursorQ, annotation=str | None),
        inspect.Parameter("retracted", inspect.Parameter.KEYWORD_ONLY, default=RetractedQ, annotation=bool),
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

    def get_endpoint(id: str = id_path, session: Session = ReadSession):
        with _problems(kind):
            return service.get_row(session=session, kind=kind, id_=id)

    def field_problems(session: Session, fields: dict[str, Any], request: Request) -> list[tuple[str, str]]:
        # The service's checks over a body's fields that passed the request layer (kit.validation).
        row_id = request.path_params.get("id")
        return checks.field_problems(session=session, kind=kind, fields=fields, row_id=row_id)

    @body_check(field_problems)
    def create_endpoint(body: create, session: Session = WriteSession):  # type: ignore[valid-type]
        with _problems(kind):
            return service.create_row(session=session, kind=kind, row_in=body)

    @body_check(field_problems)
    def patch_endpoint(body: update, id: str = id_path, session: Session = WriteSession):  # type: ignore[valid-type]
        with _problems(kind):
            return service.update_row(session=session, kind=kind, id_=id, changes_in=body)

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


def _add_retraction_routes(kind: str) -> None:
    public = API_MODELS[kind][2]
    label = LABELS[kind]
    id_path = Path(..., max_length=64, description=f"{label} id")

    def delete_endpoint(id: str = id_path, reason: str | None = ReasonQ, session: Session = WriteSession):
        with _problems(kind):
            return retraction.retract_row(session=session, kind=kind, id_=id, reason=reason)

    def restore_endpoint(id: str = id_path, session: Session = WriteSession):
        with _problems(kind):
            return retraction.restore_row(session=session, kind=kind, id_=id)

    slug = kind.replace("-", "_")
    router.add_api_route(
        f"/{kind}/{{id}}",
        delete_endpoint,
        methods=["DELETE"],
        response_model=public,
        dependencies=[AdminDep],
        name=f"retract_{slug}",
        summary=f"Retract a {label} (admin): kept with retracted_at and the reason, never deleted",
        description="The row leaves the lists (see them with `?retracted=true`) and the matchers; its "
        "history records the retraction with its cause and a `fact.changed` event announces it; a signal "
        "whose status rests on it alone is re-evaluated. 409 when already retracted, or when facts in "
        "force still name it (they are listed). Undo with `POST .../restore`.",
        tags=["knowledge"],
    )
    router.add_api_route(
        f"/{kind}/{{id}}/restore",
        restore_endpoint,
        methods=["POST"],
        response_model=public,
        dependencies=[AdminDep],
        name=f"restore_{slug}",
        summary=f"Put a retracted {label} back in force (admin; 409 when it is not retracted)",
        tags=["knowledge"],
    )


for _kind in FILTERS:
    _add_list_route(_kind)
    _add_item_routes(_kind)
    _add_retraction_routes(_kind)
