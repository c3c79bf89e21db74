"""What makes two proposals one fact, how far their sources are independent, and which knowledge-base
fact a proposal corroborates (pure: no I/O).

- Identity (:func:`fact_key`): the fields that name a fact, not those one outlet may omit. Funding: the
  company and the sum raised (else the valuation); acquisition: buyer and target; deployment: operator,
  chip, power and count; benchmark: chip, metric, unit, value and baseline; launch: vendor and chip.
  Names count by their knowledge-base id when they have one, else folded; sums by three significant
  digits, so "$500M" and "$500 million" are one round.
- Independence (:func:`is_independent`): a source counts when its trust is not ``vendor`` and its
  publisher is none of the fact's subjects (a company's own newsroom never confirms its own round).
- Verification (:func:`allowed_verification`): ``vendor_reported`` until two independent sources carry
  the fact, then ``witnessed``; news alone never makes a fact ``independent`` (that needs a third party
  reproducing it, which an analyst records).
- Confidence (:func:`confidence`): the reader's own, plus 0.1 for each independent source after the
  first, at most 0.99.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from typing import Any

from chipwatch.candidates.textparts import fold_name
from chipwatch.vocab.verification import Verification

VERIFICATION_ORDER: tuple[Verification, ...] = ("vendor_reported", "witnessed", "independent")
KB_KIND: dict[str, str] = {
    "funding": "funding-rounds",
    "acquisition": "funding-rounds",
    "deployment": "deployments",
    "benchmark": "results",
    "launch": "chips",
}
"""Candidate kind -> the knowledge-base kind (API path segment) accepting it writes."""


def _entity(fact: Mapping[str, Any], prefix: str, names_only: bool = False) -> str | None:
    if fact.get(f"{prefix}_id") and not (names_only and fact.get(f"{prefix}_name")):
        return str(fact[f"{prefix}_id"])
    name = fact.get(f"{prefix}_name")
    return f"~{fold_name(name)}" if name else None


def _sig(value: Any) -> float | None:
    if value is None:
        return None
    value = float(value)
    if value == 0:
        return 0.0
    return round(value, 2 - int(math.floor(math.log10(abs(value)))))


def identity(kind: str, fact: Mapping[str, Any], names_only: bool = False) -> list[Any]:
    """The fields that identify a ``kind`` fact (see the module docstring); with ``names_only``, names
    count as written even where they resolve to an id."""

    def _name(fact: Mapping[str, Any], prefix: str) -> str | None:
        return _entity(fact, prefix, names_only)

    if kind == "funding":
        amount = _sig(fact.get("amount"))
        return [_name(fact, "vendor"), fact.get("currency"), amount,
                None if amount is not None else _sig(fact.get("post_money_valuation"))]
    if kind == "acquisition":
        return [_name(fact, "acquirer"), _name(fact, "vendor")]
    if kind == "deployment":
        return [_name(fact, "operator"), _name(fact, "chip"), _sig(fact.get("power_mw")),
                _sig(fact.get("units"))]
    if kind == "benchmark":
        return [_name(fact, "chip"), fact.get("metric"), fact.get("unit"), _sig(fact.get("value")),
                _sig(fact.get("value_min")), _sig(fact.get("value_max")), _name(fact, "baseline")]
    if kind == "launch":
        return [_name(fact, "vendor"), _name(fact, "chip")]
    raise ValueError(f"unknown candidate kind {kind!r}")


def fact_key(kind: str, fact: Mapping[str, Any], names_only: bool = False) -> str:
    """SHA-256 (hex) of the fact's identity: equal for every proposal of the same fact.

    With ``names_only`` the key a proposal had before its names entered the knowledge base (an accepted
    candidate creates the start-up it names; later items of the same round resolve the name to the new
    id, and are filed under the candidate found by this key).
    """
    return _hash(kind, identity(kind, fact, names_only))


def fact_keys(kind: str, fact: Mapping[str, Any]) -> tuple[str, str]:
    """``(fact_key(kind, fact), fact_key(kind, fact, names_only=True))``, hashing once when both
    identities are the same (names that resolve to no id, or no names at all)."""
    own, by_name = identity(kind, fact), identity(kind, fact, names_only=True)
    key = _hash(kind, own)
    return key, key if by_name == own else _hash(kind, by_name)


def _hash(kind: str, identity_fields: list[Any]) -> str:
    text = json.dumps([kind, *identity_fields], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def subjects(kind: str, fact: Mapping[str, Any], chip_vendor: Mapping[str, str | None]) -> set[str]:
    """Vendor ids the fact is about: a source they publish is not independent of it."""
    ids = {fact.get(k) for k in ("vendor_id", "acquirer_id", "operator_id", "reported_by_id")}
    for key in ("chip_id",):
        ids.add(chip_vendor.get(fact.get(key) or ""))
    return {i for i in ids if i}


def is_independent(trust: str, publisher_id: str | None, subject_ids: set[str]) -> bool:
    """Does a source of ``trust`` published by ``publisher_id`` count as independent of the fact?"""
    return trust != "vendor" and (publisher_id is None or publisher_id not in subject_ids)


def allowed_verification(independent_sources: int) -> Verification:
    """The verification the carrying sources allow (see the module docstring)."""
    return "witnessed" if independent_sources >= 2 else "vendor_reported"


def at_most(level: str, ceiling: str) -> bool:
    """Is verification ``level`` no higher than ``ceiling``?"""
    return VERIFICATION_ORDER.index(level) <= VERIFICATION_ORDER.index(ceiling)  # type: ignore[arg-type]


def confidence(reader: float, independent_sources: int) -> float:
    """The candidate's confidence from the best reader confidence and the independent sources."""
    return round(min(0.99, reader + 0.1 * max(0, independent_sources - 1)), 2)


