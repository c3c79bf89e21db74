"""The signal language: pydantic models and validation of signal definitions.

A definition is checked in three steps; a refusal is one ``DefinitionError`` listing every problem found,
each naming its field (``yes_when.0.item.number.unit``). When the schema refuses some fields, the third
step still checks the rest (the top-level fields and the conditions the schema accepted,
:func:`partial_problems`), so a client fixes a definition in one round:

1. against ``schema/signal.schema.json`` (JSON Schema 2020-12), the published contract; unknown keys are
   refused there, with a "did you mean" hint for typos;
2. by the pydantic models below, which mirror the schema so that code building definitions directly
   gets the same guarantees;
3. against the knowledge base when the caller passes ``known_entities`` / ``known_sources``, and for
   rules a schema cannot state (an opening date in the future, a deadline before it, bounds that exclude
   every value, too many terms): :mod:`chipwatch.signals.definition_checks`.

NaN, Infinity and containers nested too deep are refused with the schema's step (``kit.json_body``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from datetime import UTC, date, datetime
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal

from jsonschema import Draft202012Validator
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    StringConstraints,
    TypeAdapter,
    field_validator,
    model_validator,
)
from pydantic import ValidationError as PydanticError
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from chipwatch.kit.json_body import TOO_DEEP, body_problems
from chipwatch.kit.schema_errors import (
    describe_all,
    describe_each,
    field_path,
    json_type,
    most_relevant,
    one_per_string,
)
from chipwatch.paths import SCHEMA_DIR
from chipwatch.signals.definition_checks import MAX_CONDITIONS, semantic_problems
from chipwatch.text.numbers import Unit
from chipwatch.vocab.facts import ChangeCause, FactKind
from chipwatch.vocab.slugs import Slug
from chipwatch.vocab.status import Side
from chipwatch.vocab.trust import Trust
from chipwatch.vocab.verification import Verification

__all__ = [
    "SIGNAL_SCHEMA_ID",
    "ChangeCondition",
    "Condition",
    "DefinitionError",
    "DeploymentCondition",
    "FundingCondition",
    "ItemCondition",
    "NumberBound",
    "ResultCondition",
    "SignalDefinition",
    "ValueBound",
    "load_schema",
    "validate_definition",
    "validate_signals_document",
]

SIGNAL_SCHEMA_ID = "https://chipwatch.dev/schema/signal.schema.json"
SIGNAL_SCHEMA_FILE = "signal.schema.json"
SIGNALS_FILE_SCHEMA_FILE = "signals-file.schema.json"


SignalId = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{1,63}$")]
EntityId = Slug
Review = Literal["auto", "manual"]
"""``auto``: a match resolves the signal; ``manual``: a match moves it to ``pending_review``."""
OnDeadline = Literal["no", "annulled"]
"""The outcome an open signal resolves to when its deadline passes."""

Term = Annotated[str, StringConstraints(pattern=r"^[^*\s](?:[^*]*[^*\s])?\*?$")]
EntityIds = Annotated[list[EntityId], Field(min_length=1, max_length=100)]
RoundType = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_-]*$", max_length=32)]
"""A funding round's type as the knowledge base records it (seed, series_a, ipo, acquisition...)."""
Terms = Annotated[list[Term], Field(min_length=1, max_length=100)]


class DefinitionError(ValueError):
    """A signal definition was refused.

    ``problems`` lists every ``(field, message)`` found: ``field`` is a dotted path into the definition
    (``yes_when.0.item.number.unit``; empty for the whole document), ``message`` says what is wrong
    with it. ``field`` and ``message`` are the first problem's.
    """

    def __init__(self, field: str, message: str, problems: list[tuple[str, str]] | None = None) -> None:
        self.problems = problems or [(field, message)]
        self.field, self.message = self.problems[0]
        super().__init__("; ".join(f"{f}: {m}" if f else m for f, m in self.problems))

    @classmethod
    def of(cls, problems: list[tuple[str, str]]) -> DefinitionError:
        """One error for ``problems`` (at least one), duplicates dropped."""
        unique = list(dict.fromkeys(problems))
        return cls(unique[0][0], unique[0][1], unique)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NumberBound(_Strict):
    """A bound on a quantity read from an item's text, in ``unit`` (power converts: W, kW, MW, GW)."""

    unit: Unit
    gte: float | None = None
    gt: float | None = None
    lte: float | None = None
    lt: float | None = None
    eq: float | None = None

    @model_validator(mode="after")
    def _needs_a_bound(self) -> NumberBound:
        if all(getattr(self, k) is None for k in ("gte", "gt", "lte", "lt", "eq")):
            raise ValueError("a number condition needs at least one of gte, gt, lte, lt, eq")
        return self


