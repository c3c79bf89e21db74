"""Page routes: each reads through :mod:`chipwatch.pages.reads` (the domains' services), shapes the data
with :mod:`chipwatch.pages.views` and renders a template; admin actions call the same service functions
as the API's write routes, in a transaction committed before the answer (``WriteSession``).

Pages are open when the API's reads are; with ``CHIPWATCH_READ_TOKEN`` set, a browser exchanges the read
(or admin) token for a session at ``/login``. Admin actions need an admin session and the session's
CSRF token in the form.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, FastAPI, Form, Path, Query, Request
from fastapi.responses import RedirectResponse, Response
from sqlmodel import Session

from chipwatch.candidates import accept as candidate_accept
from chipwatch.candidates import service as candidate_service
from chipwatch.candidates.models import CandidateStatus
from chipwatch.config import get_settings
from chipwatch.db import session_scope
from chipwatch.kit.errors import ApiError
from chipwatch.kit.sessions import WriteSession
from chipwatch.knowledge.checks import Invalid
from chipwatch.pages import assets, reads, views, wording
from chipwatch.pages.login_limit import throttle_of
from chipwatch.pages.render import PageCacheMiddleware, html_response, page, render
from chipwatch.pages.session import (
    ANONYMOUS,
    Viewer,
    clear_session_cookie,
    csrf_ok,
    form_origin,
    may_view,
    new_session,
    role_for_token,
    same_origin,
    set_session_cookie,
    viewer_of,
)
from chipwatch.signals import service as signals
from chipwatch.vocab.status import Outcome
from chipwatch.webhooks import deliveries

router = APIRouter(include_in_schema=False)
SignalId = Path(..., max_length=64, description="signal id")
ChipId = Path(..., max_length=64, description="chip id")
NoteForm = Form(None, max_length=4000)


class PageError(Exception):
    """An error shown as a page (``status``, a title and what to do)."""

    def __init__(self, status: int, title: str, detail: str, *, back: str | None = None) -> None:
        super().__init__(detail)
        self.status, self.title, self.detail, self.back = status, title, detail, back


class LoginRequired(Exception):
    """The pages need a session (a read token is set); carries the page to return to."""

    def __init__(self, next_path: str) -> None:
        super().__init__(next_path)
        self.next_path = next_path


def page_viewer(request: Request) -> Viewer:
    """Request dependency: the viewer, or :class:`LoginRequired` when the pages are closed to them."""
    settings = get_settings()
    viewer = viewer_of(request, settings)
    if not may_view(request, settings, viewer):
        raise LoginRequired(request.url.path + (f"?{request.url.query}" if request.url.query else ""))
    return viewer


ViewerDep = Depends(page_viewer)


@dataclass(frozen=True, slots=True)
class AdminAction:
    """An admin's checked form post: the viewer and the form's fields."""

    viewer: Viewer
    fields: dict[str, Any]


async def admin_action(request: Request) -> AdminAction:
    """Request dependency of every admin action: an admin session, a same-origin request, and the
    session's CSRF token in the form (403 page otherwise)."""
    settings = get_settings()
    viewer = viewer_of(request, settings)
    if not viewer.is_admin:
        raise PageError(403, "Admins only", "Log in with the admin token to do this.", back="/login")
    form = await request.form()
    if not same_origin(request, settings.public_origins):
        # Reloading cannot help here: the page was served from another origin (another site, or this
        # service behind a proxy whose public origin is not configured).
        raise PageError(
            403,
            "Form from another site",
            f"The form was posted from {form_origin(request)!r}, not from this service, so it was "
            "refused. Behind a proxy that rewrites Host, list the public origin in CHIPWATCH_PUBLIC_ORIGINS.",
        )
    if not csrf_ok(viewer, form.get("csrf_token")):  # type: ignore[arg-type]
        raise PageError(
            403, "Form expired", "The form was not sent from this session; reload the page and try again."
        )
    return AdminAction(viewer=viewer, fields=dict(form))


AdminActionDep = Depends(admin_action)


