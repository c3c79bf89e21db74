"""Stored signal definitions, the entities they name, and their compiled rules cached per process.

``compiled_rules`` is what every evaluation of items and facts matches against: the definitions of every
stored signal compiled once (``rules.compile_signals``) and compiled again only when a definition or a
name they use changes, in this process or in another one (API replica, worker).
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Iterable, Sequence
from datetime import date
from typing import Any

import orjson
from sqlalchemy import String, bindparam, cast, func, literal, null, select, union_all
from sqlmodel import Session

from chipwatch.knowledge.models import ENTITY_TABLES
from chipwatch.signals.definition import DefinitionError, SignalDefinition
from chipwatch.signals.models import Signal
from chipwatch.signals.rules import CompiledRules, compile_signals
from chipwatch.text.entities import Entity

__all__ = [
    "DEFINITION_COLUMNS",
    "all_entity_ids",
    "clear_rules_cache",
    "compiled_rules",
    "definition_document",
    "definition_of",
    "entities_for",
    "rules_compilations",
]

log = logging.getLogger("chipwatch.signals")

DEFINITION_COLUMNS = (
    "id",
    "question",
    "description",
    "tags",
    "opened_on",
    "deadline",
    "on_deadline",
    "review",
    "require_fact",
    "subjects",
    "yes_when",
    "no_when",
)
"""Signal columns that hold the definition (the rest is state owned by evaluation)."""


def definition_document(signal: Signal) -> dict[str, Any]:
    """The signal's definition as a JSON-ready dict (the shape ``POST /v1/signals`` takes)."""
    doc: dict[str, Any] = {}
    for column in DEFINITION_COLUMNS:
        value = getattr(signal, column)
        if isinstance(value, date):
            value = value.isoformat()
        if value is None and column == "description":
            continue
        doc[column] = value
    return doc


def definition_of(signal: Signal) -> SignalDefinition:
    """The validated model of a stored signal's definition.

    Stored definitions passed ``validate_definition`` when written, so only the models run here (the
    schema check is skipped). Raises ``DefinitionError`` if the row was edited into an invalid shape.
    """
    try:
        return SignalDefinition.model_validate(definition_document(signal))
    except ValueError as exc:
        raise DefinitionError("", f"stored signal {signal.id!r} is invalid: {exc}") from exc


def _entity_rows(session: Session, ids: Iterable[str] | None) -> list[tuple[str, str, tuple[str, ...]]]:
    """``(id, name, aliases)`` of the named entities (every entity in force when ``ids`` is None: a
    retracted one may not be named by a new definition), sorted."""
    wanted = None if ids is None else sorted(set(ids))
    if wanted == []:
        return []
    selects = []
    for table in ENTITY_TABLES.values():
        stmt = select(table.id, table.name, table.aliases)
        if wanted is not None:
            stmt = stmt.where(table.id.in_(wanted))
        else:
            stmt = stmt.where(table.retracted_at.is_(None))
        selects.append(stmt)
    rows = session.execute(union_all(*selects)).all()
    return sorted((r[0], r[1], tuple(r[2] or ())) for r in rows)


def entities_for(*, session: Session, entity_ids: Iterable[str] | None = None) -> list[Entity]:
    """Matcher entities (id, name and aliases) for ``entity_ids`` (every KB entity when None)."""
    return [Entity(i, (name, *aliases)) for i, name, aliases in _entity_rows(session, entity_ids)]


def all_entity_ids(*, session: Session) -> set[str]:
    """Every vendor, chip, model and benchmark id (what signal definitions may name)."""
    return {i for i, _n, _a in _entity_rows(session, None)}


@functools.cache
def _fingerprint_query() -> Any:
    """What the compiled rules depend on, in one round trip: a ``signals`` row (``count(*)`` and
    ``max(updated_at)`` of the signals, as text) and an ``entity`` row (id, name, aliases as their stored
    JSON text, undecoded) for each id bound to ``ids`` (expanding). Built once, so the statement's
    compiled form is cached too."""
    signals = select(
        literal("signals").label("origin"),
        cast(func.count(), String).label("id"),
        cast(func.max(Signal.updated_at), String).label("name"),
        null().label("aliases"),
    )
    ids = bindparam("ids", expanding=True)
    entities = [
        select(literal("entity").label("origin"), table.id, table.name, cast(table.aliases, String))
        .where(table.id.in_(ids))
        for table in ENTITY_TABLES.values()
    ]
    return union_all(signals, *entities)