class ValueBound(_Strict):
    """A bound on a knowledge-base result's value; ``tolerance_pct`` widens each bound by that share."""

    gte: float | None = None
    lte: float | None = None
    eq: float | None = None
    tolerance_pct: float | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _needs_a_bound(self) -> ValueBound:
        if self.gte is None and self.lte is None and self.eq is None:
            raise ValueError("a value condition needs at least one of gte, lte, eq")
        return self


class ItemCondition(_Strict):
    """Matches a news item when every given constraint holds (absent constraints are not checked)."""

    mentions_all: EntityIds | None = None
    mentions_any: EntityIds | None = None
    terms_all: Terms | None = None
    terms_any: Terms | None = None
    terms_none: Terms | None = None
    number: NumberBound | None = None
    source_trust: Annotated[list[Trust], Field(min_length=1)] | None = None
    sources: EntityIds | None = None
    published_after: date | None = None

    @model_validator(mode="after")
    def _needs_content(self) -> ItemCondition:
        keys = ("mentions_all", "mentions_any", "terms_all", "terms_any", "number")
        if all(getattr(self, k) is None for k in keys):
            raise ValueError(f"an item condition needs at least one of {', '.join(keys)}")
        return self


class ResultCondition(_Strict):
    """Matches a knowledge-base benchmark result when every given constraint holds.

    ``verification`` lists the accepted levels ("one of"); a single level is accepted as a one-element
    list, so ``independent`` means exactly independent and ``[witnessed, independent]`` means at least
    witnessed.
    """

    chip: EntityId | None = None
    baseline: EntityId | None = None
    model: EntityId | None = None
    benchmark: EntityId | None = None
    metric: str | None = Field(default=None, min_length=1)
    verification: Annotated[list[Verification], Field(min_length=1)] | None = None
    reported_by_not: EntityId | None = None
    value: ValueBound | None = None
    division: Literal["closed", "open"] | None = None
    scenario: Annotated[str, StringConstraints(min_length=1, max_length=64)] | None = None
    model_name: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = None

    @field_validator("verification", mode="before")
    @classmethod
    def _one_level_is_a_list(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v

    @model_validator(mode="after")
    def _needs_a_constraint(self) -> ResultCondition:
        if all(v is None for v in self.__dict__.values()):
            raise ValueError("a result condition needs at least one constraint")
        return self


class DeploymentCondition(_Strict):
    """Matches a knowledge-base deployment when every given constraint holds.

    ``capacity_mw_gte`` reads the capacity reached, never the target; ``by`` compares with the
    deployment's ``as_of`` (else ``published_on``), on or before.
    """

    chip: EntityId | None = None
    operator: EntityId | None = None
    capacity_mw_gte: float | None = Field(default=None, ge=0)
    by: date | None = None
    status: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z_-]*$")] | None = None

    @model_validator(mode="after")
    def _needs_a_constraint(self) -> DeploymentCondition:
        if all(v is None for v in self.__dict__.values()):
            raise ValueError("a deployment condition needs at least one constraint")
        return self


