"""Query parameters a route does not declare, or values it does not know, are refused, not ignored.

A misspelt filter (``/v1/items?sorce=x``) silently ignored answers the unfiltered list, which looks like
a correct answer; a 422 naming the parameter (with the closest declared one) says what went wrong. The
same holds for an enum-like value (``?status=opne``): a fixed vocabulary is declared with
:func:`choice` (validated with the request), one read from the data (metrics, dataset kinds) is checked
with :func:`require_choice`; both answer a 422 naming the parameter and the values it takes.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin

from fastapi import Request

from chipwatch.kit.errors import ApiError
from chipwatch.kit.schema_errors import suggest

_declared: dict[tuple[int, bool], frozenset[str]] = {}
_lock = threading.Lock()


def _is_list(annotation: Any) -> bool:
    """``list[X]``, ``list[X] | None`` and the like: a query or form field that takes several values."""
    origin = get_origin(annotation)
    if origin in (Union, UnionType):
        return any(_is_list(arg) for arg in get_args(annotation))
    return (origin or annotation) in (list, tuple, set, frozenset)


def _query_names(dependant: object, *, lists_only: bool = False) -> set[str]:
    names = {
        param.alias for param in getattr(dependant, "query_params", ())
        if not lists_only or _is_list(param.field_info.annotation)
    }
    for sub in getattr(dependant, "dependencies", ()):
        names |= _query_names(sub, lists_only=lists_only)
    return names


def declared_query_names(route: object, *, lists_only: bool = False) -> frozenset[str]:
    """The query parameter names (aliases) ``route`` and its dependencies declare (cached per route);
    with ``lists_only``, those declared as lists, the only ones that may be given more than once."""
    key = (id(route), lists_only)
    with _lock:
        names = _declared.get(key)
    if names is None:
        names = frozenset(_query_names(getattr(route, "dependant", None), lists_only=lists_only))
        with _lock:
            _declared[key] = names
    return names


async def reject_unknown_query(request: Request) -> None:
    """Request dependency: a 422 naming every query parameter the matched route does not declare, and
    every one it declares once that is given more than once.

    Each error is ``{"field": name, "message": "unknown query parameter; ..."}`` listing the declared
    ones (or saying there are none) and, when one is close, suggesting it.
    """
    route = request.scope.get("route")
    if route is None or not request.query_params:
        return
    allowed = declared_query_names(route)
    names = list(dict.fromkeys(request.query_params.keys()))
    unknown = [name for name in names if name not in allowed]
    # FastAPI hands a route the last of a repeated value: the others would be dropped unsaid.
    repeated = [
        (name, given) for name in names
        if name in allowed and (given := len(request.query_params.getlist(name))) > 1
        and name not in declared_query_names(route, lists_only=True)
    ]
    if not unknown and not repeated:
        return
    errors = [{"field": name, "message": f"given {given} times; give it once"} for name, given in repeated]
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


def _form_names(dependant: object) -> set[str]:
    names = {param.alias for param in getattr(dependant, "body_params", ())}
    for sub in getattr(dependant, "dependencies", ()):
        names |= _form_names(sub)
    return names


def _form_list_names(dependant: object) -> set[str]:
    """The form fields declared as lists (``files: list[UploadFile]``): the only ones given repeatedly."""
    names = {
        param.alias for param in getattr(dependant, "body_params", ())
        if _is_list(param.field_info.annotation)
    }
    for sub in getattr(dependant, "dependencies", ()):
        names |= _form_list_names(sub)
    return names


async def reject_unknown_form(request: Request) -> None:
    """Request dependency for a form route: a 422 naming every form field the route does not declare,
    and every one it declares once that is given more than once.

    An option sent in the form that the route reads from the query string (``dry_run`` given as a form
    field) would otherwise be dropped and the import written; the message says where it goes instead.
    """
    route = request.scope.get("route")
    if route is None:
        return
    form = await request.form()  # parsed once per request: the route's own form parameters read the same
    dependant = getattr(route, "dependant", None)
    allowed = _form_names(dependant)
    lists = _form_list_names(dependant)
    in_query = declared_query_names(route)
    errors = []
    for name in dict.fromkeys(form.keys()):
        if name in allowed:
            given = len(form.getlist(name))
            if given > 1 and name not in lists:
                # Starlette hands the route the last value only: the others would be dropped unsaid.
                plural = next((n for n in sorted(lists) if n == name + "s"), None)
                hint = f" (several {name}s go in {plural})" if plural else ""
                errors.append({"field": name, "message": f"given {given} times; give it once{hint}"})
            continue
        if name in in_query:
            message = f"unknown form field; {name} goes in the query string (?{name}=...), not the form"
        else:
            close = suggest(name, allowed)
            message = "unknown form field; " + (
                f"did you mean {close!r}?" if close else f"this endpoint takes {', '.join(sorted(allowed))}"
            )
        errors.append({"field": name, "message": message})
    if errors:
        detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors)
        raise ApiError(422, "Unprocessable Content", detail, errors=errors)


def choice(values: Iterable[str]) -> Any:
    """A ``Literal`` of ``values`` to annotate an enum-like query parameter with: a value outside them is
    a 422 naming the parameter (``must be one of ...``), and OpenAPI lists them as its enum."""
    options = tuple(dict.fromkeys(values))
    if not options:
        raise ValueError("a choice needs at least one value")
    return Literal.__getitem__(options)


def unknown_value(value: str, allowed: Iterable[str]) -> str:
    """The message for a query value outside ``allowed``: the closest value, and the values (20 at most)."""
    known = sorted(set(allowed))
    close = suggest(value, known)
    listed = ", ".join(repr(v) for v in known[:20]) + (", ..." if len(known) > 20 else "")
    message = f"unknown value {value!r}; " + (f"did you mean {close!r}? " if close else "")
    return message + (f"known values: {listed}" if known else "no value is known yet")


def require_choice(name: str, value: str | None, allowed: Iterable[str]) -> None:
    """Raise a 422 naming query parameter ``name`` when ``value`` is given and not among ``allowed``
    (for vocabularies read from the data); the message lists them and suggests the closest one."""
    if value is None:
        return
    allowed = set(allowed)
    if value in allowed:
        return
    message = unknown_value(value, allowed)
    errors = [{"field": name, "message": message}]
    raise ApiError(422, "Unprocessable Content", f"{name}: {message}", errors=errors)


__all__ = [
    "choice",
    "declared_query_names",
    "reject_unknown_form",
    "reject_unknown_query",
    "require_choice",
    "unknown_value",
]


def like_literal(value: str) -> str:
    """``value`` escaped for a SQL ``LIKE ... ESCAPE '\\'`` pattern, so ``%``, ``_`` and the escape
    character itself match as written rather than as wildcards."""
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
