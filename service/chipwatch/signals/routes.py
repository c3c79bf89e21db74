"""Signal endpoints: the board, one signal with evidence, its history, definitions, analyst moves and
the Atom feed of transitions."""

from __future__ import annotations

import hashlib
from typing import Any

from fastapi import APIRouter, Body, Depends, Path, Query, Request
from fastapi.responses import Response
from sqlmodel import Session

from chipwatch.api import (
    AdminDep,
    Conflict,
    CursorQ,
    LimitQ,
    NotFound,
    cached_json,
    decode_cursor,
    encode_cursor,
    invalid,
    read_session,
    require_reader,
    write_session,
)
from chipwatch.db import session_scope
from chipwatch.signals import service
from chipwatch.signals.atom import ATOM_MEDIA_TYPE, FeedEntry, render_feed
from chipwatch.signals.models import Signal
from chipwatch.signals.schemas import (
    HistoryPage,
    NoteIn,
    Outcome,
    ResolveIn,
    SignalDetail,
    SignalPage,
    Status,
)

router = APIRouter(prefix="/v1", tags=["signals"], dependencies=[Depends(require_reader)])
SignalId = Path(..., max_length=64, description="signal id")
DefinitionBody = Body(
    ...,
    description="A signal definition (schema/signal.schema.json): id, question, opened_on, review, "
    "subjects, yes_when, and optionally description, tags, deadline, on_deadline, no_when.",
)
ChangesBody = Body(
    ..., description="Definition fields to change (any except id); the result is validated whole."
)
_NOT_FOUND = {404: {"description": "unknown id"}}
_MOVE_RESPONSES = {**_NOT_FOUND, 409: {"description": "the move is not allowed from the current status"}}


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
    after = decode_cursor(cursor, str)

    def build():
        with session_scope(write=False) as session:
            items, last = service.list_signals(
                session=session, status=status, outcome=outcome, limit=limit, after_id=after
            )
        return {"items": items, "next_cursor": encode_cursor(last) if last else None}

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
    session: Session = Depends(read_session),
):
    """An Atom 1.0 feed of signal transitions, newest first; entry ids are stable per signal version."""
    if signal is not None and session.get(Signal, signal) is None:
        raise NotFound("signal", signal)
    rows, updated = service.recent_transitions(session=session, limit=limit, signal_id=signal)
    entries = [
        FeedEntry(
            signal_id=h.signal_id,
            question=question,
            version=h.version,
            from_status=h.from_status,
            from_outcome=h.from_outcome,
            to_status=h.to_status,
            to_outcome=h.to_outcome,
            cause=h.cause,
            note=h.note,
            known_at=h.known_at,
            at=h.at,
            evidence_ids=h.evidence_ids,
        )
        for h, question in rows
    ]
    body = render_feed(
        entries,
        api_base=str(request.base_url).rstrip("/"),
        self_url=str(request.url),
        updated=updated,
        feed_id=f"tag:chipwatch,2026:signal/{signal}" if signal else "tag:chipwatch,2026:signals",
        title=f"chipwatch: transitions of {signal}" if signal else "chipwatch: signal transitions",
    )
    etag = '"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"'
    headers = {"ETag": etag, "Cache-Control": "no-cache"}
    inm = request.headers.get("if-none-match")
    if inm and etag in [t.strip() for t in inm.split(",")]:
        return Response(status_code=304, headers=headers)
    return Response(body, media_type=ATOM_MEDIA_TYPE, headers=headers)


@router.post(
    "/signals",
    response_model=SignalDetail,
    status_code=201,
    dependencies=[AdminDep],
    responses={409: {"description": "the id is taken"}},
)
def create_signal(
    response: Response, definition: dict[str, Any] = DefinitionBody, session: Session = Depends(write_session)
):
    """Create a signal and evaluate it at once against stored items, facts and its deadline (admin)."""
    try:
        signal, _report = service.create_signal(session=session, signal_in=definition)
    except service.DefinitionError as exc:
        raise invalid(exc.field or "body", exc.message) from exc
    except service.SignalExists as exc:
        raise Conflict(str(exc)) from exc
    response.headers["Location"] = f"/v1/signals/{signal.id}"
    return service.signal_detail(session=session, signal=signal)


