"""Problem details (RFC 9457): the one shape every API error leaves in."""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from pydantic import BaseModel
from sqlalchemy.exc import DataError
from starlette.exceptions import HTTPException as StarletteHTTPException

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
    """An error the API answers as problem+json with ``status``; ``extra`` members join the body."""

    def __init__(self, status: int, title: str, detail: str | None = None, **extra: Any) -> None:
        super().__init__(detail or title)
        self.status, self.title, self.detail, self.extra = status, title, detail, extra


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


def _status_title(status: int) -> str:
    return HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else "Error"


def install_error_handlers(app: FastAPI) -> None:
    """Every error leaves the API as application/problem+json (RFC 9457)."""

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError):
        return problem_response(exc.status, exc.title, exc.detail, request.url.path, **exc.extra)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException):
        detail = str(exc.detail) if exc.detail else None
        resp = problem_response(exc.status_code, _status_title(exc.status_code), detail, request.url.path)
        for k, v in (exc.headers or {}).items():
            resp.headers[k] = v
        return resp

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, exc: RequestValidationError):
        errors = []
        for err in exc.errors():
            loc = [str(p) for p in err.get("loc", ()) if p not in ("body", "query", "path", "header")]
            errors.append({"field": ".".join(loc) or str(err.get("loc")), "message": err.get("msg", "")})
        detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors)
        return problem_response(422, "Unprocessable Content", detail, request.url.path, errors=errors)

    @app.exception_handler(DataError)
    async def _data_error(request: Request, exc: DataError):
        # The database refused a value the models let through (PostgreSQL stores no NUL character in
        # text, for one); the transaction was rolled back, so nothing was written.
        reason = str(exc.orig).splitlines()[0] if exc.orig is not None else "value not storable"
        return problem_response(422, "Unprocessable Content", f"a value cannot be stored: {reason}",
                                request.url.path)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception):  # pragma: no cover - last resort
        log.exception("unhandled error on %s", request.url.path)
        return problem_response(
            500, "Internal Server Error", "unexpected error; see server logs", request.url.path
        )