def _safe_next(next_path: str | None) -> str:
    """Only a path on this service (not ``//host`` or a URL) is followed after login."""
    if not next_path or not next_path.startswith("/") or next_path.startswith("//") or "\\" in next_path:
        return "/"
    return next_path


# ---------------------------------------------------------------------------------------------- reads
@router.get("/")
async def race_page(request: Request, viewer: Viewer = ViewerDep) -> Response:
    """The race: signal board, headline results against their baselines, latest funding and deployments,
    source health."""

    def build(v: Viewer) -> bytes:
        with session_scope(write=False) as session:
            data = reads.race_page(session=session)
        sources = {s["id"]: s for s in data["sources"]}
        names = data["names"]
        race = data["race"]
        board = [{**s, "last_evidence": data["evidence"].get(s["id"])} for s in race["signals"]]
        headline = [views.result_row(r, sources, names, with_chip=True) for r in race["headline_results"]]
        return render(
            "race.html",
            v,
            counts=race["signal_counts"],
            board=board,
            headline=headline,
            charts=views.result_charts(
                race["headline_results"], sources, names, prefix="headline", with_chip=True
            ),
            funding=[views.funding_row(f, sources, names) for f in race["latest_funding"]],
            deployments=[views.deployment_row(d, sources, names) for d in data["deployments"]],
            health=views.source_health(data["sources"]),
        )

    return await page(request, viewer, build)


@router.get("/signals/{signal_id}")
async def signal_page(request: Request, signal_id: str = SignalId, viewer: Viewer = ViewerDep) -> Response:
    """One signal: its question, conditions in plain words, evidence, history, Atom link; admin moves."""

    def build(v: Viewer) -> bytes:
        with session_scope(write=False) as session:
            data = reads.signal_page(
                session=session, signal_id=signal_id, condition_ids=wording.condition_ids
            )
        signal, names = data["signal"], data["names"]
        return render(
            "signal.html",
            v,
            signal=signal,
            names=names,
            yes_when=[wording.describe_condition(c, names) for c in signal["yes_when"]],
            no_when=[wording.describe_condition(c, names) for c in signal["no_when"]],
            evidence=sorted(signal["evidence"], key=lambda e: e["id"], reverse=True),
            history=list(reversed(data["history"])),
        )

    with _not_found():
        return await page(request, viewer, build)


@router.get("/chips/{chip_id}")
async def chip_page(request: Request, chip_id: str = ChipId, viewer: Viewer = ViewerDep) -> Response:
    """One chip: specs with provenance, results against baselines as charts and a table, deployments,
    its vendor's funding."""

    def build(v: Viewer) -> bytes:
        with session_scope(write=False) as session:
            data = reads.chip_page(session=session, chip_id=chip_id)
        sources, names, chip = data["sources"], data["names"], data["chip"]
        return render(
            "chip.html",
            v,
            chip=chip,
            vendor=data["vendor"],
            names=names,
            prov=views.provenance(chip, sources, names),
            vendor_prov=views.provenance(data["vendor"], sources, names) if data["vendor"] else None,
            charts=views.result_charts(data["results"], sources, names, prefix="chip"),
            results=[views.result_row(r, sources, names) for r in data["results"]],
            as_baseline=[views.result_row(r, sources, names, with_chip=True) for r in data["as_baseline"]],
            deployments=[views.deployment_row(d, sources, names) for d in data["deployments"]],
            funding=[views.funding_row(f, sources, names) for f in data["funding"]],
        )

    with _not_found():
        return await page(request, viewer, build)


@router.get("/leaderboards")
async def leaderboards_page(
    request: Request,
    benchmark: str | None = Query(None, max_length=200, description="benchmark id, e.g. mlperf-inference"),
    model: str | None = Query(None, max_length=200, description="model id, or the model as results name it"),
    scenario: str | None = Query(None, max_length=64, description="scenario, e.g. offline"),
    viewer: Viewer = ViewerDep,
) -> Response:
    """MLPerf Inference and InferenceX results ranked per model and scenario: charts and sortable tables,
    filtered by benchmark, model and scenario."""

    selected = {"benchmark": benchmark or "", "model": model or "", "scenario": scenario or ""}

    def build(v: Viewer) -> bytes:
        with session_scope(write=False) as session:
            data = reads.leaderboard_page(
                session=session, benchmark=benchmark or None, model=model or None, scenario=scenario or None
            )
        return render(
            "leaderboards.html",
            v,
            boards=views.leaderboards(data["boards"], data["names"], data["sources"]),
            choices=data["choices"],
            names=data["names"],
            selected=selected,
            # A filter no imported result has would read as "nothing imported yet"; the page names it.
            unknown=[key for key, value in selected.items() if value and value not in data["choices"][key]],
        )

    return await page(request, viewer, build)