def _close(a: Any, b: Any, rel: float = 0.02) -> bool:
    return a is not None and b is not None and math.isclose(float(a), float(b), rel_tol=rel)


def corroborates(kind: str, fact: Mapping[str, Any], row: Any) -> bool:
    """Does the knowledge-base ``row`` (of ``KB_KIND[kind]``) state the fact ``fact`` proposes?

    Funding: same company and sum (2%) in the same currency, or same valuation when no sum is given;
    acquisition: same target and buyer; deployment: same chip and operator with the same power or count
    (2%), or neither stated on either side; benchmark: a result of the chip with the same value (1%)
    and unit; launch: the chip exists.
    """
    if kind == "funding":
        if row.round_type == "acquisition" or row.vendor_id != fact.get("vendor_id"):
            return False
        if fact.get("amount") is not None:
            return row.currency == fact.get("currency") and _close(row.amount, fact["amount"])
        return _close(row.post_money_valuation, fact.get("post_money_valuation"))
    if kind == "acquisition":
        return (row.round_type == "acquisition" and row.vendor_id == fact.get("vendor_id")
                and row.acquirer_id == fact.get("acquirer_id"))
    if kind == "deployment":
        if row.chip_id != fact.get("chip_id") or row.operator_id != fact.get("operator_id"):
            return False
        power, units = fact.get("power_mw"), fact.get("units")
        if power is None and units is None:
            return row.capacity_mw is None and row.capacity_mw_target is None and row.units_min is None
        return (_close(row.capacity_mw, power) or _close(row.capacity_mw_target, power)
                or _close(row.units_min, units))
    if kind == "benchmark":
        value = fact.get("value") if fact.get("value") is not None else fact.get("value_max")
        return (fact.get("chip_id") in (row.chip_ids or []) and (row.unit or "") == (fact.get("unit") or "")
                and (_close(row.value, value, 0.01) or _close(row.value_max, value, 0.01)))
    if kind == "launch":
        return row.id == fact.get("chip_id")
    return False


__all__ = [
    "KB_KIND",
    "VERIFICATION_ORDER",
    "allowed_verification",
    "fact_keys",
    "at_most",
    "confidence",
    "corroborates",
    "fact_key",
    "identity",
    "is_independent",
    "subjects",
]