class _RulesCache:
    """Process-wide compiled rules, rebuilt only when the definitions or the names they use change.

    The fingerprint is one read (:func:`_fingerprint_query`): ``count(*), max(updated_at)`` of the
    signals (every definition write bumps ``updated_at``: the signals service and the seed loader do)
    and the name and aliases, undecoded, of the entities the definitions name. It is read from the
    database on every call, so a definition or alias written by another process (API replica, worker) is
    picked up at once; the aliases are decoded only when a name changed.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._signals_key: tuple[Any, ...] | None = None
        self._defs: list[SignalDefinition] = []
        self._entity_ids: tuple[str, ...] = ()
        self._entity_key: tuple[Any, ...] | None = None
        self._rules: CompiledRules | None = None
        self.compilations = 0

    def get(self, session: Session) -> CompiledRules:
        url = str(session.get_bind().engine.url)
        with self._lock:
            known_ids = self._entity_ids
        signals_key, entity_key = _read_fingerprint(session, url, known_ids)
        with self._lock:
            same_defs = signals_key == self._signals_key
            if same_defs and entity_key == self._entity_key and self._rules is not None:
                return self._rules
            defs, entity_ids = (self._defs, self._entity_ids) if same_defs else (None, None)
        if defs is None or entity_ids is None:
            defs = self._load_definitions(session)
            entity_ids = tuple(sorted(set().union(*(d.entity_ids() for d in defs)))) if defs else ()
        if entity_ids != known_ids:  # the names were read for other definitions
            signals_key, entity_key = _read_fingerprint(session, url, entity_ids)
        entities = [Entity(i, (n, *_aliases(a))) for i, n, a in entity_key]
        rules = _compile_tolerant(defs, entities)
        with self._lock:
            self._signals_key, self._defs, self._entity_ids = signals_key, defs, entity_ids
            self._entity_key, self._rules = entity_key, rules
            self.compilations += 1
        log.info("signal rules compiled", extra={"signals": len(rules.signal_ids)})
        return rules

    @staticmethod
    def _load_definitions(session: Session) -> list[SignalDefinition]:
        defs = []
        for signal in session.scalars(select(Signal).order_by(Signal.id)):
            try:
                defs.append(definition_of(signal))
            except DefinitionError:
                log.exception("stored signal definition skipped", extra={"signal_id": signal.id})
        return defs

    def clear(self) -> None:
        with self._lock:
            self._signals_key = self._entity_key = self._rules = None
            self._defs, self._entity_ids = [], ()


def _compile_tolerant(defs: Sequence[SignalDefinition], entities: Sequence[Entity]) -> CompiledRules:
    """Compile every definition; one that names a vanished entity is left out (logged), not fatal."""
    try:
        return compile_signals(defs, entities)
    except DefinitionError:
        kept = []
        for defn in defs:
            try:
                compile_signals([defn], entities)
                kept.append(defn)
            except DefinitionError as exc:
                log.error("signal left out of matching: %s", exc, extra={"signal_id": defn.id})
        return compile_signals(kept, entities)


def _read_fingerprint(
    session: Session, url: str, ids: tuple[str, ...]
) -> tuple[tuple[Any, ...], tuple[tuple[str, str, str | None], ...]]:
    """``((url, signal count, latest update), sorted (id, name, aliases JSON text) of ``ids``)``."""
    rows = session.execute(_fingerprint_query(), {"ids": list(ids)}).all()
    signals_key: tuple[Any, ...] = (url,)
    entities = []
    for origin, ident, name, aliases in rows:
        if origin == "signals":
            signals_key = (url, ident, name)
        else:
            entities.append((ident, name, aliases))
    entities.sort(key=lambda row: (row[0], row[1], row[2] or ""))
    return signals_key, tuple(entities)


def _aliases(stored: str | None) -> tuple[str, ...]:
    return tuple((orjson.loads(stored) if stored else None) or ())


_rules_cache = _RulesCache()


def compiled_rules(*, session: Session) -> CompiledRules:
    """The compiled rules of every stored signal (cached process-wide; see ``_RulesCache``)."""
    return _rules_cache.get(session)


def clear_rules_cache() -> None:
    """Forget the compiled rules (tests; the fingerprint makes this unnecessary in service)."""
    _rules_cache.clear()


def rules_compilations() -> int:
    """How many times the process compiled the full rule set (tests check the cache with it)."""
    return _rules_cache.compilations
