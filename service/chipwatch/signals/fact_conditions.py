"""Conditions over knowledge-base facts the compiled matcher delegates here (pure): a recorded change of
a fact (``change``), and the names a dataset gives a result (MLPerf division, scenario, model label)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chipwatch.signals.definition import ChangeCondition, ResultCondition


def _fmt(value: float) -> str:
    return f"{value:g}"


@dataclass(frozen=True, slots=True)
class ChangeView:
    """One recorded change of a knowledge-base fact as the matcher sees it: the fact's kind (API path
    segment) and id, the action, the cause, and for ``updated`` the fields that changed with their old
    and new values (``{field: (old, new)}``)."""

    kind: str
    fact_id: str
    action: str
    cause: str
    fields: Mapping[str, tuple[Any, Any]]


def check_change(cond: ChangeCondition, change: ChangeView) -> str | None:
    if cond.kind != change.kind or (cond.fact is not None and cond.fact != change.fact_id):
        return None
    actions = cond.action or (["updated"] if cond.fields else None)
    if actions is not None and change.action not in actions:
        return None
    if cond.cause is not None and change.cause not in cond.cause:
        return None
    what = change.action
    if cond.fields is not None:
        hit = [name for name in cond.fields if name in change.fields]
        if not hit:
            return None
        what = "; ".join(f"{name} {shown(change.fields[name][0])} -> {shown(change.fields[name][1])}"
                         for name in hit)
    return f"{change.kind} {change.fact_id} {what} ({change.cause})"


def shown(value: Any) -> str:
    return _fmt(value) if isinstance(value, int | float) and not isinstance(value, bool) else repr(value)


def named_constraints(cond: ResultCondition, f: Mapping[str, Any]) -> list[str] | None:
    """Division, scenario and model as the dataset names them; None when one does not match."""
    parts = []
    if cond.division is not None:
        division = ((f.get("attributes") or {}).get("division") or "").casefold()
        if division != cond.division:
            return None
        parts.append(f"{division} division")
    if cond.scenario is not None:
        if (f.get("operating_point") or "").casefold() != cond.scenario.casefold():
            return None
        parts.append(f"scenario {cond.scenario}")
    if cond.model_name is not None:
        if (f.get("model_label") or "").casefold() != cond.model_name.casefold():
            return None
        parts.append(f"model {f.get('model_label')}")
    return parts


