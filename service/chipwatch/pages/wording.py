"""Signal conditions in plain words (pure), for the signal page.

Each condition kind of ``schema/signal.schema.json`` is written as one English sentence, naming entities
by their names where the page knows them. A key this module does not know is still shown (as ``key:
value``), so a condition kind added to the language later is never hidden from the reader.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

_BOUNDS = (
    ("gte", "at least"),
    ("gt", "more than"),
    ("lte", "at most"),
    ("lt", "less than"),
    ("eq", "exactly"),
)
_TRUST = {
    "vendor": "a vendor",
    "press": "the press",
    "analyst": "an analyst",
    "independent": "an independent party",
}
_VERIFICATION = {
    "vendor_reported": "reported by the vendor",
    "witnessed": "witnessed by a third party",
    "independent": "reproduced independently",
}


def _quoted(terms: Sequence[str]) -> str:
    return _either([f"\u201c{t}\u201d" for t in terms], "or")


def _either(words: Sequence[str], joiner: str) -> str:
    words = list(words)
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + f" {joiner} " + words[-1]


def _names(ids: Sequence[str], names: Mapping[str, str], joiner: str) -> str:
    return _either([names.get(i, i) for i in ids], joiner)


def _number(bounds: Mapping[str, Any]) -> str:
    unit = bounds.get("unit", "")
    parts = [f"{word} {bounds[key]:g} {unit}".rstrip() for key, word in _BOUNDS if key in bounds]
    return " and ".join(parts)


def _value(bounds: Mapping[str, Any]) -> str:
    parts = [f"{word} {bounds[key]:g}" for key, word in _BOUNDS if key in bounds]
    text = " and ".join(parts)
    if bounds.get("tolerance_pct"):
        text += f" (give or take {bounds['tolerance_pct']:g}%)"
    return text


def _rest(cond: Mapping[str, Any], known: set[str]) -> list[str]:
    return [f"{key.replace('_', ' ')}: {value}" for key, value in cond.items() if key not in known]


def _item(cond: Mapping[str, Any], names: Mapping[str, str]) -> str:
    parts: list[str] = []
    if cond.get("mentions_all"):
        parts.append("names " + _names(cond["mentions_all"], names, "and"))
    if cond.get("mentions_any"):
        ids = cond["mentions_any"]
        parts.append(("names " if len(ids) == 1 else "names any of ") + _names(ids, names, "or"))
    if cond.get("terms_all"):
        parts.append(
            "contains every one of " + _either([f"\u201c{t}\u201d" for t in cond["terms_all"]], "and")
        )
    if cond.get("terms_any"):
        parts.append("contains " + _quoted(cond["terms_any"]))
    if cond.get("terms_none"):
        parts.append("does not contain " + _quoted(cond["terms_none"]))
    if cond.get("number"):
        parts.append("gives a figure of " + _number(cond["number"]))
    if cond.get("source_trust"):
        parts.append("comes from " + _either([_TRUST.get(t, t) for t in cond["source_trust"]], "or"))
    if cond.get("sources"):
        parts.append("comes from " + _either(list(cond["sources"]), "or"))
    if cond.get("published_after"):
        parts.append(f"was published on or after {cond['published_after']}")
    known = {
        "mentions_all",
        "mentions_any",
        "terms_all",
        "terms_any",
        "terms_none",
        "number",
        "source_trust",
        "sources",
        "published_after",
    }
    parts += _rest(cond, known)
    return "A news item that " + _either(parts, "and") + "."


def _verification(value: Any) -> str:
    levels = [value] if isinstance(value, str) else list(value)
    return _either([_VERIFICATION.get(v, v) for v in levels], "or")


def _result(cond: Mapping[str, Any], names: Mapping[str, str]) -> str:
    text = "A benchmark result"
    if cond.get("chip"):
        text += f" for {names.get(cond['chip'], cond['chip'])}"
    if cond.get("baseline"):
        text += f" against {names.get(cond['baseline'], cond['baseline'])}"
    if cond.get("model"):
        text += f" on {names.get(cond['model'], cond['model'])}"
    if cond.get("benchmark"):
        text += f" in {names.get(cond['benchmark'], cond['benchmark'])}"
    extra: list[str] = []
    if cond.get("metric"):
        extra.append(f"measuring {str(cond['metric']).replace('_', ' ')}")
    if cond.get("model_name"):
        extra.append(f"for the model named \u201c{cond['model_name']}\u201d")
    if cond.get("scenario"):
        extra.append(f"in the {str(cond['scenario']).replace('_', ' ')} scenario")
    if cond.get("division"):
        extra.append(f"in the {cond['division']} division")
    if cond.get("value"):
        extra.append("with a value of " + _value(cond["value"]))
    if cond.get("verification"):
        extra.append(_verification(cond["verification"]))
    if cond.get("reported_by_not"):
        extra.append(f"not reported by {names.get(cond['reported_by_not'], cond['reported_by_not'])}")
    known = {
        "chip",
        "baseline",
        "model",
        "benchmark",
        "metric",
        "value",
        "verification",
        "model_name",
        "scenario",
        "division",
        "reported_by_not",
    }
    extra += _rest(cond, known)
    if extra:
        text += ", " + ", ".join(extra)
    return text + " is in the knowledge base."


def _deployment(cond: Mapping[str, Any], names: Mapping[str, str]) -> str:
    text = "A deployment"
    if cond.get("chip"):
        text += f" of {names.get(cond['chip'], cond['chip'])}"
    if cond.get("operator"):
        text += f" by {names.get(cond['operator'], cond['operator'])}"
    extra: list[str] = []
    if cond.get("status"):
        extra.append(f"with status {str(cond['status']).replace('_', ' ')}")
    if cond.get("capacity_mw_gte") is not None:
        extra.append(f"that has reached at least {cond['capacity_mw_gte']:g} MW (reached, not targeted)")
    if cond.get("by"):
        extra.append(f"as of {cond['by']} or earlier")
    extra += _rest(cond, {"chip", "operator", "status", "capacity_mw_gte", "by"})
    if extra:
        text += " " + ", ".join(extra)
    return text + " is in the knowledge base."


def _words(value: Any, joiner: str = "or") -> str:
    items = [value] if isinstance(value, str) else list(value)
    return _either([str(v).replace("_", " ") for v in items], joiner)


def _change(cond: Mapping[str, Any], names: Mapping[str, str]) -> str:
    kind = str(cond.get("kind", "fact")).replace("-", " ")
    text = "A recorded change of " + (
        f"the {kind.rstrip('s')} {names.get(cond['fact'], cond['fact'])}"
        if cond.get("fact")
        else f"any of the {kind}"
    )
    extra: list[str] = []
    if cond.get("fields"):
        extra.append("in " + _words(cond["fields"]))
    if cond.get("action"):
        extra.append("that was " + _words(cond["action"]))
    if cond.get("cause"):
        extra.append("caused by " + _words(cond["cause"]))
    extra += _rest(cond, {"kind", "fact", "fields", "action", "cause"})
    if extra:
        text += " " + ", ".join(extra)
    return text + "."


def describe_condition(condition: Mapping[str, Any], names: Mapping[str, str] | None = None) -> str:
    """One condition (``{"item": {...}}``, ``{"result": {...}}``, ``{"deployment": {...}}`` or a kind
    added later) as a sentence; ``names`` maps entity ids to display names."""
    names = names or {}
    if len(condition) != 1:
        return "; ".join(f"{k}: {v}" for k, v in condition.items())
    ((kind, body),) = condition.items()
    if not isinstance(body, Mapping):
        return f"{kind.replace('_', ' ')}: {body}"
    if kind == "item":
        return _item(body, names)
    if kind == "result":
        return _result(body, names)
    if kind == "deployment":
        return _deployment(body, names)
    if kind == "change":
        return _change(body, names)
    details = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in body.items())
    return f"A {kind.replace('_', ' ')} fact: {details}."


def condition_ids(condition: Mapping[str, Any]) -> set[str]:
    """Every entity id a condition names (to look their names up)."""
    found: set[str] = set()
    for body in condition.values():
        if not isinstance(body, Mapping):
            continue
        for key in ("mentions_all", "mentions_any"):
            found.update(body.get(key) or [])
        for key in ("chip", "baseline", "model", "benchmark", "operator", "fact", "reported_by_not"):
            if isinstance(body.get(key), str):
                found.add(body[key])
    return found
