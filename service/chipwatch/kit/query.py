"""Query parameters a route does not declare are refused, not ignored.

A misspelt filter (``/v1/items?sorce=x``) silently ignored answers the unfiltered list, which looks like
a correct answer; a 422 naming the parameter (with the closest declared one) says what went wrong.
"""

from __future__ import annotations

import threading

from fastapi import Request

from chipwatch.kit.errors import ApiError
from chipwatch.kit.schema_errors import suggest

_declared: dict[int, frozenset[str]] = {}
_lock = threading.Lock()


def _query_names(dependant: object) -> set[str]:
    names = {param.alias for param in getattr(dependant, "query_params", ())}
    for sub in getattr(dependant, "dependencies", ()):
        names |= _query_names(sub)
    return names


def declared_query_names(route: object) -> frozenset[str]:
    """The query parameter names (aliases) ``route`` and its dependencies declare (cached per route)."""
    key = id(route)
    with _lock:
        names = _declared.get(key)
    if names is None:
        names = frozenset(_query_names(getattr(route, "dependant", None)))
        with _lock:
            _declared[key] = names
    return names


async def reject_unknown_query(request: Request) -> None:
    """Request dependency: a 422 naming every query parameter the matched route does not declare.

    Each error is ``{"field": name, "message": "unknown query parameter; ..."}`` listing the declared
    ones (or saying there are none) and, when one is close, suggesting it.
    """
    route = request.scope.get("route")
    if route is None or not request.query_params:
        return
    allowed = declared_query_names(route)
    unknown = [name for name in dict.fromkeys(request.query_params.keys()) if name not in allowed]
    if not unknown:
        return
    errors = []
    for name in unknown:
        close = suggest(name, set(allowed))
        if close:
            message = f"unknown query parameter; did you mean {close!r}?"
        elif allowed:
            message = f"unknown query parameter; this endpoint takes {', '.join(sorted(allowed))}"
        else:
            message = "unknown query parameter; this endpoint takes none"
        errors.append({"field": name, "message": message})
    detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors)
    raise ApiError(422, "Unprocessable Content", detail, errors=errors)


__all__ = ["declared_query_names", "reject_unknown_query"]