class FundingCondition(_Strict):
    """Matches a knowledge-base funding round (or acquisition) when every given constraint holds, e.g.
    "a closed round of Etched at a post-money valuation of at least $5 billion":
    ``{vendor: etched, status: closed, post_money_valuation_gte: 5e9, currency: USD}``.

    Amounts are in currency units, not millions. ``amount_gte`` and ``post_money_valuation_gte`` compare
    the round's own figures as recorded: with ``currency`` the round must be in that currency, and
    without it any currency is compared as is (no conversion). ``by`` compares with the round's
    ``announced_on`` (else ``as_of``, else ``published_on``), on or before.
    """

    vendor: EntityId | None = None
    round_type: Annotated[list[RoundType], Field(min_length=1)] | None = None
    status: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z_-]*$")] | None = None
    amount_gte: float | None = Field(default=None, ge=0)
    post_money_valuation_gte: float | None = Field(default=None, ge=0)
    currency: Annotated[str, StringConstraints(pattern=r"^[A-Z]{3}$")] | None = None
    by: date | None = None

    @field_validator("round_type", mode="before")
    @classmethod
    def _one_type_is_a_list(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v

    @model_validator(mode="after")
    def _needs_a_constraint(self) -> FundingCondition:
        if all(v is None for v in self.__dict__.values()):
            raise ValueError("a funding condition needs at least one constraint")
        return self


ChangeAction = Literal["updated", "retired", "restored", "retracted"]
"""What a change condition can watch for: every fact action but ``created`` (a new fact is matched by
the result and deployment conditions)."""
FieldName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)?$", max_length=64)]


