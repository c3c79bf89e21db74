"""Signal endpoints: the board, one signal with evidence, and its history."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Path, Query, Request
from sqlmodel import Session

from chipwatch.api import (
    CursorQ,
    LimitQ,
    NotFound,
    cached_json,
    decode_cursor,
    encode_cursor,
    read_session,
    require_reader,
)
from chipwatch.db import session_scope
from chipwatch.signals import service
from chipwatch.signals.models import Signal
from chipwatch.signals.schemas import HistoryPage, Outcome, SignalDetail, SignalPage, Status

router = APIRouter(prefix="/v1", tags=["signals"], dependencies=[Depends(require_reader)])
SignalId = Path(..., max_length=64, description="signal id")


@router.get("/signals", response_model=SignalPage, responses={304: {"description": "ETag matched"}})
def list_signals(
    request: Request,
    status: Status | None = Query(None, description="open | pending_review | resolved"),
    outcome: Outcome | None = Query(None, description="yes | no | annulled"),
    limit: int = LimitQ,
    cursor: str | None = CursorQ,
):
    """The signals board: each signal's status, outcome, version, deadline, known_at and watch health.

    Served from a cache that a write in this process invalidates at once; carries an ETag.
    """
    after = decode_cursor(cursor)

    def build():
        with session_scope(write=False) as session:
            items, last = service.list_signals(
                session=session, status=status, outcome=outcome, limit=limit, after_id=after
            )
        return {"items": items, "next_cursor": encode_cursor(last) if last else None}

    return cached_json(request, f"signals?{status}&{outcome}&{limit}&{cursor}", build)


@router.get(
    "/signals/{signal_id}", response_model=SignalDetail, responses={404: {"description": "unknown id"}}
)
def get_signal(signal_id: str = SignalId, session: Session = Depends(read_session)):
    """One signal: definition, state, watched sources and every piece of evidence (oldest first)."""
    signal = session.get(Signal, signal_id)
    if signal is None:
        raise NotFound("signal", signal_id)
    return service.signal_detail(session=session, signal=signal)


@router.get(
    "/signals/{signal_id}/history", response_model=HistoryPage, responses={404: {"description": "unknown id"}}
)
def get_history(signal_id: str = SignalId, session: Session = Depends(read_session)):
    """Every transition of the signal (from, to, cause, note, evidence ids, known_at), oldest first."""
    if session.get(Signal, signal_id) is None:
        raise NotFound("signal", signal_id)
    return {"items": service.signal_history(session=session, signal_id=signal_id), "next_cursor": None}
