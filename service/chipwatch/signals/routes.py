"""Signal endpoints: the board, one signal with evidence, its history, definitions, analyst moves and
the Atom feed of transitions. Each validates, makes one service call and maps its errors."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from fastapi import APIRouter, Body, Depends, Path, Query, Request
from fastapi.responses import Response
from sqlmodel import Session

from chipwatch.db import session_scope
from chipwatch.kit.auth import AdminDep, require_reader
from chipwatch.kit.errors import ApiError, Conflict, NotFound
from chipwatch.kit.httpcache import cached_json, etag_response
from chipwatch.kit.pagination import CursorQ, LimitQ
from chipwatch.kit.sessions import ReadSession, WriteSession, acknowledged_write
from chipwatch.kit.validation import body_check
from chipwatch.signals import service
from chipwatch.signals.atom import ATOM_MEDIA_TYPE
from chipwatch.signals.schemas import (
    SignalHistoryPage,
    SignalNoteIn,
    SignalPage,
    SignalResolveIn,
    SignalWithEvidence,
)
from chipwatch.vocab.status import Outcome, Status

router = APIRouter(prefix="/v1", tags=["signals"], dependencies=[Depends(require_reader)])
SignalId = Path(..., max_length=64, description="signal id")
DefinitionBody = Body(
    ...,
    description="A signal definition (schema/signal.schema.json): id, question, opened_on, yes_when, and "
    "optionally review (default auto), subjects (default: the entities the conditions name), description, "
    "tags, deadline, on_deadline, require_fact, no_when.",
)
ChangesBody = Body(
    ..., description="Definition fields to change (any except id); the result is validated whole."
)
_NOT_FOUND = {404: {"description": "unknown id"}}
_MOVE_RESPONSES = {**_NOT_FOUND, 409: {"description": "the move is not allowed from the current status"}}


@contextmanager
def _problems(signal_id: str | None = None) -> Iterator[None]:
    """Map the signal service's errors to problem responses: 404, 409 and 422 naming the field."""
    try:
        yield
    except service.SignalNotFound as exc:
        raise NotFound("signal", signal_id or exc.signal_id) from exc
    except (service.TransitionNotAllowed, service.SignalExists) as exc:
        raise Conflict(str(exc)) from exc
    except service.DefinitionError as exc:
        errors = [{"field": field or "body", "message": message} for field, message in exc.problems]
        raise ApiError(422, "Unprocessable Content", str(exc), errors=errors) from exc


@router.get("/signals", response_model=SignalPage, responses={304: {"description": "ETag matched"}})
async def list_signals(
    request: Request,
    status: Status | None = Query(None, description="open | pending_review | resolved"),
    outcome: Outcome | None = Query(None, description="yes | no | annulled"),
    limit: int = LimitQ,
    cursor: str | None = CursorQ,
):
    """The signals board: each signal's status, outcome, version, deadline, known_at and watch health.

    Served from a cache that a write in this process invalidates at once; carries an ETag.
    """

    def build():
        with session_scope(write=False) as session:
            return service.list_signals(
                session=session, status=status, outcome=outcome, limit=limit, cursor=cursor
            )

    return await cached_json(request, build)


@router.get(
    "/signals.atom",
    response_class=Response,
    responses={
        200: {"content": {ATOM_MEDIA_TYPE: {"schema": {"type": "string"}}}, "description": "Atom 1.0 feed"},
        304: {"description": "ETag matched"},
        **_NOT_FOUND,
    },
)
def signals_feed(
    request: Request,
    signal: str | None = Query(None, max_length=64, description="only this signal's transitions"),
    limit: int = Query(50, ge=1, le=500, description="entries, newest first"),
    session: Session = ReadSession,
):
    """An Atom 1.0 feed of signal transitions, newest first; entry ids are stable per signal version."""
    with _problems():
        body = service.transitions_feed(
            session=session,
            signal_id=signal,
            limit=limit,
            api_base=str(request.base_url).rstrip("/"),
            self_url=str(request.url),
        )
    return etag_response(request.headers.get("if-none-match"), body, media_type=ATOM_MEDIA_TYPE)


def _definition_problems(session: Session, fields: dict[str, Any], request: Request) -> list[tuple[str, str]]:
    """The definition checks over a body's fields that passed the request layer (kit.validation)."""
    signal_id = request.path_params.get("signal_id")
    return service.definition_problems(session=session, document=fields, signal_id=signal_id)


