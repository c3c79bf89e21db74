"""Deciding what an import does (pure): each built record against the facts earlier versions wrote.

A fact is found by its dataset and row key. Its import digest (SHA-256 of the values an import writes,
names already resolved) decides: equal and not retired -> unchanged (so the same file twice writes
nothing); different -> update; retired and listed again -> restore. A record with no fact yet is
inserted, under the id of the fact an exact alias names (an Epoch chip already in the knowledge base)
or a new id. A record whose names do not resolve waits. Facts of the file's scope that no record
names are retired; a file that only describes one row (a system, a log, a run) retires nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import orjson

from chipwatch.datasets import (
    benchmark_serving,
    epoch_clusters,
    epoch_funding,
    epoch_hardware,
    inferencex_evals,
    mlperf_logs,
    mlperf_summary,
    mlperf_systems,
)
from chipwatch.imports import build, build_results
from chipwatch.imports.build import Built
from chipwatch.imports.resolve import Resolver
from chipwatch.vocab.slugs import SLUG_MAX_LENGTH, slugify


@dataclass(frozen=True, slots=True)
class ImportKind:
    """How a dataset kind becomes facts: its builder, the knowledge-base kind it writes, and whether a
    file is a whole version of its scope (so rows it lacks are retired)."""

    name: str
    build: Callable[..., Built]
    kb_kind: str
    whole_version: bool


IMPORT_KINDS: dict[str, ImportKind] = {
    k.name: k
    for k in (
        ImportKind(epoch_hardware.KIND, build.chip_from_epoch, "chips", True),
        ImportKind(epoch_clusters.KIND, build.deployment_from_epoch, "deployments", True),
        ImportKind(epoch_funding.KIND, build.funding_round_from_epoch, "funding-rounds", True),
        ImportKind(mlperf_summary.KIND, build_results.result_from_mlperf, "results", True),
        ImportKind(mlperf_systems.KIND, build_results.system_from_mlperf, "chips", False),
        ImportKind(mlperf_logs.KIND, build_results.result_from_log, "results", False),
        ImportKind(inferencex_evals.KIND, build_results.result_from_eval, "results", True),
        ImportKind(benchmark_serving.KIND, build_results.result_from_serving, "results", False),
    )
}
"""Dataset kind -> how it is imported (every kind of :data:`chipwatch.datasets.kinds.DATASET_KINDS`)."""


@dataclass(frozen=True, slots=True)
class Existing:
    """A fact an earlier import wrote (or the fact an exact alias names): id, digest, retirement."""

    id: str
    row_key: str | None
    import_sha256: str | None
    retired: bool
    scope: str | None = None


@dataclass(slots=True)  # not frozen, as Built (one per row); nothing changes it once made
class Candidate:
    """A record ready to decide: its row number, plain form and what it built into."""

    row: int
    plain: dict[str, Any]
    built: Built


@dataclass(slots=True)
class Plan:
    """What to write. ``inserts``/``updates`` carry ``(fact id, built, digest)``; ``restores`` are the
    ids among ``updates`` that come back from retirement; ``retire`` the ids to retire."""

    inserts: list[tuple[str, Built, str]] = field(default_factory=list)
    updates: list[tuple[str, Built, str]] = field(default_factory=list)
    restores: set[str] = field(default_factory=set)
    unchanged: int = 0
    waiting: list[Candidate] = field(default_factory=list)
    skipped: list[tuple[int, str]] = field(default_factory=list)
    retire: list[str] = field(default_factory=list)
    keys: set[str] = field(default_factory=set)


def import_digest(built: Built) -> str:
    """SHA-256 of what an import writes for ``built`` (values with names resolved, scope, creation
    fields), so a changed alias counts as a change as much as a changed cell."""
    payload = {"values": built.values, "create": built.create, "scope": built.scope, "kind": built.kb_kind}
    return hashlib.sha256(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS, default=str)).hexdigest()


def id_choices(built: Built) -> tuple[str | None, str]:
    """The ids :func:`new_fact_id` tries for ``built``, in order: the slug of ``id_hint`` (None without
    one), then a slug of the row key with a digest of it, which gets ``2``, ``3``... appended while
    taken (ids are at most 64 characters; row keys run to 170)."""
    return _id_choices(built.id_hint, built.row_key)


@lru_cache(maxsize=32768)
def _id_choices(id_hint: str | None, row_key: str) -> tuple[str | None, str]:
    # Cached: the plan asks twice per record (the ids to look up, then the id to give), and a dataset's
    # next version repeats its row keys.
    hinted = slugify(id_hint) if id_hint else None
    digest = hashlib.sha256(row_key.encode()).hexdigest()[:10]
    stem = slugify(row_key, max_length=SLUG_MAX_LENGTH - len(digest) - 1) or "row"
    return hinted or None, f"{stem}-{digest}"


def new_fact_id(built: Built, taken: set[str]) -> str:
    """A new fact id: the first of :func:`id_choices` that is not in ``taken``."""
    hinted, base = id_choices(built)
    if hinted and hinted not in taken:
        return hinted
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}{n}", n + 1
    return candidate


def decide(
    candidates: Iterable[Candidate],
    *,
    existing: dict[str, Existing],
    subjects: dict[str, Existing],
    taken: set[str],
    scopes: set[str | None] | None,
) -> Plan:
    """The :class:`Plan` for ``candidates`` (one per row key, in file order).

    ``existing`` maps row keys to the facts this dataset wrote (at least those of the candidates' row
    keys, every one of the file's scopes when it is a whole version); ``subjects`` maps ids of facts
    exact aliases name (not yet written by it); ``taken`` holds the ids of the target table that
    :func:`id_choices` could give (updated as new ids are chosen); ``scopes`` are the scopes the file is
    a whole version of (None: it retires nothing).
    """
    plan = Plan()
    claimed: set[str] = {fact.id for fact in existing.values()}
    for candidate in candidates:
        built = candidate.built
        plan.keys.add(built.row_key)
        if built.skip:
            plan.skipped.append((candidate.row, built.skip))
            continue
        if built.waiting:
            plan.waiting.append(candidate)
            continue
        digest = import_digest(built)
        fact = existing.get(built.row_key)
        if fact is None and built.subject_id and built.subject_id not in claimed:
            fact = subjects.get(built.subject_id)
        if fact is None:
            fact_id = new_fact_id(built, taken)
            taken.add(fact_id)
            claimed.add(fact_id)
            plan.inserts.append((fact_id, built, digest))
            continue
        claimed.add(fact.id)
        if fact.retired:
            plan.restores.add(fact.id)
        if fact.retired or fact.import_sha256 != digest:
            plan.updates.append((fact.id, built, digest))
        else:
            plan.unchanged += 1
    if scopes is not None:
        plan.retire = sorted(
            fact.id
            for key, fact in existing.items()
            if key not in plan.keys and not fact.retired and fact.scope in scopes
        )
    return plan


def scopes_of(candidates: Iterable[Candidate]) -> set[str | None]:
    """The scopes the candidates cover (an MLPerf file may hold one round or several)."""
    return {candidate.built.scope for candidate in candidates}


def built_candidates(
    kind: ImportKind,
    records: Iterable[tuple[int, dict[str, Any]]],
    resolver: Resolver,
    options: dict[str, Any],
) -> list[Candidate]:
    """Every ``(row, plain record)`` built by ``kind``'s builder."""
    return [Candidate(row, plain, kind.build(plain, resolver, **options)) for row, plain in records]


__all__ = [
    "IMPORT_KINDS",
    "Candidate",
    "Existing",
    "ImportKind",
    "Plan",
    "built_candidates",
    "decide",
    "id_choices",
    "import_digest",
    "new_fact_id",
    "scopes_of",
]