@router.get("/sources")
async def sources_page(
    request: Request,
    failing: bool = Query(False, description="only the sources whose last check failed"),
    viewer: Viewer = ViewerDep,
) -> Response:
    """Every source's health: state, last check, error, interval; ``failing=true`` keeps the failing ones."""

    def build(v: Viewer) -> bytes:
        with session_scope(write=False) as session:
            data = reads.sources_page(session=session)
        return render(
            "sources.html",
            v,
            failing=failing,
            health=views.source_health(data["sources"]),
            rows=views.source_rows(data["sources"], failing_only=failing),
        )

    return await page(request, viewer, build)


@router.get("/admin/webhooks")
async def webhooks_page(request: Request, viewer: Viewer = ViewerDep) -> Response:
    """Webhook endpoints and their latest deliveries, with a retry button for each (admin)."""
    if not viewer.is_admin:
        return RedirectResponse("/login?next=/admin/webhooks", status_code=303)

    def build(v: Viewer) -> bytes:
        with session_scope(write=False) as session:
            data = reads.webhooks_page(session=session)
        return render("webhooks.html", v, endpoints=data["endpoints"])

    return await page(request, viewer, build)


@router.get("/admin/candidates")
async def candidates_page(
    request: Request,
    status: CandidateStatus | None = Query("pending", description="pending | accepted | rejected"),
    viewer: Viewer = ViewerDep,
) -> Response:
    """Candidate facts read from the news, with their items and quotes; accept or reject each (admin)."""
    if not viewer.is_admin:
        return RedirectResponse("/login?next=/admin/candidates", status_code=303)

    def build(v: Viewer) -> bytes:
        with session_scope(write=False) as session:
            data = reads.candidates_page(session=session, status=status)
        return render("candidates.html", v, status=status, **data)

    return await page(request, viewer, build)


# ---------------------------------------------------------------------------------------------- sessions
@router.get("/login")
async def login_form(request: Request, next: str | None = Query(None, max_length=2000)) -> Response:
    """The login form: the admin token (or the read token) for a session cookie."""
    viewer = viewer_of(request, get_settings())
    return html_response(request, render("login.html", viewer, next=_safe_next(next), error=None))


@router.post("/login")
async def login(
    request: Request, token: str = Form("", max_length=500), next: str = Form("/", max_length=2000)
) -> Response:
    """Exchange the admin or read token for a signed session cookie and go to ``next``; the form again
    with 401 for a wrong token, 403 for a form posted from another origin (the token not looked at), and
    with 429 and Retry-After once this client address has failed
    ``CHIPWATCH_LOGIN_ATTEMPTS_PER_MINUTE`` times in the last minute (the token is then not looked at)."""
    settings = get_settings()
    throttle = throttle_of(request, settings.login_attempts_per_minute)
    wait_s = throttle.retry_after_s(request)
    if wait_s is not None:
        error = f"Too many failed attempts from this address: try again in {wait_s} s."
        body = render("login.html", ANONYMOUS, next=_safe_next(next), error=error)
        response = html_response(request, body, status_code=429)
        response.headers["Retry-After"] = str(wait_s)
        return response
    if not same_origin(request, settings.public_origins):
        # The token is not looked at; saying "not valid" would send an admin behind a misconfigured
        # proxy after a token that is fine.
        throttle.failed(request)
        error = (f"This form was posted from {form_origin(request)!r}, not from this service. "
                 "Behind a proxy that rewrites Host, list the public origin in CHIPWATCH_PUBLIC_ORIGINS.")
        body = render("login.html", ANONYMOUS, next=_safe_next(next), error=error)
        return html_response(request, body, status_code=403)
    role = role_for_token(settings, token)
    if role is None:
        throttle.failed(request)
        body = render("login.html", ANONYMOUS, next=_safe_next(next), error="That token is not valid here.")
        return html_response(request, body, status_code=401)
    value, _viewer = new_session(settings, role)
    response = RedirectResponse(_safe_next(next), status_code=303)
    set_session_cookie(response, request, value)
    return response