@router.post(
    "/signals",
    response_model=SignalWithEvidence,
    status_code=201,
    dependencies=[AdminDep],
    responses={409: {"description": "the id is taken"}},
)
@body_check(_definition_problems)
def create_signal(
    response: Response,
    definition: dict[str, Any] = DefinitionBody,
    snapshot: Session = ReadSession,
):
    """Create a signal and evaluate it at once against stored items, facts and its deadline (admin).

    The answer is read after the write has committed (a failed commit is the error answer instead)."""
    with _problems():
        # Stored items are matched in a read snapshot; the write lock is held only for what follows,
        # and released before the answer, with every evidence row, is shaped.
        with acknowledged_write() as session:
            signal_id = service.store_signal(session=session, signal_in=definition, snapshot=snapshot)[0].id
        answer = _committed_signal(signal_id)
    response.headers["Location"] = f"/v1/signals/{signal_id}"
    return answer


def _committed_signal(signal_id: str) -> dict[str, Any]:
    with session_scope(write=False) as session:
        return service.get_signal(session=session, signal_id=signal_id)


@router.patch(
    "/signals/{signal_id}", response_model=SignalWithEvidence, dependencies=[AdminDep], responses=_NOT_FOUND
)
@body_check(_definition_problems)
def update_signal(
    signal_id: str = SignalId,
    changes: dict[str, Any] = ChangesBody,
    snapshot: Session = ReadSession,
):
    """Change a signal's definition fields and evaluate it again (admin); state and history stay.

    The answer is read after the write has committed, as for a new signal."""
    with _problems(signal_id):
        with acknowledged_write() as session:
            service.store_signal_changes(
                session=session, signal_id=signal_id, changes=changes, snapshot=snapshot
            )
        return _committed_signal(signal_id)


@router.get(
    "/signals/{signal_id}",
    response_model=SignalWithEvidence,
    responses={**_NOT_FOUND, 304: {"description": "ETag matched"}},
)
async def get_signal(request: Request, signal_id: str = SignalId):
    """One signal: definition, state, watched sources and every piece of evidence (oldest first).

    Served from the board's cache, which a write in this process invalidates at once; carries an ETag.
    """

    def build():
        with session_scope(write=False) as session:
            return service.get_signal(session=session, signal_id=signal_id)

    with _problems(signal_id):
        return await cached_json(request, build)


@router.get("/signals/{signal_id}/history", response_model=SignalHistoryPage, responses=_NOT_FOUND)
def get_history(signal_id: str = SignalId, session: Session = ReadSession):
    """Every transition of the signal (from, to, cause, note, evidence ids, known_at), oldest first."""
    with _problems(signal_id):
        return service.signal_history(session=session, signal_id=signal_id)


@router.post(
    "/signals/{signal_id}/resolve",
    response_model=SignalWithEvidence,
    dependencies=[AdminDep],
    responses=_MOVE_RESPONSES,
)
def resolve_signal(
    body: SignalResolveIn, signal_id: str = SignalId, session: Session = WriteSession
):
    """Resolve an open or pending-review signal with an outcome and a note (admin; cause ``manual``)."""
    with _problems(signal_id):
        return service.resolve_signal(
            session=session, signal_id=signal_id, outcome=body.outcome, note=body.note
        )


@router.post(
    "/signals/{signal_id}/reject",
    response_model=SignalWithEvidence,
    dependencies=[AdminDep],
    responses=_MOVE_RESPONSES,
)
def reject_signal(
    body: SignalNoteIn | None = None, signal_id: str = SignalId, session: Session = WriteSession
):
    """Reject the match a pending-review signal waits on: it returns to open (admin)."""
    with _problems(signal_id):
        return service.reject_signal(session=session, signal_id=signal_id, note=body.note if body else None)


@router.post(
    "/signals/{signal_id}/reopen",
    response_model=SignalWithEvidence,
    dependencies=[AdminDep],
    responses=_MOVE_RESPONSES,
)
def reopen_signal(
    body: SignalNoteIn | None = None, signal_id: str = SignalId, session: Session = WriteSession
):
    """Reopen a resolved signal: it returns to open and is watched again (admin)."""
    with _problems(signal_id):
        return service.reopen_signal(session=session, signal_id=signal_id, note=body.note if body else None)
