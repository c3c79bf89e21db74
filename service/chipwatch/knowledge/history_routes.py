"""Fact history endpoints: ``GET /v1/{kind}/{id}/history`` for every knowledge-base kind."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Path
from sqlmodel import Session

from chipwatch.kit.auth import require_reader
from chipwatch.kit.errors import NotFound
from chipwatch.kit.pagination import CursorQ, LimitQ, Page
from chipwatch.kit.sessions import ReadSession
from chipwatch.knowledge import history
from chipwatch.knowledge.models import KB_TABLES
from chipwatch.knowledge.routes import LABELS
from chipwatch.knowledge.schemas import FactChangePublic

router = APIRouter(prefix="/v1", dependencies=[Depends(require_reader)], tags=["knowledge"])


def _add_history_route(kind: str) -> None:
    def history_endpoint(
        id: str = Path(..., max_length=64, description=f"{kind} id"),
        limit: int = LimitQ,
        cursor: str | None = CursorQ,
        session: Session = ReadSession,
    ):
        try:
            return history.list_history(session=session, kind=kind, fact_id=id, cursor=cursor, limit=limit)
        except history.FactNotFound as exc:
            raise NotFound(LABELS[kind], exc.id_) from exc

    router.add_api_route(
        f"/{kind}/{{id}}/history",
        history_endpoint,
        methods=["GET"],
        response_model=Page[FactChangePublic],
        name=f"history_{kind.replace('-', '_')}",
        summary=f"History of one of the {kind}: every change, oldest first",
        description="Each entry is one field's old and new value (action `updated`) or a whole-fact "
        "action (`created`, `retired`, `restored`, `retracted`), with its cause (`seed`, `api`, "
        "`import` with the import id in `cause_ref`, `candidate`), actor and time (UTC). 404 when the "
        "id is unknown and has no history.",
    )


for _kind in KB_TABLES:
    _add_history_route(_kind)
