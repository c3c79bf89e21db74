"""Scoring extracted facts against the labelled set (tests/candidates/labelled_items.yaml).

The comparison rules are the ones the data file's header states: entity fields agree when the ids are
equal or the names are equal once case, punctuation, corporate words and generic hardware words are
dropped (and, for chips, vendor names; a chip name may carry up to two extra tokens); numbers within
1%; place, when labelled, one name containing the other. A predicted fact is a true positive when it
agrees with a labelled fact of the same kind and item on every field; each labelled fact matches once.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from chipwatch.candidates.extract import FACT_KINDS, Proposal

CORPORATE = frozenset(
    "inc corp corporation co ltd llc plc systems technologies technology group holdings labs lab semi "
    "科技 股份 公司 集团 有限公司".split()
)
GENERIC = frozenset(
    "gpu gpus chip chips accelerator accelerators processor processors system systems series card 芯片 "
    "inference the".split()
)
_TOKEN = re.compile(r"[\u3400-\u9fff]+|[a-z0-9][a-z0-9.]*")

# label field -> (proposal fields holding it, comparison)
FIELDS: dict[str, dict[str, tuple[tuple[str, ...], str]]] = {
    "funding": {
        "company": (("vendor_id", "vendor_name"), "entity"),
        "amount": (("amount",), "number"),
        "currency": (("currency",), "exact"),
        "round_type": (("round_type",), "exact"),
        "valuation": (("post_money_valuation",), "number"),
    },
    "acquisition": {
        "acquirer": (("acquirer_id", "acquirer_name"), "entity"),
        "target": (("vendor_id", "vendor_name"), "entity"),
        "amount": (("amount",), "number"),
        "currency": (("currency",), "exact_if_amount"),
    },
    "deployment": {
        "operator": (("operator_id", "operator_name"), "entity"),
        "chip": (("chip_id", "chip_name"), "chip"),
        "quantity": (("units",), "number"),
        "power_mw": (("power_mw",), "number"),
        "status": (("status",), "exact"),
        "place": (("place",), "place"),
    },
    "benchmark": {
        "chip": (("chip_id", "chip_name"), "chip"),
        "metric": (("metric",), "exact"),
        "value": (("value", "value_min", "value_max"), "value"),
        "unit": (("unit",), "exact"),
        "baseline": (("baseline_id", "baseline_name"), "chip"),
        "reported_by": (("reported_by_id", "reported_by_name"), "entity"),
    },
    "launch": {
        "vendor": (("vendor_id", "vendor_name"), "entity"),
        "chip": (("chip_id", "chip_name"), "chip"),
    },
}


def tokens(name: str, drop: Iterable[str] = ()) -> tuple[str, ...]:
    folded = unicodedata.normalize("NFKC", name).casefold().replace("-", " ")
    folded = unicodedata.normalize("NFD", folded)
    folded = "".join(c for c in folded if not unicodedata.combining(c))
    dropped = CORPORATE | GENERIC | set(drop)
    return tuple(t.strip(".") for t in _TOKEN.findall(folded) if t.strip(".") not in dropped)


def _same_name(
    gold: str, pred_id: str | None, pred_name: str | None, chip: bool, vendor_words: set[str]
) -> bool:
    if pred_id is not None and gold == pred_id:
        return True
    drop = vendor_words if chip else set()
    g = tokens(gold, drop)
    for candidate in (pred_name, pred_id):
        if not candidate:
            continue
        p = tokens(candidate, drop)
        if not g or not p:
            continue
        if g == p:
            return True
        inside = any(p[i : i + len(g)] == g for i in range(len(p) - len(g) + 1))
        if chip and len(p) - len(g) in (1, 2) and inside:
            return True
    return False


def _number(gold: Any, pred: Any) -> bool:
    if gold is None or pred is None:
        return gold is None and pred is None
    return math.isclose(float(gold), float(pred), rel_tol=0.01)


def field_agrees(kind: str, label: str, gold: Any, fact: dict[str, Any], vendor_words: set[str]) -> bool:
    names, how = FIELDS[kind][label]
    values = [fact.get(n) for n in names]
    if how in ("entity", "chip"):
        pred_id, pred_name = values
        if gold is None:
            return pred_id is None and pred_name is None
        options = gold if isinstance(gold, list) else [gold]
        return any(_same_name(str(o), pred_id, pred_name, how == "chip", vendor_words) for o in options)
    if how == "number":
        return _number(gold, values[0])
    if how == "value":
        value, lo, hi = values
        if isinstance(gold, list):
            return _number(gold[0], lo) and _number(gold[1], hi)
        return _number(gold, value)
    if how == "place":
        if gold is None:
            return True
        pred = values[0]
        if not pred:
            return False
        g, p = " ".join(tokens(gold)), " ".join(tokens(pred))
        return bool(g and p) and (g in p or p in g)
    if how == "exact_if_amount":
        return gold is None and values[0] is None or gold == values[0] or fact.get("amount") is None
    return gold == values[0]


def agrees(gold: dict[str, Any], proposal: Proposal, vendor_words: set[str]) -> bool:
    kind = gold["kind"]
    return proposal.kind == kind and all(
        field_agrees(kind, label, gold.get(label), proposal.fact, vendor_words) for label in FIELDS[kind]
    )


@dataclass
class Tally:
    """True positives, predictions and labels per kind, with the misses kept for the report."""

    tp: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FACT_KINDS, 0))
    predicted: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FACT_KINDS, 0))
    labelled: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FACT_KINDS, 0))
    false_positives: list[tuple[str, Proposal]] = field(default_factory=list)
    false_negatives: list[tuple[str, dict]] = field(default_factory=list)

    def add(self, item_id: str, golds: list[dict], proposals: list[Proposal], vendor_words: set[str]) -> None:
        unmatched = list(golds)
        for gold in golds:
            self.labelled[gold["kind"]] += 1
        for p in proposals:
            self.predicted[p.kind] += 1
            hit = next((g for g in unmatched if agrees(g, p, vendor_words)), None)
            if hit is None:
                self.false_positives.append((item_id, p))
            else:
                unmatched.remove(hit)
                self.tp[p.kind] += 1
        self.false_negatives.extend((item_id, g) for g in unmatched)

    def precision(self, kind: str) -> float:
        return self.tp[kind] / self.predicted[kind] if self.predicted[kind] else 1.0

    def recall(self, kind: str) -> float:
        return self.tp[kind] / self.labelled[kind] if self.labelled[kind] else 1.0

    def table(self) -> str:
        rows = [f"{'kind':<12}{'labelled':>9}{'predicted':>10}{'correct':>8}{'precision':>10}{'recall':>8}"]
        for kind in FACT_KINDS:
            rows.append(
                f"{kind:<12}{self.labelled[kind]:>9}{self.predicted[kind]:>10}{self.tp[kind]:>8}"
                f"{self.precision(kind):>10.3f}{self.recall(kind):>8.3f}"
            )
        return "\n".join(rows)
