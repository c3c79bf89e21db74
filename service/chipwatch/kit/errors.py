"""Problem details (RFC 9457): the one shape every API error leaves in.

Database failures become problems too: 409 when the data refuses a change, 503 with Retry-After when
the database is busy or out of reach (:func:`database_problem`); a write that cannot commit is answered
with one of these, never acknowledged.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from http import HTTPStatus
from typing import Any

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from pydantic import BaseModel
from sqlalchemy.exc import DataError, DBAPIError, IntegrityError
from starlette.exceptions import HTTPException as StarletteHTTPException

from chipwatch.kit.validation import more_problems

PROBLEM_JSON = "application/problem+json"
log = logging.getLogger("chipwatch.api")


class Problem(BaseModel):
    """RFC 9457 problem details; ``errors`` lists ``{"field", "message"}`` for a 422."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str | None = None
    instance: str | None = None
    errors: list[dict[str, Any]] | None = None


class ApiError(Exception):
    """An error the API answers as problem+json with ``status``; ``extra`` members join the body and
    ``headers`` (e.g. ``Retry-After``) the response."""

    def __init__(
        self,
        status: int,
        title: str,
        detail: str | None = None,
        *,
        headers: Mapping[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(detail or title)
        self.status, self.title, self.detail, self.extra = status, title, detail, extra
        self.headers = dict(headers or {})


class NotFound(ApiError):
    """404: no ``kind`` with id ``id_``."""

    def __init__(self, kind: str, id_: str) -> None:
        super().__init__(404, "Not Found", f"no {kind} with id {id_!r}")


class Conflict(ApiError):
    """409 with ``detail`` saying what conflicts."""

    def __init__(self, detail: str) -> None:
        super().__init__(409, "Conflict", detail)


def invalid(field: str, message: str) -> ApiError:
    """A 422 naming the offending field: ``errors: [{"field": field, "message": message}]``."""
    return ApiError(
        422, "Unprocessable Content", f"{field}: {message}", errors=[{"field": field, "message": message}]
    )


# ---------------------------------------------------------------- database failures
RETRY_AFTER_BUSY_S = 1
"""Advised wait after a lock timeout, deadlock or serialization failure: another writer held the rows."""
RETRY_AFTER_UNAVAILABLE_S = 5
"""Advised wait when the database cannot be reached or is shutting down."""

# PostgreSQL SQLSTATEs of a busy database: serialization failure, deadlock, lock not available,
# object in use.
_PG_BUSY = frozenset({"40001", "40P01", "55P03", "55006"})
# SQLSTATE classes of an unreachable or failing server: connection exception (08), insufficient
# resources (53), operator intervention such as admin or crash shutdown (57P), system error (58).
_PG_UNAVAILABLE_PREFIXES = ("08", "53", "57P", "58")
_SQLITE_BUSY = ("SQLITE_BUSY", "SQLITE_LOCKED")
_SQLITE_UNAVAILABLE = ("SQLITE_IOERR", "SQLITE_FULL", "SQLITE_CANTOPEN", "SQLITE_READONLY", "SQLITE_PROTOCOL")


def _reason(exc: DBAPIError) -> str:
    text = str(exc.orig if exc.orig is not None else exc).strip()
    return text.splitlines()[0].rstrip(".") if text else type(exc).__name__


def _transient_kind(exc: DBAPIError) -> str | None:
    """``"busy"``, ``"unavailable"`` or None (not a passing condition: a bug or bad data)."""
    orig = exc.orig
    sqlstate = getattr(orig, "sqlstate", None)
    if sqlstate:
        if sqlstate in _PG_BUSY:
            return "busy"
        return "unavailable" if sqlstate.startswith(_PG_UNAVAILABLE_PREFIXES) else None
    name = getattr(orig, "sqlite_errorname", None)
    if name:
        if name.startswith(_SQLITE_BUSY):
            return "busy"
        return "unavailable" if name.startswith(_SQLITE_UNAVAILABLE) else None
    # No code at all: the driver lost or never had a connection (psycopg's "connection refused").
    if exc.connection_invalidated or type(orig).__name__ in ("OperationalError", "InterfaceError"):
        return "unavailable"
    return None


def database_problem(exc: BaseException, *, writing: bool) -> ApiError | None:
    """The problem to answer for a database error, or None when it is not the client's or the
    moment's (a bug: let it be a 500).

    - an integrity violation (unique, foreign key, check, a constraint trigger at commit): 409;
    - a busy database (lock timeout, deadlock, serialization failure): 503, ``Retry-After: 1``;
    - an unreachable or failing database (connection lost, shutdown, disk full): 503,
      ``Retry-After: 5``.

    ``writing`` says the error ended a write transaction, so the answer states that nothing was saved.
    """
    if not isinstance(exc, DBAPIError):
        return None
    outcome = " The change was not saved." if writing else ""
    if isinstance(exc, IntegrityError):
        return ApiError(409, "Conflict", f"the stored data refuses this change: {_reason(exc)}.{outcome}")
    kind = _transient_kind(exc)
    if kind is None:
        return None
    if kind == "busy":
        detail, wait_s = "the database is busy (locked by another writer)", RETRY_AFTER_BUSY_S
    else:
        detail, wait_s = "the database is unavailable", RETRY_AFTER_UNAVAILABLE_S
    return ApiError(
        503,
        "Service Unavailable",
        f"{detail}; try again in {wait_s} s.{outcome}",
        headers={"Retry-After": str(wait_s)},
    )


def problem_response(
    status: int, title: str, detail: str | None, instance: str | None, **extra: Any
) -> Response:
    """An ``application/problem+json`` response; ``extra`` members (e.g. ``errors``) are added."""
    body: dict[str, Any] = {"type": "about:blank", "title": title, "status": status}
    if detail is not None:
        body["detail"] = detail
    if instance:
        body["instance"] = instance
    body.update({k: v for k, v in extra.items() if v is not None})
    return Response(orjson.dumps(body), status_code=status, media_type=PROBLEM_JSON)


ErrorPage = Callable[[Request, int, str, str | None, list[dict[str, Any]] | None], Response | None]
"""``(request, status, title, detail, errors) -> Response | None``: an HTML answer for an error on a page
meant for people, or None for the problem+json answer. Installed on ``app.state.error_page`` by the
pages package, so the kit knows nothing of templates."""


def _page_answer(
    request: Request, status: int, title: str, detail: str | None, errors: list[dict[str, Any]] | None = None
) -> Response | None:
    error_page: ErrorPage | None = getattr(request.app.state, "error_page", None)
    return error_page(request, status, title, detail, errors) if error_page is not None else None


def _status_title(status: int) -> str:
    return HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else "Error"


def install_error_handlers(app: FastAPI) -> None:
    """Every error leaves the API as application/problem+json (RFC 9457); a request validation error, a
    422 :class:`ApiError` or an HTTP error on a page for people is answered by ``app.state.error_page``
    when one is installed."""

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError):
        # A bad query the kit's own checks refuse (an unknown parameter) is on a page as it is from
        # FastAPI's validation: the error page for people.
        page = (
            _page_answer(request, exc.status, exc.title, exc.detail, exc.extra.get("errors"))
            if exc.status == 422 else None
        )
        resp = page or problem_response(exc.status, exc.title, exc.detail, request.url.path, **exc.extra)
        resp.headers.update(exc.headers)
        return resp

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException):
        if isinstance(exc.__cause__, RecursionError):
            # The JSON reader gave up on a body nested past the interpreter's recursion limit.
            message = "nested too deep to read (JSON bodies may nest 32 levels)"
            return problem_response(422, "Unprocessable Content", f"body: {message}", request.url.path,
                                    errors=[{"field": "body", "message": message}])
        if isinstance(exc.__cause__, UnicodeDecodeError):
            # JSON is UTF-8 (RFC 8259); the reader's own answer would be a bare "error parsing the body".
            message = f"not valid JSON: not UTF-8 at byte {exc.__cause__.start}"
            return problem_response(422, "Unprocessable Content", f"body: {message}", request.url.path,
                                    errors=[{"field": "body", "message": message}])
        detail = str(exc.detail) if exc.detail else None
        title = _status_title(exc.status_code)
        resp = _page_answer(request, exc.status_code, title, detail) or problem_response(
            exc.status_code, title, detail, request.url.path
        )
        for k, v in (exc.headers or {}).items():
            resp.headers[k] = v
        return resp

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError):
        errors = []
        for err in exc.errors():
            where = err.get("loc", ())
            if err.get("type") == "json_invalid":
                # The body is not JSON; its loc holds the character offset, which names no field.
                reason = (err.get("ctx") or {}).get("error", "")
                offset = where[-1] if len(where) > 1 else 0
                errors.append({"field": "body", "message": f"not valid JSON at character {offset}: {reason}"})
                continue
            loc = [str(p) for p in where if p not in ("body", "query", "path", "header")]
            # A whole-body error (loc ("body",)) names the body.
            field = ".".join(loc) or (str(where[0]) if where else "body")
            errors.append({"field": field, "message": err.get("msg", "")})
        # The route's own checks over the fields that passed, so one answer lists every problem.
        errors += await more_problems(request, exc.body, errors)
        detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors)
        return _page_answer(request, 422, "Unprocessable Content", detail, errors) or problem_response(
            422, "Unprocessable Content", detail, request.url.path, errors=errors
        )

    @app.exception_handler(DataError)
    async def _data_error(request: Request, exc: DataError):
        # The database refused a value the models let through (PostgreSQL stores no NUL character in
        # text, for one); the transaction was rolled back, so nothing was written.
        reason = str(exc.orig).splitlines()[0] if exc.orig is not None else "value not storable"
        # A read stores nothing: its value (an id in the path, a filter) cannot be looked up.
        what = "looked up" if request.method in ("GET", "HEAD") else "stored"
        return problem_response(422, "Unprocessable Content", f"a value cannot be {what}: {reason}",
                                request.url.path)

    @app.exception_handler(OverflowError)
    async def _overflow(request: Request, exc: OverflowError):
        # SQLite's driver refuses a whole number beyond 64 bits when binding it, before the database
        # sees it (PostgreSQL answers a DataError, above); nothing was written.
        log.warning("%s %s: %s", request.method, request.url.path, exc)
        what = "looked up" if request.method in ("GET", "HEAD") else "stored"
        return problem_response(422, "Unprocessable Content", f"a value cannot be {what}: {exc}",
                                request.url.path)

    @app.exception_handler(DBAPIError)
    async def _database_error(request: Request, exc: DBAPIError):
        # A write route's own session answers its commit failures; this covers the rest (reads, and
        # writes that run their transaction outside the request session).
        problem = database_problem(exc, writing=request.method not in ("GET", "HEAD", "OPTIONS"))
        if problem is None:
            return await _unexpected(request, exc)
        log.warning("%s %s: %s", request.method, request.url.path, problem.detail)
        return await _api_error(request, problem)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception):  # pragma: no cover - last resort
        log.exception("unhandled error on %s", request.url.path)
        return problem_response(
            500, "Internal Server Error", "unexpected error; see server logs", request.url.path
        )