@router.post("/logout")
async def logout(request: Request, csrf_token: str | None = Form(None, max_length=200)) -> Response:
    """End the session (the form carries the CSRF token) and go to the race page."""
    settings = get_settings()
    viewer = viewer_of(request, settings)
    posted_here = same_origin(request, settings.public_origins) and csrf_ok(viewer, csrf_token)
    if viewer.role is not None and not posted_here:
        raise PageError(403, "Form expired", "Reload the page and try again.")
    response = RedirectResponse("/", status_code=303)
    clear_session_cookie(response, request)
    return response


# ---------------------------------------------------------------------------------------------- admin actions
@contextmanager
def _moves(signal_id: str) -> Iterator[None]:
    back = f"/signals/{quote(signal_id)}"
    try:
        yield
    except signals.SignalNotFound as exc:
        raise PageError(404, "No such signal", f"There is no signal {signal_id!r}.", back="/") from exc
    except signals.TransitionNotAllowed as exc:
        raise PageError(409, "Not allowed now", str(exc), back=back) from exc


@contextmanager
def _not_found() -> Iterator[None]:
    try:
        yield
    except reads.PageNotFound as exc:
        raise PageError(404, f"No such {exc.kind}", f"There is no {exc.kind} {exc.id_!r}.", back="/") from exc


@router.post("/signals/{signal_id}/resolve")
def resolve_signal(
    signal_id: str = SignalId,
    outcome: Outcome = Form(...),
    note: str | None = NoteForm,
    action: AdminAction = AdminActionDep,
    session: Session = WriteSession,
) -> Response:
    """Resolve a signal with an outcome (admin; the API's ``POST /v1/signals/{id}/resolve``)."""
    with _moves(signal_id):
        signals.resolve_signal(session=session, signal_id=signal_id, outcome=outcome, note=note or None)
    return RedirectResponse(f"/signals/{quote(signal_id)}", status_code=303)


@router.post("/signals/{signal_id}/reject")
def reject_signal(
    signal_id: str = SignalId,
    note: str | None = NoteForm,
    action: AdminAction = AdminActionDep,
    session: Session = WriteSession,
) -> Response:
    """Reject the match a pending signal waits on (admin; the API's ``POST /v1/signals/{id}/reject``)."""
    with _moves(signal_id):
        signals.reject_signal(session=session, signal_id=signal_id, note=note or None)
    return RedirectResponse(f"/signals/{quote(signal_id)}", status_code=303)


@router.post("/signals/{signal_id}/reopen")
def reopen_signal(
    signal_id: str = SignalId,
    note: str | None = NoteForm,
    action: AdminAction = AdminActionDep,
    session: Session = WriteSession,
) -> Response:
    """Reopen a resolved signal (admin; the API's ``POST /v1/signals/{id}/reopen``)."""
    with _moves(signal_id):
        signals.reopen_signal(session=session, signal_id=signal_id, note=note or None)
    return RedirectResponse(f"/signals/{quote(signal_id)}", status_code=303)


@router.post("/admin/webhooks/{webhook_id}/deliveries/{delivery_id}/retry")
def retry_delivery(
    webhook_id: str = Path(..., max_length=64),
    delivery_id: int = Path(..., ge=1, le=2**63 - 1),
    action: AdminAction = AdminActionDep,
    session: Session = WriteSession,
) -> Response:
    """Queue a delivery for an attempt now (admin; the API's
    ``POST /v1/webhooks/{id}/deliveries/{delivery_id}/retry``)."""
    try:
        deliveries.retry_delivery(session=session, endpoint_id=webhook_id, delivery_id=delivery_id)
    except ApiError as exc:
        raise PageError(exc.status, exc.title, exc.detail or exc.title, back="/admin/webhooks") from exc
    return RedirectResponse(f"/admin/webhooks#delivery-{delivery_id}", status_code=303)