@router.patch(
    "/signals/{signal_id}", response_model=SignalDetail, dependencies=[AdminDep], responses=_NOT_FOUND
)
def update_signal(
    signal_id: str = SignalId,
    changes: dict[str, Any] = ChangesBody,
    session: Session = Depends(write_session),
):
    """Change a signal's definition fields and evaluate it again (admin); state and history stay."""
    try:
        signal, _report = service.update_signal(session=session, signal_id=signal_id, changes=changes)
    except service.SignalNotFound as exc:
        raise NotFound("signal", signal_id) from exc
    except service.DefinitionError as exc:
        raise invalid(exc.field or "body", exc.message) from exc
    return service.signal_detail(session=session, signal=signal)


@router.get("/signals/{signal_id}", response_model=SignalDetail, responses=_NOT_FOUND)
def get_signal(signal_id: str = SignalId, session: Session = Depends(read_session)):
    """One signal: definition, state, watched sources and every piece of evidence (oldest first)."""
    signal = session.get(Signal, signal_id)
    if signal is None:
        raise NotFound("signal", signal_id)
    return service.signal_detail(session=session, signal=signal)


@router.get("/signals/{signal_id}/history", response_model=HistoryPage, responses=_NOT_FOUND)
def get_history(signal_id: str = SignalId, session: Session = Depends(read_session)):
    """Every transition of the signal (from, to, cause, note, evidence ids, known_at), oldest first."""
    if session.get(Signal, signal_id) is None:
        raise NotFound("signal", signal_id)
    return {"items": service.signal_history(session=session, signal_id=signal_id), "next_cursor": None}


def _move(session: Session, signal_id: str, act) -> dict[str, Any]:
    try:
        signal = act()
    except service.SignalNotFound as exc:
        raise NotFound("signal", signal_id) from exc
    except service.TransitionNotAllowed as exc:
        raise Conflict(str(exc)) from exc
    return service.signal_detail(session=session, signal=signal)


@router.post(
    "/signals/{signal_id}/resolve",
    response_model=SignalDetail,
    dependencies=[AdminDep],
    responses=_MOVE_RESPONSES,
)
def resolve_signal(body: ResolveIn, signal_id: str = SignalId, session: Session = Depends(write_session)):
    """Resolve an open or pending-review signal with an outcome and a note (admin; cause ``manual``)."""
    return _move(
        session,
        signal_id,
        lambda: service.resolve_signal(
            session=session, signal_id=signal_id, outcome=body.outcome, note=body.note
        ),
    )


@router.post(
    "/signals/{signal_id}/reject",
    response_model=SignalDetail,
    dependencies=[AdminDep],
    responses=_MOVE_RESPONSES,
)
def reject_signal(
    body: NoteIn | None = None, signal_id: str = SignalId, session: Session = Depends(write_session)
):
    """Reject the match a pending-review signal waits on: it returns to open (admin)."""
    note = body.note if body else None
    return _move(
        session, signal_id, lambda: service.reject_signal(session=session, signal_id=signal_id, note=note)
    )


@router.post(
    "/signals/{signal_id}/reopen",
    response_model=SignalDetail,
    dependencies=[AdminDep],
    responses=_MOVE_RESPONSES,
)
def reopen_signal(
    body: NoteIn | None = None, signal_id: str = SignalId, session: Session = Depends(write_session)
):
    """Reopen a resolved signal: it returns to open and is watched again (admin)."""
    note = body.note if body else None
    return _move(
        session, signal_id, lambda: service.reopen_signal(session=session, signal_id=signal_id, note=note)
    )
