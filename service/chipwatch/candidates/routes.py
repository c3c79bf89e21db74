"""Candidate endpoints: list and read candidates, accept (optionally with edits) or reject them. Each
validates, makes one service call and maps its errors."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from fastapi import APIRouter, Depends, Path, Query, Request
from sqlmodel import Session

from chipwatch.candidates import accept, service
from chipwatch.candidates.extract import FactKind
from chipwatch.candidates.models import Candidate, CandidateStatus
from chipwatch.candidates.schemas import CandidateAcceptIn, CandidatePage, CandidatePublic, CandidateRejectIn
from chipwatch.kit.auth import AdminDep, require_reader
from chipwatch.kit.errors import ApiError, Conflict, NotFound
from chipwatch.kit.pagination import CursorQ, LimitQ
from chipwatch.kit.sessions import ReadSession, WriteSession
from chipwatch.kit.validation import body_check
from chipwatch.knowledge.checks import Invalid

router = APIRouter(prefix="/v1", tags=["candidates"], dependencies=[Depends(require_reader)])
CandidateId = Path(..., ge=1, le=2**63 - 1, description="candidate id")
_NOT_FOUND = {404: {"description": "unknown id"}}
_DECIDE = {**_NOT_FOUND, 409: {"description": "the candidate was accepted or rejected already"}}


@contextmanager
def _problems(candidate_id: int) -> Iterator[None]:
    """The service's refusals as problems: 404 unknown candidate, 409 decided already, 422 naming the
    field of a bad edit."""
    try:
        yield
    except service.CandidateNotFound as exc:
        raise NotFound("candidate", str(candidate_id)) from exc
    except service.CandidateDecided as exc:
        raise Conflict(str(exc)) from exc
    except accept.InvalidEdit as exc:
        errors = [{"field": field, "message": message} for field, message in exc.problems]
        raise ApiError(422, "Unprocessable Content", str(exc), errors=errors) from exc
    except Invalid as exc:
        errors = [{"field": f"fact.{field}", "message": message} for field, message in exc.problems]
        raise ApiError(422, "Unprocessable Content", str(exc), errors=errors) from exc


@router.get("/candidates", response_model=CandidatePage)
def list_candidates(
    status: CandidateStatus | None = Query(None, description="pending | accepted | rejected"),
    kind: FactKind | None = Query(
        None, description="funding | acquisition | deployment | benchmark | launch"
    ),
    limit: int = LimitQ,
    cursor: str | None = CursorQ,
    session: Session = ReadSession,
):
    """Candidate facts read from news items, newest first: the proposed fact (by kind: ``funding``
    vendor_id/vendor_name, amount, currency, round_type, post_money_valuation; ``acquisition``
    acquirer_*, vendor_* (the target), amount, currency; ``deployment`` operator_*, chip_*, units,
    power_mw, status, place; ``benchmark`` chip_*, metric, value or value_min/value_max, unit, baseline_*,
    reported_by_*; ``launch`` vendor_*, chip_*, new), every item that carries it with the words it was
    read from, a confidence (0 to 1), the verification the sources' trust allows, and the knowledge-base
    fact it corroborates, if any."""
    return service.list_candidates(session=session, status=status, kind=kind, cursor=cursor, limit=limit)


@router.get("/candidates/{candidate_id}", response_model=CandidatePublic, responses=_NOT_FOUND)
def get_candidate(candidate_id: int = CandidateId, session: Session = ReadSession):
    """One candidate with its items (404 problem when unknown)."""
    with _problems(candidate_id):
        return service.candidate_view(session=session, candidate_id=candidate_id)


def _acceptance_check(session: Session, fields: dict[str, Any], request: Request) -> list[tuple[str, str]]:
    # The edits' problems, for a body the request layer refused elsewhere (a malformed fact_id...).
    try:
        candidate_id = int(request.path_params["candidate_id"])
    except (KeyError, ValueError):
        return []
    candidate = session.get(Candidate, candidate_id) if 1 <= candidate_id <= 2**63 - 1 else None
    fact = fields.get("fact")
    if candidate is None or candidate.status != "pending" or not isinstance(fact or {}, dict):
        return []
    verification = fields.get("verification")
    return accept.acceptance_problems(
        candidate, fact or {}, verification if isinstance(verification, str) else None, fields.get("alias_of")
    )


@body_check(_acceptance_check)
@router.post(
    "/candidates/{candidate_id}/accept",
    response_model=CandidatePublic,
    dependencies=[AdminDep],
    responses=_DECIDE,
)
def accept_candidate(
    body: CandidateAcceptIn | None = None, candidate_id: int = CandidateId, session: Session = WriteSession
):
    """Accept a pending candidate (admin): its fact enters the knowledge base with the items as
    provenance and the verification the sources allow (a corroboration adds them to the fact it matches;
    ``alias_of`` makes a launched name an alias of a known chip), recorded in fact history with cause
    ``candidate``. Optional edits correct fields first. 409 when decided already, 422 for a bad edit."""
    with _problems(candidate_id):
        return accept.accept_candidate(session=session, candidate_id=candidate_id, accept_in=body)


@router.post(
    "/candidates/{candidate_id}/reject",
    response_model=CandidatePublic,
    dependencies=[AdminDep],
    responses=_DECIDE,
)
def reject_candidate(
    body: CandidateRejectIn | None = None, candidate_id: int = CandidateId, session: Session = WriteSession
):
    """Reject a pending candidate for good (admin): the same fact read again joins it and is never
    proposed again. 409 when decided already."""
    with _problems(candidate_id):
        return service.reject_candidate(
            session=session, candidate_id=candidate_id, note=body.note if body else None
        )
