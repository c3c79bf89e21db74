"""Load ``seed_data/`` into the database: validate everything first, then upsert in the caller's transaction.

Each seed file (YAML or JSON) is a mapping ``{"$schema": "../schema/<kind>.schema.json", "<kind>": [...]}``.
The schema a file names decides which table its entries go to, so several files may feed one table
(for instance a second file of polled feeds next to ``sources.yaml``).

A load runs in three phases and writes nothing unless all of them pass:

1. parse every file and validate it against the JSON Schema (2020-12) its ``$schema`` names;
2. check duplicate ids, ranges, and every reference (vendor, chip, model, benchmark, source ids) against
   the seed set plus the rows already in the database;
3. upsert: insert new ids; update a row only where its seed entry changed since the last load and the
   row was not edited since (an edit is kept, and when the entry changed too the load reports the
   conflict: :mod:`chipwatch.seed_state`); leave equal rows alone.

Rows in the database that no seed file names are left untouched: analysts add facts through the API.
For sources and signals only the definition columns are seeded; operational and state columns (a feed's
fetch state and ``enabled`` flag, a signal's status, outcome, version and timestamps) belong to the
running service and are never overwritten by a re-seed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path, PurePosixPath
from typing import Any

import sqlalchemy as sa
import yaml
from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import SchemaError, ValidationError
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012
from sqlmodel import Session, SQLModel

from chipwatch.imports.models import Alias, AliasBase
from chipwatch.kit.schema_errors import SchemaProblem, describe, field_path
from chipwatch.kit.time import utcnow
from chipwatch.knowledge.history import record_change
from chipwatch.knowledge.models import (
    DATASET_PROVENANCE_FIELDS,
    KB_TABLES,
    RETRACTION_FIELDS,
    Benchmark,
    Chip,
    Claim,
    Deployment,
    FundingRound,
    Model,
    Result,
    Vendor,
)
from chipwatch.paths import SCHEMA_DIR, SEED_DIR
from chipwatch.seed_state import KindReport, SeedConflict, SeedLedger, SeedReport
from chipwatch.signals.definition import DefinitionError, validate_definition
from chipwatch.signals.models import Signal
from chipwatch.sources.models import Source, SourceBase
from chipwatch.vocab.entities import ENTITY_COLLECTIONS

SEED_SUFFIXES = (".yaml", ".yml", ".json")
_ENTITY_KINDS = tuple(ENTITY_COLLECTIONS.values())  # seed kinds whose ids name things

_PROVENANCE_REFS: dict[str, tuple[str, ...]] = {
    "source_id": ("sources",),
    "reported_by": ("vendors",),
    "witnessed_by": ("vendors",),
    "reproduced_by": ("vendors",),
}

SIGNAL_DEFINITION_COLUMNS = (
    "id",
    "question",
    "description",
    "opened_on",
    "deadline",
    "on_deadline",
    "review",
    "require_fact",
    "subjects",
    "tags",
    "yes_when",
    "no_when",
)
"""The Signal columns a seed defines; the rest is state owned by the signal engine."""

# Keys inside signal conditions (see schema/signal.schema.json) that name ids of other kinds.
_CONDITION_REFS: dict[tuple[str, str], tuple[str, ...]] = {
    ("result", "chip"): ("chips",),
    ("result", "baseline"): ("chips",),
    ("result", "model"): ("models",),
    ("result", "benchmark"): ("benchmarks",),
    ("result", "reported_by_not"): ("vendors",),
    ("deployment", "chip"): ("chips",),
    ("deployment", "operator"): ("vendors",),
    ("funding", "vendor"): ("vendors",),
    ("item", "mentions_all"): _ENTITY_KINDS,
    ("item", "mentions_any"): _ENTITY_KINDS,
    ("item", "sources"): ("sources",),
}


class _SeedLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # libyaml's loader when built with it
    """A safe YAML loader that keeps timestamps as their text.

    PyYAML turns ``2026-13-01`` into a ValueError deep inside the parser, with no entry or field to
    name; kept as text, a bad date fails the schema's ``format: date`` check with a precise location.
    """


_SeedLoader.add_constructor("tag:yaml.org,2002:timestamp", lambda loader, node: loader.construct_scalar(node))

_KIND_WORDS = {
    "sources": "source",
    "vendors": "vendor",
    "chips": "chip",
    "models": "model",
    "benchmarks": "benchmark",
}


# ---------------------------------------------------------------- errors and report
@dataclass(frozen=True)
class SeedIssue:
    """One problem found in the seed set, located by file, entry (id or index) and field."""

    file: str
    message: str
    entry: str | None = None
    field: str | None = None

    def __str__(self) -> str:
        where = [f"entry {self.entry}"] if self.entry is not None else []
        if self.field is not None:
            where.append(f"field '{self.field}'")
        return f"{self.file}: {' '.join(where)}: {self.message}" if where else f"{self.file}: {self.message}"


class SeedError(ValueError):
    """The seed set was refused; nothing was written.

    ``issues`` lists every problem found in the phase that failed; the message has one line per issue,
    each naming the file, the entry and the field, e.g.
    ``results.yaml: entry 'r04-x' field 'verification': 'witnesed' is not one of [...]``.
    """

    def __init__(self, issues: Sequence[SeedIssue]) -> None:
        self.issues = list(issues)
        super().__init__("\n".join(str(issue) for issue in self.issues))


# ---------------------------------------------------------------- kinds
@dataclass(frozen=True)
class _Kind:
    name: str  # report key and the list's key inside its files
    schema: str  # schema file name in the schema directory
    model: type[SQLModel]
    refs: Mapping[str, tuple[str, ...]]
    columns: tuple[str, ...]  # seeded columns, "id" first
    insert_only: frozenset[str] = frozenset()

    @property
    def date_columns(self) -> frozenset[str]:
        table = self.model.__table__  # type: ignore[attr-defined]
        return frozenset(c for c in self.columns if isinstance(table.columns[c].type, sa.Date))

    def default(self, column: str) -> Any:
        return self.model.model_fields[column].get_default(call_default_factory=True)

    @property
    def seeded_columns(self) -> tuple[str, ...]:
        """The columns a re-seed compares and may update (``insert_only`` ones are set once)."""
        return tuple(c for c in self.columns if c not in self.insert_only)


def _table_columns(model: type[SQLModel]) -> tuple[str, ...]:
    # Dataset provenance belongs to imports, a retraction to the analyst: a re-seed must not clear what an
    # import recorded, nor bring back a fact an analyst withdrew.
    table = model.__table__  # type: ignore[attr-defined]
    kept = (*DATASET_PROVENANCE_FIELDS, *RETRACTION_FIELDS)
    names = [c.name for c in table.columns if c.name not in kept]
    return ("id", *(n for n in names if n != "id"))


def _kb_kind(name: str, schema: str, model: type[SQLModel], **refs: tuple[str, ...]) -> _Kind:
    return _Kind(name, schema, model, {**_PROVENANCE_REFS, **refs}, _table_columns(model))


KINDS: tuple[_Kind, ...] = (
    _Kind(
        "sources",
        "sources.schema.json",
        Source,
        {"publisher_id": ("vendors",)},
        ("id", *SourceBase.model_fields),
        # An operator may switch a feed off, a check detects its kind and repeated permanent redirects
        # rewrite its URL: a re-seed must undo none of these.
        insert_only=frozenset({"enabled", "kind", "url"}),
    ),
    _kb_kind("vendors", "vendors.schema.json", Vendor, owner_id=("vendors",)),
    _kb_kind("chips", "chips.schema.json", Chip, vendor_id=("vendors",), platform=("chips",)),
    _kb_kind("models", "models.schema.json", Model, developer_id=("vendors",)),
    _kb_kind("benchmarks", "benchmarks.schema.json", Benchmark, owner_id=("vendors",)),
    _kb_kind(
        "results",
        "results.schema.json",
        Result,
        benchmark_id=("benchmarks",),
        chip_ids=("chips",),
        baseline_ids=("chips",),
        model_ids=("models",),
    ),
    _kb_kind(
        "funding_rounds",
        "funding-rounds.schema.json",
        FundingRound,
        vendor_id=("vendors",),
        acquirer_id=("vendors",),
    ),
    _kb_kind(
        "deployments", "deployments.schema.json", Deployment, chip_id=("chips",), operator_id=("vendors",)
    ),
    _kb_kind("claims", "claims.schema.json", Claim, subject_ids=_ENTITY_KINDS),
    _Kind(
        "signals", "signals-file.schema.json", Signal, {"subjects": _ENTITY_KINDS}, SIGNAL_DEFINITION_COLUMNS
    ),
    # Targets are not checked: an alias may name a chip only a dataset import creates.
    _Kind("aliases", "aliases.schema.json", Alias, {}, ("id", *AliasBase.model_fields)),
)
"""Every seedable kind, in load order (referenced kinds first)."""

_KIND_BY_SCHEMA = {k.schema: k for k in KINDS}
_FACT_KINDS = {model: path for path, model in KB_TABLES.items()}  # table -> fact history kind
_KIND_BY_NAME = {k.name: k for k in KINDS}


@dataclass
class _Entry:
    kind: _Kind
    file: str
    index: int
    data: dict[str, Any]

    @property
    def id(self) -> str:
        return self.data["id"]

    @property
    def label(self) -> str:
        return f"'{self.id}'"


# ---------------------------------------------------------------- public entry point
def load_seeds(*, session: Session, seed_dir: Path = SEED_DIR, schema_dir: Path = SCHEMA_DIR) -> SeedReport:
    """Validate every seed file in ``seed_dir`` and upsert its entries in ``session``'s transaction.

    Only flushes; the caller commits.  Running it twice changes nothing the second time (every row is
    reported unchanged); an edited value in a seed file updates that row on the next run; rows no seed
    file names are left alone.

    Returns a :class:`SeedReport` with inserted and updated ids and unchanged counts per kind.

    Raises :class:`SeedError` (a ``ValueError``), before anything is written, when a file cannot be
    parsed, names no schema or an unknown one, fails its schema, repeats an id, or references an id
    that neither the seed set nor the database holds.
    """
    seed_dir, schema_dir = Path(seed_dir), Path(schema_dir)
    entries, files = _read_and_validate(seed_dir, schema_dir)
    _check_consistency(entries, session)
    report = SeedReport(files=files, kinds={k.name: KindReport() for k in KINDS})
    by_kind: dict[str, list[_Entry]] = {k.name: [] for k in KINDS}
    for entry in entries:
        by_kind[entry.kind.name].append(entry)
    for kind in KINDS:
        _upsert(session, kind, by_kind[kind.name], report.kinds[kind.name])
    return report


# ---------------------------------------------------------------- phase 1: parse and validate
def _read_and_validate(seed_dir: Path, schema_dir: Path) -> tuple[list[_Entry], list[str]]:
    if not seed_dir.is_dir():
        raise SeedError([SeedIssue(str(seed_dir), "seed directory not found")])
    paths = sorted(p for p in seed_dir.iterdir() if p.is_file() and p.suffix in SEED_SUFFIXES)
    schemas, registry, issues = _load_schemas(schema_dir)
    entries: list[_Entry] = []
    for path in paths:
        file_issues, file_entries = _validate_file(path, schemas, registry, schema_dir)
        issues.extend(file_issues)
        entries.extend(file_entries)
    if issues:
        raise SeedError(issues)
    return entries, [p.name for p in paths]


def _load_schemas(schema_dir: Path) -> tuple[dict[str, dict[str, Any]], Registry, list[SeedIssue]]:
    """Every ``*.json`` schema in ``schema_dir`` by file name, and a registry resolving ``$ref`` between
    them by ``$id`` (and by bare file name, for schemas without one)."""
    schemas: dict[str, dict[str, Any]] = {}
    issues: list[SeedIssue] = []
    resources: list[tuple[str, Resource]] = []
    for path in sorted(schema_dir.glob("*.json")) if schema_dir.is_dir() else []:
        try:
            contents = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            issues.append(SeedIssue(f"schema/{path.name}", f"unreadable schema: {exc}"))
            continue
        if not isinstance(contents, dict):
            continue
        schemas[path.name] = contents
        resource = Resource.from_contents(contents, default_specification=DRAFT202012)
        resources.append((path.name, resource))
        if isinstance(contents.get("$id"), str):
            resources.append((contents["$id"], resource))
    return schemas, Registry().with_resources(resources), issues


def _validate_file(
    path: Path, schemas: dict[str, dict[str, Any]], registry: Registry, schema_dir: Path
) -> tuple[list[SeedIssue], list[_Entry]]:
    name = path.name
    try:
        text = path.read_text(encoding="utf-8")
        doc = json.loads(text) if path.suffix == ".json" else yaml.load(text, Loader=_SeedLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1} column {mark.column + 1}: " if mark else ""
        return [SeedIssue(name, f"YAML syntax error at {where}{exc.problem or exc}")], []
    except yaml.YAMLError as exc:
        return [SeedIssue(name, f"YAML syntax error: {exc}")], []
    except json.JSONDecodeError as exc:
        return [SeedIssue(name, f"JSON syntax error at line {exc.lineno} column {exc.colno}: {exc.msg}")], []
    except (OSError, ValueError) as exc:  # ValueError covers undecodable bytes and bad YAML scalars
        return [SeedIssue(name, f"unreadable: {exc}")], []

    if not isinstance(doc, dict):
        return [SeedIssue(name, "must be a mapping with '$schema' and a list of entries")], []
    declared = doc.get("$schema")
    if not isinstance(declared, str) or not declared.strip():
        return [
            SeedIssue(name, "names no schema; add '$schema: ../schema/<kind>.schema.json'", field="$schema")
        ], []
    # Seed files point at their schema by relative path or URL; only the file name matters here.
    schema_name = PurePosixPath(declared.strip()).name
    kind = _KIND_BY_SCHEMA.get(schema_name)
    schema = schemas.get(schema_name)
    if schema is None:
        return [
            SeedIssue(name, f"unknown schema '{declared}': no {schema_name} in {schema_dir}", field="$schema")
        ], []
    if kind is None:
        known = ", ".join(sorted(_KIND_BY_SCHEMA))
        return [
            SeedIssue(
                name, f"schema '{declared}' is not a seed file schema (one of: {known})", field="$schema"
            )
        ], []
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return [SeedIssue(f"schema/{schema_name}", f"invalid schema: {exc.message}")], []

    doc = _plain(doc)
    validator = Draft202012Validator(schema, registry=registry, format_checker=FormatChecker())
    errors = sorted(validator.iter_errors(doc), key=_document_order)
    if errors:
        return [_issue_from_error(name, kind, doc, error) for error in errors], []
    items = doc.get(kind.name) or []
    return [], [_Entry(kind, name, i, item) for i, item in enumerate(items)]


def _plain(value: Any) -> Any:
    """Values as JSON would hold them: mapping keys become strings, any date object an ISO string.

    Schemas describe dates as ``format: date`` strings, so an unquoted YAML date and a quoted ISO string
    are accepted alike; date columns are converted to dates when rows are written.
    """
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _document_order(error: ValidationError) -> list[tuple[int, Any]]:
    """Errors in the order their places appear in the file (list indexes compare as numbers)."""
    return [(0, p) if isinstance(p, int) else (1, str(p)) for p in error.absolute_path]


def _issue_from_error(file: str, kind: _Kind, doc: dict[str, Any], error: ValidationError) -> SeedIssue:
    """A schema error located by entry (its id, else its index) and the field inside the entry."""
    problem = describe(error)
    path = list(problem.path)
    entry: str | None = None
    if len(path) >= 2 and path[0] == kind.name and isinstance(path[1], int):
        item = doc[kind.name][path[1]]
        item_id = item.get("id") if isinstance(item, dict) else None
        entry = f"'{item_id}'" if isinstance(item_id, str) else f"[{path[1]}]"
        path = path[2:]
    return SeedIssue(file, _seed_wording(problem), entry=entry, field=field_path(path) or None)


def _seed_wording(problem: SchemaProblem) -> str:
    """The seed report quotes the validator for the generic keywords (``'700 W' is not of type
    'number'``), as operators editing YAML are used to; missing and unknown fields and a schema's own
    ``x-messages`` read as the shared formatter words them."""
    if problem.keyword == "required":
        return "required field is missing"
    if problem.keyword == "additionalProperties":
        hint = f"; did you mean {problem.suggestion!r}?" if problem.suggestion else ""
        return f"unknown field (not in the schema){hint}"
    return problem.message if problem.worded_by_schema else problem.native


# ---------------------------------------------------------------- phase 2: ids, ranges, references
def _check_consistency(entries: list[_Entry], session: Session) -> None:
    issues: list[SeedIssue] = []
    known: dict[str, set[str]] = {name: set() for name in (*_KIND_WORDS,)}
    first_seen: dict[tuple[str, str], _Entry] = {}
    for entry in entries:
        key = (entry.kind.name, entry.id)
        if key in first_seen:
            first = first_seen[key]
            issues.append(
                SeedIssue(
                    entry.file,
                    f"duplicate id; first defined in {first.file} entry [{first.index}]",
                    entry=f"{entry.label} [{entry.index}]",
                    field="id",
                )
            )
            continue
        first_seen[key] = entry
        if entry.kind.name in known:
            known[entry.kind.name].add(entry.id)
        issues.extend(_range_issues(entry))
        if entry.kind.name == "signals":
            issues.extend(_signal_rule_issues(entry))
    for name in known:
        model = _KIND_BY_NAME[name].model
        known[name].update(session.scalars(sa.select(model.id)))  # type: ignore[attr-defined]
    for entry in entries:
        issues.extend(_reference_issues(entry, known))
    if issues:
        raise SeedError(issues)


def _range_issues(entry: _Entry) -> Iterator[SeedIssue]:
    """A range keeps its bounds in order and its value at the midpoint (how the tables read ranges)."""
    data = entry.data
    low, high, value = data.get("value_min"), data.get("value_max"), data.get("value")
    if low is None or high is None:
        return
    if low > high:
        yield SeedIssue(entry.file, f"value_min {low} is above value_max {high}", entry.label, "value_min")
    elif data.get("comparator") == "range" and value is not None:
        midpoint = (low + high) / 2
        if not math.isclose(value, midpoint, rel_tol=1e-9, abs_tol=1e-12):
            yield SeedIssue(
                entry.file,
                f"{value} is not the midpoint of {low}..{high} (expected {midpoint:g})",
                entry.label,
                "value",
            )


def _signal_rule_issues(entry: _Entry) -> Iterator[SeedIssue]:
    """The signal language's own rules beyond its schema (a deadline before the opening date, bounds
    that exclude every value); references are checked with the other kinds' below. A valid entry gets
    the defaults the API gives (``review: auto``, subjects from the conditions)."""
    try:
        defn = validate_definition(entry.data)
    except DefinitionError as exc:
        for field, message in exc.problems:
            yield SeedIssue(entry.file, message, entry.label, field or None)
        return
    entry.data.setdefault("review", defn.review)
    entry.data.setdefault("subjects", list(defn.subjects))


def _reference_issues(entry: _Entry, known: dict[str, set[str]]) -> Iterator[SeedIssue]:
    for column, kinds in entry.kind.refs.items():
        value = entry.data.get(column)
        for ref in value if isinstance(value, list) else [value]:
            if isinstance(ref, str) and not any(ref in known[k] for k in kinds):
                yield SeedIssue(entry.file, _unknown(ref, kinds), entry.label, column)
    if entry.kind.name == "signals":
        for side in ("yes_when", "no_when"):
            for i, condition in enumerate(entry.data.get(side) or []):
                for cond_kind, spec in condition.items() if isinstance(condition, dict) else []:
                    for key, value in spec.items() if isinstance(spec, dict) else []:
                        kinds = _CONDITION_REFS.get((cond_kind, key))
                        if kinds is None:
                            continue
                        for ref in value if isinstance(value, list) else [value]:
                            if isinstance(ref, str) and not any(ref in known[k] for k in kinds):
                                where = f"{side}.{i}.{cond_kind}.{key}"
                                yield SeedIssue(entry.file, _unknown(ref, kinds), entry.label, where)


def _unknown(ref: str, kinds: tuple[str, ...]) -> str:
    words = [_KIND_WORDS[k] for k in kinds]
    what = words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]
    return f"unknown {what} id '{ref}' (not in the seed files or the database)"


# ---------------------------------------------------------------- phase 3: upsert
def _upsert(session: Session, kind: _Kind, entries: list[_Entry], report: KindReport) -> None:
    """Insert new ids; apply a changed seed entry unless its row was edited since the last load (then
    report a conflict and keep the edit); leave everything else. See :mod:`chipwatch.seed_state`."""
    if not entries:
        return
    # One read per table; rows are compared as column dicts rather than queried one by one.
    existing = {row.id: row for row in session.scalars(sa.select(kind.model))}  # type: ignore[attr-defined]
    fact_kind = _FACT_KINDS.get(kind.model)
    ledger = SeedLedger(session, kind.name, fact_kind=fact_kind)
    date_columns, seeded_columns = kind.date_columns, kind.seeded_columns
    for entry in entries:
        values = {
            column: _column_value(entry.data[column], column in date_columns)
            if column in entry.data
            else kind.default(column)
            for column in kind.columns
        }
        row = existing.get(entry.id)
        outcome, differs = ledger.decide(entry.id, {c: values[c] for c in seeded_columns}, row)
        if outcome == "insert":
            session.add(kind.model(**values))
            report.inserted.append(entry.id)
        elif outcome == "unchanged":
            report.unchanged += 1
        elif outcome == "keep_edit":
            report.kept.append(entry.id)
        elif outcome == "conflict":
            report.conflicts.append(SeedConflict(kind.name, entry.id, differs))
            if fact_kind is not None:
                record_change(session=session, kind=fact_kind, fact_id=entry.id, action="seed_conflict",
                              cause="seed", actor="seed", changes=differs, announce=False)
        else:
            for column, (_old, value) in differs.items():
                setattr(row, column, value)
            if kind.name == "signals":
                row.updated_at = utcnow()  # type: ignore[attr-defined]
            report.updated.append(entry.id)
            if fact_kind is not None:
                record_change(session=session, kind=fact_kind, fact_id=entry.id, action="updated",
                              cause="seed", actor="seed", changes=differs)
    session.flush()
    ledger.save(session, kind.model, seeded_columns)


def _column_value(value: Any, is_date: bool) -> Any:
    if is_date and isinstance(value, str):
        return date.fromisoformat(value)
    return value
