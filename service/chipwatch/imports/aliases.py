"""The alias table through the API, and the rows that wait for it (services flush, never commit).

Creating or changing an alias re-reads every waiting row in the same transaction: a row whose names
now all resolve becomes a fact (cause ``import``, the import that brought it, actor ``alias``), so
rows wait until an alias resolves them and not until the next version of their dataset.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from typing import Any

from sqlalchemy import select
from sqlmodel import Session

from chipwatch.imports import apply
from chipwatch.imports.models import Alias, Import, WaitingRow
from chipwatch.imports.plan import IMPORT_KINDS, Candidate
from chipwatch.imports.resolve import Resolver, load_resolver, token_key
from chipwatch.imports.schemas import AliasCreate, AliasUpdate, UnresolvedName
from chipwatch.kit.pagination import keyset_page
from chipwatch.kit.time import utcnow
from chipwatch.knowledge.models import Chip, Model, Vendor
from chipwatch.vocab.slugs import slugify

TARGETS = {"chip": Chip, "vendor": Vendor, "model": Model}


class AliasNotFound(LookupError):
    """No alias has this id."""


class AliasConflict(ValueError):
    """Another alias of the same kind compares equal (same tokens)."""


class AliasInvalid(ValueError):
    """Fields of the alias are not acceptable: ``problems`` lists every ``(field, message)``."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"{field}: {message}" for field, message in problems))
        self.problems = problems


def list_aliases(*, session: Session, kind: str | None, cursor: str | None, limit: int) -> dict[str, Any]:
    """One page of aliases ordered by id: ``{"items": [Alias], "next_cursor": str | None}``."""
    stmt = select(Alias) if kind is None else select(Alias).where(Alias.kind == kind)
    rows, next_cursor = keyset_page(session, stmt, keys=(Alias.id,), cursor=cursor, limit=limit)
    return {"items": rows, "next_cursor": next_cursor}


def get_alias(*, session: Session, alias_id: str) -> Alias:
    """The alias ``alias_id``; raises :class:`AliasNotFound`."""
    row = session.get(Alias, alias_id)
    if row is None:
        raise AliasNotFound(alias_id)
    return row


def alias_problems(
    session: Session, kind: str | None, alias: str | None, target_id: str | None
) -> list[tuple[str, str]]:
    """``[(field, message)]`` for an alias with no letters or digits and a target that is no row of
    ``kind`` (a field that is None, or a target whose kind is not known, is not checked). Reads only."""
    problems: list[tuple[str, str]] = []
    if alias is not None and not token_key(alias):
        problems.append(("alias", "must contain letters or digits"))
    if target_id is not None and kind in TARGETS and session.get(TARGETS[kind], target_id) is None:
        problems.append(("target_id", f"no {kind} with id {target_id!r}"))
    return problems


def field_problems(
    *, session: Session, fields: dict[str, Any], alias_id: str | None
) -> list[tuple[str, str]]:
    """The checks of :func:`alias_problems` over the fields of a body that passed the request layer;
    a change (``alias_id`` given) takes its kind from the stored alias and may not null a name or target."""
    kind, nulls = fields.get("kind"), []
    if alias_id is not None:
        row = session.get(Alias, alias_id)
        kind = row.kind if row is not None else None
        nulls = [(name, "must not be null") for name in ("alias", "target_id") if name in fields
                 and fields[name] is None]
    return nulls + alias_problems(session, kind, fields.get("alias"), fields.get("target_id"))


def _check(session: Session, kind: str, alias: str, target_id: str | None, own_id: str | None) -> str:
    """The alias's tokens, after checking them and (when given) the target."""
    problems = alias_problems(session, kind, alias, target_id)
    if problems:
        raise AliasInvalid(problems)
    tokens = token_key(alias)
    clash = session.scalars(select(Alias).where(Alias.kind == kind, Alias.tokens == tokens)).first()
    if clash is not None and clash.id != own_id:
        raise AliasConflict(f"alias {clash.id!r} already maps {clash.alias!r} to {clash.target_id!r}")
    return tokens


def _new_id(session: Session, alias: str, kind: str) -> str:
    stem = slugify(alias, max_length=48) or kind
    if session.get(Alias, stem) is None:
        return stem
    return f"{stem}-{hashlib.sha256(f'{kind}:{alias}'.encode()).hexdigest()[:8]}"


def create_alias(*, session: Session, alias_in: AliasCreate) -> tuple[Alias, int, int]:
    """Add an alias and apply the waiting rows it resolves; returns ``(alias, applied, still_waiting)``.

    Raises :class:`AliasInvalid` (no letters or digits; unknown target) or :class:`AliasConflict`.
    """
    _check(session, alias_in.kind, alias_in.alias, alias_in.target_id, None)
    row = Alias(**alias_in.model_dump(), id=_new_id(session, alias_in.alias, alias_in.kind), origin="api")
    session.add(row)
    session.flush()
    applied, waiting = apply_waiting(session=session)
    return row, applied, waiting