@contextmanager
def _decisions(candidate_id: int) -> Iterator[None]:
    back = "/admin/candidates"
    try:
        yield
    except candidate_service.CandidateNotFound as exc:
        raise PageError(
            404, "No such candidate", f"There is no candidate {candidate_id}.", back=back
        ) from exc
    except candidate_service.CandidateDecided as exc:
        raise PageError(409, "Decided already", str(exc), back=back) from exc
    except (candidate_accept.InvalidEdit, Invalid) as exc:
        raise PageError(422, "Not accepted", str(exc), back=back) from exc


@router.post("/admin/candidates/{candidate_id}/accept")
def accept_candidate(
    candidate_id: int = Path(..., ge=1, le=2**63 - 1),
    action: AdminAction = AdminActionDep,
    session: Session = WriteSession,
) -> Response:
    """Accept a candidate as proposed (admin; the API's ``POST /v1/candidates/{id}/accept`` without edits)."""
    with _decisions(candidate_id):
        candidate_accept.accept_candidate(session=session, candidate_id=candidate_id)
    return RedirectResponse(f"/admin/candidates#candidate-{candidate_id}", status_code=303)


@router.post("/admin/candidates/{candidate_id}/reject")
def reject_candidate(
    candidate_id: int = Path(..., ge=1, le=2**63 - 1),
    note: str | None = NoteForm,
    action: AdminAction = AdminActionDep,
    session: Session = WriteSession,
) -> Response:
    """Reject a candidate for good (admin; the API's ``POST /v1/candidates/{id}/reject``)."""
    with _decisions(candidate_id):
        candidate_service.reject_candidate(session=session, candidate_id=candidate_id, note=note or None)
    return RedirectResponse(f"/admin/candidates#candidate-{candidate_id}", status_code=303)


# ---------------------------------------------------------------------------------------------- wiring
# include_router copies each route, so a page route is known by its path template, not its object.
_PAGE_PATHS = frozenset(route.path for route in router.routes)


def _for_people(request: Request) -> bool:
    """A page route, or a path no route serves that a browser asked for outside the API (``/v1/``)."""
    route = request.scope.get("route")
    if route is not None:
        return getattr(route, "path", None) in _PAGE_PATHS
    return not request.url.path.startswith("/v1/") and "text/html" in request.headers.get("accept", "")


def _error_page(
    request: Request, status: int, title: str, detail: str | None, errors: list[dict[str, Any]] | None
) -> Response | None:
    """The kit's error hook (:data:`chipwatch.kit.errors.ErrorPage`): a bad query or form on a page, or an
    unknown page, is shown as the error page (its fields listed) rather than as problem+json."""
    if not _for_people(request):
        return None
    if errors:
        detail = "Check " + "; ".join(f"{e['field']}: {e['message']}" for e in errors) + "."
    viewer = viewer_of(request, get_settings())
    body = render("error.html", viewer, status=status, title=title, detail=detail or title, back="/")
    return html_response(request, body, status_code=status)


def install(app: FastAPI) -> None:
    """Add the pages, their static assets and their error pages to ``app``."""
    assets.mount_static(app)
    app.include_router(router)
    app.add_middleware(PageCacheMiddleware)

    app.state.error_page = _error_page

    @app.exception_handler(PageError)
    async def _page_error(request: Request, exc: PageError) -> Response:
        viewer = viewer_of(request, get_settings())
        body = render(
            "error.html", viewer, status=exc.status, title=exc.title, detail=exc.detail, back=exc.back
        )
        return html_response(request, body, status_code=exc.status)

    @app.exception_handler(LoginRequired)
    async def _login_required(request: Request, exc: LoginRequired) -> Response:
        return RedirectResponse(f"/login?next={quote(exc.next_path, safe='/')}", status_code=303)