class ChangeCondition(_Strict):
    """Matches a recorded change of a knowledge-base fact (an entry of its history), e.g. "a chip's TDP
    changed": ``{kind: chips, fact: google-tpu-v7-ironwood, fields: [nominal_power_w]}``.

    ``fields`` is satisfied when any of them changed (``attributes.<key>`` names one key); it implies
    ``action: updated``. ``action`` and ``cause`` list the accepted words (one word is a one-element list).
    """

    kind: FactKind
    fact: EntityId | None = None
    fields: Annotated[list[FieldName], Field(min_length=1)] | None = None
    action: Annotated[list[ChangeAction], Field(min_length=1)] | None = None
    cause: Annotated[list[ChangeCause], Field(min_length=1)] | None = None

    @field_validator("action", "cause", mode="before")
    @classmethod
    def _one_word_is_a_list(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v


ConditionKind = Literal["item", "result", "deployment", "funding", "change"]
CONDITION_KINDS: tuple[ConditionKind, ...] = ("item", "result", "deployment", "funding", "change")


class Condition(_Strict):
    """One entry of ``yes_when`` / ``no_when``: exactly one of ``item``, ``result``, ``deployment``,
    ``funding``, ``change``."""

    item: ItemCondition | None = None
    result: ResultCondition | None = None
    deployment: DeploymentCondition | None = None
    funding: FundingCondition | None = None
    change: ChangeCondition | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> Condition:
        given = [k for k in CONDITION_KINDS if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("a condition needs exactly one key: item, result, deployment, funding or change")
        return self

    @property
    def kind(self) -> ConditionKind:
        """Which of ``item``, ``result``, ``deployment``, ``funding``, ``change`` this condition is."""
        return next(k for k in CONDITION_KINDS if getattr(self, k) is not None)

    @property
    def body(
        self,
    ) -> ItemCondition | ResultCondition | DeploymentCondition | FundingCondition | ChangeCondition:
        """The condition's body (the model under its one key)."""
        body = self.item or self.result or self.deployment or self.funding or self.change
        assert body is not None  # guaranteed by _exactly_one
        return body


class SignalDefinition(_Strict):
    """A watch signal as written in ``seed_data/signals.yaml`` or posted to the API."""

    id: SignalId
    question: str = Field(min_length=1)
    description: str | None = None
    tags: list[EntityId] = Field(default_factory=list)
    opened_on: date
    deadline: date | None = None
    on_deadline: OnDeadline = "no"
    review: Review = "auto"
    require_fact: bool = False
    """True: a matching item is recorded as evidence but never moves the signal; only a knowledge-base
    fact does (a ``result``, ``deployment`` or ``funding`` condition, such as a fact an analyst accepted from
    news)."""
    subjects: list[EntityId] = Field(default_factory=list, max_length=100)
    """The entities the signal is about; when absent, those its conditions name
    (:meth:`condition_entities`)."""
    yes_when: Annotated[list[Condition], Field(min_length=1, max_length=MAX_CONDITIONS)]
    no_when: list[Condition] = Field(default_factory=list, max_length=MAX_CONDITIONS)
    _subjects_derived: bool = PrivateAttr(default=False)

    @model_validator(mode="after")
    def _subjects_default(self) -> SignalDefinition:
        if not self.subjects:
            self.subjects = self.condition_entities()
            self._subjects_derived = True
        return self

    @property
    def subjects_derived(self) -> bool:
        """True when ``subjects`` was absent and taken from the conditions."""
        return self._subjects_derived

    def condition_entities(self) -> list[str]:
        """The entity ids the conditions name as what they look for (mentions_all, mentions_any, chip,
        baseline, model, benchmark, operator, vendor; not ``reported_by_not``, which names who must not
        report it), each once, in the order they first appear."""
        seen: dict[str, None] = {}
        for field, ent in self._condition_refs():
            if not field.endswith(".reported_by_not"):
                seen.setdefault(ent, None)
        return list(seen)

    def conditions(self) -> Iterator[tuple[Side, int, Condition]]:
        """Every condition with its side and its index within that side's list."""
        for i, cond in enumerate(self.yes_when):
            yield "yes", i, cond
        for i, cond in enumerate(self.no_when):
            yield "no", i, cond

    def entity_refs(self) -> Iterator[tuple[str, str]]:
        """``(field, entity id)`` for every entity the definition names, subjects first (unless they were
        derived from the conditions, which then name each of them)."""
        if not self._subjects_derived:
            for i, ent in enumerate(self.subjects):
                yield f"subjects.{i}", ent
        yield from self._condition_refs()

    def _condition_refs(self) -> Iterator[tuple[str, str]]:
        for side, i, cond in self.conditions():
            base = f"{side}_when.{i}.{cond.kind}"
            body = cond.body
            if isinstance(body, ItemCondition):
                for key in ("mentions_all", "mentions_any"):
                    for j, ent in enumerate(getattr(body, key) or []):
                        yield f"{base}.{key}.{j}", ent
            elif isinstance(body, ChangeCondition):
                # A change names a fact, which a later import may create: it is not checked as an entity.
                continue
            else:
                if isinstance(body, ResultCondition):
                    keys: tuple[str, ...] = ("chip", "baseline", "model", "benchmark", "reported_by_not")
                elif isinstance(body, FundingCondition):
                    keys = ("vendor",)
                else:
                    keys = ("chip", "operator")
                for key in keys:
                    ent = getattr(body, key)
                    if ent is not None:
                        yield f"{base}.{key}", ent

    def entity_ids(self) -> set[str]:
        """Every entity id the definition names (subjects and conditions)."""
        return {ent for _field, ent in self.entity_refs()}

    def to_document(self) -> dict[str, Any]:
        """JSON-compatible dict that validates against the schema (absent optional keys omitted)."""
        return self.model_dump(mode="json", exclude_none=True)


# ---------------------------------------------------------------------------------------------------
# Schema loading
# ---------------------------------------------------------------------------------------------------


@cache
def load_schema(name: str = SIGNAL_SCHEMA_FILE, schema_dir: Path | None = None) -> dict[str, Any]:
    """Parse a schema file of the repository's ``schema/`` directory (cached).

    Raises ``FileNotFoundError`` when the project root is not a checkout (set CHIPWATCH_PROJECT_ROOT).
    """
    path = (schema_dir or SCHEMA_DIR) / name
    return json.loads(path.read_text(encoding="utf-8"))


@cache
def _validators() -> tuple[Draft202012Validator, Draft202012Validator]:
    signal_schema = load_schema(SIGNAL_SCHEMA_FILE)
    file_schema = load_schema(SIGNALS_FILE_SCHEMA_FILE)
    # The file schema refers to the signal schema by its $id; resolve it locally, never over the network.
    registry = Registry().with_resource(signal_schema["$id"], DRAFT202012.create_resource(signal_schema))
    fmt = Draft202012Validator.FORMAT_CHECKER
    return (
        Draft202012Validator(signal_schema, format_checker=fmt),
        Draft202012Validator(file_schema, registry=registry, format_checker=fmt),
    )


# ---------------------------------------------------------------------------------------------------
# Error reporting
# ---------------------------------------------------------------------------------------------------


def _check_schema(validator: Draft202012Validator, data: Any, prefix: str = "") -> None:
    # Values JSON has no words for, and nesting past the bound, first: the schema would accept NaN.
    raw = body_problems(data)
    if raw:
        raise DefinitionError.of([(field_path([p["field"]], prefix) if p["field"] != "body" else prefix,
                                   p["message"]) for p in raw])
    errors = list(validator.iter_errors(data))
    if errors:
        # The most relevant problem first (it is ``field``/``message``), then the rest top to bottom.
        first = most_relevant(errors)
        ordered = one_per_string(
            [*describe_each(first), *describe_all([e for e in errors if e is not first])]
        )
        raise DefinitionError.of([(field_path(p.path, prefix), p.message) for p in ordered])


def _schema_problems(validator: Draft202012Validator, data: Any) -> list[tuple[str, str]]:
    """Every ``(field, message)`` the JSON body rules and the schema find in ``data``: NaN, Infinity and
    nesting past the bound first (a body nested too deep is not read further), then the schema's, the
    most relevant first."""
    raw = body_problems(data)
    if any(p["message"] == TOO_DEEP for p in raw):
        return [(p["field"] if p["field"] != "body" else "", p["message"]) for p in raw]
    problems = [(p["field"] if p["field"] != "body" else "", p["message"]) for p in raw]
    errors = list(validator.iter_errors(data))
    if errors:
        first = most_relevant(errors)
        ordered = one_per_string(
            [*describe_each(first), *describe_all([e for e in errors if e is not first])]
        )
        problems += [(field_path(p.path), p.message) for p in ordered]
    return problems


class _WholeConditionRefused(Exception):
    pass


def _without(raw: Any, refused: list[list[str]]) -> Any:
    # A condition the schema refused in part: its constraints the schema did not name are still checked
    # (an unknown chip beside a misspelt verification), so each refused constraint is dropped whole.
    if not isinstance(raw, Mapping) or len(raw) != 1:
        raise _WholeConditionRefused
    [(kind, body)] = raw.items()
    if not isinstance(body, Mapping) or any(len(path) < 2 or path[0] != kind for path in refused):
        raise _WholeConditionRefused
    dropped = {path[1] for path in refused}
    return {kind: {key: value for key, value in body.items() if key not in dropped}}


def _placeholder() -> Condition:
    # Stands for a condition the schema refused, keeping the others' indexes; as a change condition it
    # names no entity and has no bounds, so the checks find nothing in it.
    return Condition.model_construct(change=ChangeCondition.model_construct())


def partial_problems(
    doc: dict[str, Any],
    refused: set[str],
    *,
    known_entities: set[str] | None,
    known_sources: set[str] | None,
) -> list[tuple[str, str]]:
    """The checks of :func:`~chipwatch.signals.definition_checks.semantic_problems` over the parts of
    ``doc`` that the fields in ``refused`` (dotted paths) leave intact: the top-level fields and the
    single conditions not refused, each validated on its own. Fields are relative to ``doc``."""
    tops = {field.split(".", 1)[0] for field in refused}
    parts: dict[str, Any] = {"opened_on": None, "deadline": None, "yes_when": [], "no_when": []}
    for name in ("opened_on", "deadline", "subjects"):
        if name in doc and name not in tops:
            try:
                parts[name] = _field_adapter(name).validate_python(doc[name])
            except PydanticError:
                continue
    for side in ("yes_when", "no_when"):
        conditions = doc.get(side)
        if not isinstance(conditions, list):
            continue
        if side in refused:  # the list itself (its size, its type) was refused
            continue
        steps = [f.split(".") for f in refused if f.startswith(f"{side}.")]
        bad: dict[int, list[list[str]]] = {}
        for step in steps:
            if step[1].isdigit():
                bad.setdefault(int(step[1]), []).append(step[2:])
        built = []
        for i, raw in enumerate(conditions):
            try:
                built.append(Condition.model_validate(_without(raw, bad[i]) if i in bad else raw))
            except (PydanticError, _WholeConditionRefused):
                built.append(_placeholder())
        parts[side] = built
    defn = SignalDefinition.model_construct(**parts)
    today = datetime.now(UTC).date()
    problems = semantic_problems(
        defn, known_entities=known_entities, known_sources=known_sources, today=today
    )
    return [(field, message) for field, message in problems if field not in refused]


@cache
def _field_adapter(name: str) -> TypeAdapter[Any]:
    field = SignalDefinition.model_fields[name]
    return TypeAdapter(Annotated[(field.annotation, *field.metadata)] if field.metadata else field.annotation)


def _jsonable(value: Any) -> Any:
    """YAML gives dates and datetimes; the schema speaks JSON, so they become ISO strings."""
    if isinstance(value, Mapping):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, date | datetime):
        return value.isoformat()
    return value


def _build(
    data: dict[str, Any],
    prefix: str,
    known_entities: set[str] | None,
    known_sources: set[str] | None,
) -> SignalDefinition:
    try:
        defn = SignalDefinition.model_validate(data)
    except PydanticError as exc:
        # The schema already refused anything the models refuse; this keeps the field naming if not.
        raise DefinitionError.of([(field_path(e["loc"], prefix), e["msg"]) for e in exc.errors()]) from exc
    problems = []
    if not defn.subjects:
        problems.append((
            "subjects",
            "is required when no condition names an entity (mentions_all, mentions_any, chip, baseline, "
            "model, benchmark or operator)",
        ))
    problems += semantic_problems(
        defn, known_entities=known_entities, known_sources=known_sources, today=datetime.now(UTC).date()
    )
    if problems:
        raise DefinitionError.of([(field_path([field], prefix), message) for field, message in problems])
    return defn


# ---------------------------------------------------------------------------------------------------
# Public entry points
# ---------------------------------------------------------------------------------------------------


def validate_definition(
    data: dict[str, Any],
    *,
    known_entities: set[str] | None = None,
    known_sources: set[str] | None = None,
) -> SignalDefinition:
    """Validate one signal definition (a dict from YAML or JSON) and return the model.

    The JSON Schema runs first, then the models, then the checks against the knowledge base:
    ``known_entities`` (every entity id: vendors, chips, models, benchmarks) refuses unknown ids in
    subjects, mentions_*, chip, baseline, model, benchmark, reported_by_not, operator and vendor;
    ``known_sources`` refuses unknown ids in ``sources``. ``None`` skips that check.

    Raises ``DefinitionError`` listing every offending field of the first step that found any.
    """
    if not isinstance(data, Mapping):
        raise DefinitionError("", f"a signal definition must be an object; got {json_type(data)}")
    doc = _jsonable(data)
    problems = _schema_problems(_validators()[0], doc)
    if problems:
        # The parts the schema accepted are still checked, so one refusal lists everything to fix.
        problems += partial_problems(
            doc, {field for field, _message in problems}, known_entities=known_entities,
            known_sources=known_sources,
        )
        raise DefinitionError.of(problems)
    return _build(doc, "", known_entities, known_sources)


def validate_signals_document(
    data: dict[str, Any],
    *,
    known_entities: set[str] | None = None,
    known_sources: set[str] | None = None,
) -> list[SignalDefinition]:
    """Validate a signals file (``{"$schema": ..., "signals": [...]}``) and return its definitions.

    Checks ``schema/signals-file.schema.json`` (which includes the signal schema), then each signal as
    ``validate_definition`` does, then that ids are unique. Fields are named from the file's root:
    ``signals.3.yes_when.0.item.mentions_all.0``.

    Raises ``DefinitionError``.
    """
    if not isinstance(data, Mapping):
        raise DefinitionError("", f"a signals file must be an object; got {json_type(data)}")
    doc = _jsonable(data)
    _check_schema(_validators()[1], doc)
    out: list[SignalDefinition] = []
    seen: dict[str, int] = {}
    for i, raw in enumerate(doc["signals"]):
        defn = _build(raw, f"signals.{i}", known_entities, known_sources)
        if defn.id in seen:
            first = seen[defn.id]
            raise DefinitionError(f"signals.{i}.id", f"duplicate id {defn.id!r} (also signals.{first})")
        seen[defn.id] = i
        out.append(defn)
    return out