def update_alias(*, session: Session, alias_id: str, changes_in: AliasUpdate) -> tuple[Alias, int, int]:
    """Change an alias and apply the waiting rows it now resolves; returns ``(alias, applied, waiting)``.

    Raises :class:`AliasNotFound`, :class:`AliasInvalid` or :class:`AliasConflict`.
    """
    row = get_alias(session=session, alias_id=alias_id)
    changes = changes_in.model_dump(exclude_unset=True)
    nulls = [(name, "must not be null") for name in ("alias", "target_id") if name in changes
             and changes[name] is None]
    if nulls:
        given = {k: v for k, v in changes.items() if v is not None}
        raise AliasInvalid(
            nulls + alias_problems(session, row.kind, given.get("alias"), given.get("target_id"))
        )
    _check(session, row.kind, changes.get("alias", row.alias), changes.get("target_id"), row.id)
    for name, value in changes.items():
        setattr(row, name, value)
    row.updated_at = utcnow()
    session.add(row)
    session.flush()
    applied, waiting = apply_waiting(session=session)
    return row, applied, waiting


def delete_alias(*, session: Session, alias_id: str) -> None:
    """Remove an alias. Facts it resolved keep their links until their dataset's next version."""
    session.delete(get_alias(session=session, alias_id=alias_id))
    session.flush()


def apply_waiting(*, session: Session) -> tuple[int, int]:
    """Rebuild every waiting row with the current aliases; rows that now resolve become facts.

    Returns ``(applied, still_waiting)``. A row that still waits gets its unresolved names refreshed.
    """
    rows = list(session.scalars(select(WaitingRow).order_by(WaitingRow.id)))
    if not rows:
        return 0, 0
    resolver = load_resolver(session=session)
    groups: dict[tuple[str, int, str], list[tuple[WaitingRow, Candidate]]] = defaultdict(list)
    still = 0
    for row in rows:
        candidate = _rebuild(row, resolver)
        if candidate.built.waiting:
            row.names = [
                {"name": u.name, "kind": u.kind, "reason": u.reason} for u in candidate.built.waiting
            ]
            session.add(row)
            still += 1
        else:
            groups[(row.dataset, row.import_id, row.dataset_version)].append((row, candidate))
    applied = sum(_apply_group(session, key, members) for key, members in groups.items())
    session.flush()
    return applied, still


def _rebuild(row: WaitingRow, resolver: Resolver) -> Candidate:
    record = dict(row.record)
    return Candidate(record.get("row", 0), record, IMPORT_KINDS[row.dataset].build(record, resolver))


def _apply_group(
    session: Session, key: tuple[str, int, str], members: list[tuple[WaitingRow, Candidate]]
) -> int:
    dataset, import_id, version = key
    kind = IMPORT_KINDS[dataset]
    imp = session.get(Import, import_id)
    candidates = [candidate for _row, candidate in members]
    plan = apply.plan_import(
        session=session, kb_kind=kind.kb_kind, dataset=dataset, candidates=candidates, scopes=None
    )
    apply.write_plan(session=session, plan=plan, imp=imp, version=version, kb_kind=kind.kb_kind, at=utcnow())
    for row, _candidate in members:
        session.delete(row)
    return len(members)


def unresolved_names(*, session: Session) -> list[UnresolvedName]:
    """Every name that maps to no id: those holding waiting rows (with how many), then the names the
    latest applied import of each dataset reported without holding rows (operators, manufacturers)."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for row in session.scalars(select(WaitingRow).order_by(WaitingRow.id)):
        for name in row.names:
            entry = found.setdefault(
                (name["kind"], name["name"]),
                {
                    "name": name["name"],
                    "kind": name["kind"],
                    "reason": name["reason"],
                    "datasets": set(),
                    "rows_waiting": 0,
                    "example_row_keys": [],
                },
            )
            entry["datasets"].add(row.dataset)
            entry["rows_waiting"] += 1
            if len(entry["example_row_keys"]) < 5:
                entry["example_row_keys"].append(row.row_key)
    latest: dict[str, Import] = {}
    for imp in session.scalars(select(Import).where(Import.status == "applied").order_by(Import.id)):
        latest[imp.kind] = imp
    resolver = load_resolver(session=session)
    for imp in latest.values():
        for name in imp.report.get("unresolved", []):
            if name["holds_rows"] or resolver.one(name["kind"], name["name"])[0] is not None:
                continue
            entry = found.setdefault(
                (name["kind"], name["name"]),
                {
                    "name": name["name"],
                    "kind": name["kind"],
                    "reason": name["reason"],
                    "datasets": set(),
                    "rows_waiting": 0,
                    "example_row_keys": [],
                },
            )
            entry["datasets"].add(imp.kind)
    ordered = sorted(found.values(), key=lambda e: (-e["rows_waiting"], e["kind"], e["name"].casefold()))
    return [UnresolvedName(**{**e, "datasets": sorted(e["datasets"])}) for e in ordered]
