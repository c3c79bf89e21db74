"""Signal queries and changes: the board, one signal with its evidence, its history, watch health;
create and change definitions; an analyst's resolve, reject and reopen; the transitions feed.

Each function an endpoint calls returns what the endpoint answers (a page, a ``SignalWithEvidence``,
the Atom bytes), so a route makes one call and maps the errors named in its docstring.
"""

from __future__ import annotations

import functools
from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy import bindparam, func, select
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

from chipwatch.kit.pagination import KeysetQuery
from chipwatch.kit.rows import column_rows
from chipwatch.kit.time import utcnow
from chipwatch.signals.atom import render_feed
from chipwatch.signals.definition import DefinitionError, SignalDefinition, validate_definition
from chipwatch.signals.evaluation import evaluate_signal, read_findings, snapshot_still_valid
from chipwatch.signals.events import evidence_data
from chipwatch.signals.manual import apply_manual
from chipwatch.signals.models import Evidence, Signal, SignalHistory
from chipwatch.signals.record import EvaluationReport, SignalNotFound
from chipwatch.signals.rules_cache import all_entity_ids, definition_document, definition_of
from chipwatch.signals.schemas import EvidenceSource, SignalWithEvidence
from chipwatch.signals.state import TransitionNotAllowed
from chipwatch.signals.watch import FeedWatch, watched_feed_ids
from chipwatch.sources.models import Source

__all__ = [
    "DefinitionError",
    "SignalExists",
    "SignalNotFound",
    "TransitionNotAllowed",
    "create_signal",
    "evidence_view",
    "get_signal",
    "history_view",
    "known_source_ids",
    "latest_evidence",
    "list_signals",
    "recent_transitions",
    "reject_signal",
    "reopen_signal",
    "resolve_signal",
    "signal_detail",
    "signal_history",
    "signal_summary",
    "signal_view",
    "transitions_feed",
    "update_signal",
]


def _isoformat(moment: date | datetime | None) -> str | None:
    # The API has always written times with ``datetime.isoformat`` (``+00:00``); events use RFC 3339 ``Z``.
    return moment.isoformat() if moment is not None else None


def signal_summary(signal: Signal, watch: FeedWatch) -> dict[str, Any]:
    """The board view of a signal (JSON-ready dict); ``watch`` is the enabled feeds, read once per board."""
    return {
        "id": signal.id,
        "question": signal.question,
        "status": signal.status,
        "outcome": signal.outcome,
        "version": signal.version,
        "review": signal.review,
        "opened_on": signal.opened_on.isoformat(),
        "deadline": _isoformat(signal.deadline),
        "on_deadline": signal.on_deadline,
        "resolved_at": _isoformat(signal.resolved_at),
        "known_at": _isoformat(signal.known_at),
        "subjects": signal.subjects,
        "watch_health": watch.health(signal.yes_when, signal.no_when),
    }


def list_signals(
    *,
    session: Session,
    status: str | None = None,
    outcome: str | None = None,
    limit: int,
    cursor: str | None = None,
) -> dict[str, Any]:
    """One page of the board ordered by id: ``{"items": [SignalPublic...], "next_cursor": ...}``.

    ``status`` and ``outcome`` filter when given. Raises a 422 ``ApiError`` naming ``cursor`` when the
    cursor is malformed.
    """
    # Only the columns the board shows: no ORM objects (identity map, change tracking) for a read.
    query = _board_query(status=bool(status), outcome=bool(outcome))
    params = {"status": status, "outcome": outcome}
    rows, next_cursor = query.page(session, params, cursor=cursor, limit=limit)
    watch = FeedWatch.load(session=session, signals=rows)
    return {"items": [signal_summary(s, watch) for s in rows], "next_cursor": next_cursor}


@functools.cache
def _board_query(*, status: bool, outcome: bool) -> KeysetQuery:
    """The board's page query with these filters (bound as ``status`` and ``outcome``), built once."""
    stmt = _BOARD
    if status:
        stmt = stmt.where(Signal.status == bindparam("status"))
    if outcome:
        stmt = stmt.where(Signal.outcome == bindparam("outcome"))
    return KeysetQuery(stmt, keys=(Signal.id,))


_BOARD_COLUMNS = (
    Signal.id, Signal.question, Signal.status, Signal.outcome, Signal.version, Signal.review,
    Signal.opened_on, Signal.deadline, Signal.on_deadline, Signal.resolved_at, Signal.known_at,
    Signal.subjects, Signal.yes_when, Signal.no_when,
)
_DETAIL_COLUMNS = (*_BOARD_COLUMNS, Signal.description, Signal.tags, Signal.require_fact)
_EVIDENCE_COLUMNS = (
    Evidence.id, Evidence.ref_kind, Evidence.ref_id, Evidence.side, Evidence.condition_index, Evidence.reason,
    Evidence.trust, Evidence.source_id, Evidence.title, Evidence.url, Evidence.published_at,
    Evidence.recorded_at, Evidence.sources,
)
_CARRIER_FIELDS = tuple(EvidenceSource.model_fields)
# Built once: statements are immutable, and coercing their columns costs about as much as a small page.
_BOARD = select(*_BOARD_COLUMNS)
_DETAIL = select(*_DETAIL_COLUMNS)
_EVIDENCE = (
    select(*_EVIDENCE_COLUMNS).where(Evidence.signal_id == bindparam("signal_id")).order_by(Evidence.id)
)
_ONE_SIGNAL = _DETAIL.where(Signal.id == bindparam("signal_id"))


def evidence_view(ev: Evidence) -> dict[str, Any]:
    """JSON-ready evidence row (``EvidencePublic``)."""
    return evidence_data(ev, moment=_isoformat)


def signal_view(*, session: Session, signal: Any) -> dict[str, Any]:
    """A signal as ``GET /v1/signals/{id}`` answers it (``SignalWithEvidence``), JSON-ready: board view,
    definition, watched sources and every evidence row, oldest first. ``signal`` is a Signal or a row
    with the same attributes; the evidence is read as columns, one dict per row with no model built."""
    watch = FeedWatch.load(session=session, signals=[signal])
    evidence = column_rows(session, _EVIDENCE, {"signal_id": signal.id}).all()
    return {
        **signal_summary(signal, watch),
        "description": signal.description,
        "tags": signal.tags,
        "require_fact": signal.require_fact,
        "yes_when": signal.yes_when,
        "no_when": signal.no_when,
        "watched_sources": watched_feed_ids(
            session=session, yes_when=signal.yes_when, no_when=signal.no_when
        ),
        "evidence": _evidence_views(evidence),
    }


def _evidence_views(rows: Any) -> list[dict[str, Any]]:
    """``_EVIDENCE`` rows as ``EvidencePublic`` dicts, the fields of
    :func:`~chipwatch.signals.events.evidence_data` (``tests/signals/test_detail_cache.py`` holds them
    equal) in one pass: a busy signal has thousands of rows, and a call and a dict copy per row were
    most of its detail's time."""
    carrier_fields = _CARRIER_FIELDS
    views = []
    for (id_, ref_kind, ref_id, side, index, reason, trust, source_id, title, url, published_at, recorded_at,
         sources) in rows:
        views.append({
            "id": id_, "ref_kind": ref_kind, "ref_id": str(ref_id), "side": side, "condition_index": index,
            "reason": reason, "trust": trust, "source_id": source_id, "title": title, "url": url,
            "published_at": published_at.isoformat() if published_at is not None else None,
            "recorded_at": recorded_at.isoformat() if recorded_at is not None else None,
            # The published shape of a carrier is EvidenceSource's fields, whatever a row stored.
            "sources": [{f: c.get(f) for f in carrier_fields} for c in sources or ()],
        })
    return views


def signal_detail(*, session: Session, signal: Signal) -> SignalWithEvidence:
    """A signal with its definition, watched sources and every evidence row (oldest first), as the model
    the write endpoints answer (:func:`signal_view`, validated)."""
    return SignalWithEvidence(**signal_view(session=session, signal=signal))


def latest_evidence(*, session: Session) -> dict[str, dict[str, Any]]:
    """Each signal's most recently recorded evidence (its highest evidence id) as ``EvidencePublic``
    dicts by signal id, in one query; a signal without evidence is absent (the board's "last evidence")."""
    newest = select(func.max(Evidence.id)).group_by(Evidence.signal_id)
    rows = session.scalars(select(Evidence).where(Evidence.id.in_(newest)))
    return {e.signal_id: evidence_view(e) for e in rows}


def _existing(session: Session, signal_id: str) -> Signal:
    signal = session.get(Signal, signal_id)
    if signal is None:
        raise SignalNotFound(signal_id)
    return signal


def get_signal(*, session: Session, signal_id: str) -> dict[str, Any]:
    """One signal with its evidence as a JSON-ready ``SignalWithEvidence`` dict (:func:`signal_view`),
    read as columns. Raises ``SignalNotFound``."""
    signal = column_rows(session, _ONE_SIGNAL, {"signal_id": signal_id}).first()
    if signal is None:
        raise SignalNotFound(signal_id)
    return signal_view(session=session, signal=signal)


def history_view(row: SignalHistory) -> dict[str, Any]:
    """JSON-ready history row."""
    return {
        "id": row.id,
        "version": row.version,
        "from_status": row.from_status,
        "to_status": row.to_status,
        "from_outcome": row.from_outcome,
        "to_outcome": row.to_outcome,
        "cause": row.cause,
        "note": row.note,
        "evidence_ids": row.evidence_ids,
        "known_at": _isoformat(row.known_at),
        "at": row.at.isoformat(),
    }


def signal_history(*, session: Session, signal_id: str) -> dict[str, Any]:
    """Every transition of a signal, oldest first, as one page (``next_cursor`` is always null).

    Raises ``SignalNotFound``.
    """
    _existing(session, signal_id)
    rows = session.scalars(
        select(SignalHistory).where(SignalHistory.signal_id == signal_id).order_by(SignalHistory.id)
    ).all()
    return {"items": [history_view(r) for r in rows], "next_cursor": None}


# ---------------------------------------------------------------- changes
class SignalExists(ValueError):
    """A create names an id that is taken."""

    def __init__(self, signal_id: str) -> None:
        super().__init__(f"a signal with id {signal_id!r} exists already")
        self.signal_id = signal_id


def known_source_ids(*, session: Session) -> set[str]:
    """Every source id (what an item condition's ``sources`` may name)."""
    return set(session.scalars(select(Source.id)))


def _validate(session: Session, document: dict[str, Any]) -> SignalDefinition:
    return validate_definition(
        document,
        known_entities=all_entity_ids(session=session),
        known_sources=known_source_ids(session=session),
    )


def definition_problems(
    *, session: Session, document: dict[str, Any], signal_id: str | None = None
) -> list[tuple[str, str]]:
    """Every ``(field, message)`` :func:`create_signal` would refuse ``document`` for, or with
    ``signal_id`` :func:`update_signal` a change of that signal; nothing is written. Used to report a
    body's problems with those the request layer found (``kit.validation``)."""
    if signal_id is not None:
        signal = session.get(Signal, signal_id)
        if signal is None:
            return []
        document = {**definition_document(signal), **document}
    try:
        _validate(session, document)
    except DefinitionError as exc:
        return list(exc.problems)
    return []


def _definition_columns(defn: SignalDefinition) -> dict[str, Any]:
    doc = defn.to_document()
    return {
        "id": defn.id,
        "question": defn.question,
        "description": defn.description,
        "tags": list(defn.tags),
        "opened_on": defn.opened_on,
        "deadline": defn.deadline,
        "on_deadline": defn.on_deadline,
        "review": defn.review,
        "require_fact": defn.require_fact,
        "subjects": list(defn.subjects),
        "yes_when": doc["yes_when"],
        "no_when": doc.get("no_when", []),
    }


def _definition_stamp(session: Session, now: datetime) -> datetime:
    """``updated_at`` for a definition write: ``now``, but always after every stored one.

    The compiled-rules cache of every process notices definition changes by ``max(updated_at)`` (see
    ``rules_cache._RulesCache``); a clock running behind another process's must not hide a change.
    """
    latest = session.execute(select(func.max(Signal.updated_at))).scalar_one_or_none()
    if latest is not None and latest >= now:
        return latest + timedelta(microseconds=1)
    return now


def create_signal(
    *,
    session: Session,
    signal_in: dict[str, Any],
    today: date | None = None,
    now: datetime | None = None,
    snapshot: Session | None = None,
) -> tuple[SignalWithEvidence, EvaluationReport]:
    """:func:`store_signal`, answered as the API shows the signal, read in ``session``'s transaction.

    Raises what :func:`store_signal` raises.
    """
    row, report = store_signal(session=session, signal_in=signal_in, today=today, now=now, snapshot=snapshot)
    return signal_detail(session=session, signal=row), report


def store_signal(
    *,
    session: Session,
    signal_in: dict[str, Any],
    today: date | None = None,
    now: datetime | None = None,
    snapshot: Session | None = None,
) -> tuple[Signal, EvaluationReport]:
    """Validate and store a new signal, then evaluate it against every stored item and fact and its
    deadline (a signal created after its deadline resolves at once to ``on_deadline``).

    ``signal_in`` is the definition as JSON (``schema/signal.schema.json``). With ``snapshot`` (a
    read-only session), the stored items are matched there first, so ``session``'s write transaction
    only reads what was written since (:func:`~chipwatch.signals.evaluation.read_findings`); the
    definition is validated there too, and again in ``session`` only when an entity it names changed
    meanwhile.

    Returns the stored row (after its evaluation) and the evaluation report; the API's answer is read
    after the commit (:func:`get_signal`), so the write lock is not held while thousands of evidence
    rows are shaped. Raises ``DefinitionError`` naming the field (an unknown entity or source id is
    named in the message) or ``SignalExists``.
    """
    prepared = None
    if snapshot is not None:
        # Everything that only reads runs before the write transaction takes the lock: validation against
        # the known entities and sources, and matching the stored items and facts.
        defn = _validate(snapshot, signal_in)
        if snapshot.get(Signal, defn.id) is not None:
            raise SignalExists(defn.id)
        prepared = read_findings(session=snapshot, definition=defn)
    if prepared is None or not snapshot_still_valid(session=session, snapshot=prepared):
        defn = _validate(session, signal_in)
    if session.get(Signal, defn.id) is not None:
        raise SignalExists(defn.id)
    now = now or utcnow()
    row = Signal(**_definition_columns(defn), created_at=now, updated_at=_definition_stamp(session, now))
    session.add(row)
    try:
        session.flush()
    except IntegrityError as exc:  # a concurrent create took the id between the check and the insert
        raise SignalExists(defn.id) from exc
    report = evaluate_signal(session=session, signal_id=defn.id, today=today, now=now, snapshot=prepared)
    return row, report


def update_signal(
    *,
    session: Session,
    signal_id: str,
    changes: dict[str, Any],
    today: date | None = None,
    now: datetime | None = None,
    snapshot: Session | None = None,
) -> tuple[SignalWithEvidence, EvaluationReport]:
    """:func:`store_signal_changes`, answered as the API shows the signal, read in ``session``'s
    transaction. Raises what :func:`store_signal_changes` raises."""
    row, report = store_signal_changes(
        session=session, signal_id=signal_id, changes=changes, today=today, now=now, snapshot=snapshot
    )
    return signal_detail(session=session, signal=row), report


def store_signal_changes(
    *,
    session: Session,
    signal_id: str,
    changes: dict[str, Any],
    today: date | None = None,
    now: datetime | None = None,
    snapshot: Session | None = None,
) -> tuple[Signal, EvaluationReport]:
    """Change definition fields of a signal and evaluate it again.

    ``changes`` holds any definition fields except ``id`` (``deadline: null`` removes the deadline).
    The merged definition is validated as a whole, then every stored item and fact is checked again.
    When the conditions change, evidence that no move used and that the new conditions do not match is
    dropped (it answered conditions that no longer exist); a changed deadline may be warned about again.
    State, history and the evidence history rows cite stay.

    With ``snapshot`` (a read-only session), the stored items are matched there first, as in
    :func:`create_signal`; a definition changed meanwhile by another writer is evaluated in full.

    Returns the stored row and the evaluation report (the API reads its answer after the commit, as
    for :func:`store_signal`). Raises ``SignalNotFound`` or ``DefinitionError``.
    """
    if not isinstance(changes, dict):
        raise DefinitionError("", "a change must be an object of definition fields")
    if "id" in changes and changes["id"] != signal_id:
        # The other changes are checked too, so one refusal lists everything to fix.
        refused = [("id", "cannot be changed; create a new signal instead")]
        rest = {key: value for key, value in changes.items() if key != "id"}
        try:
            _validate(session, _changed_document(_existing(session, signal_id), rest))
        except DefinitionError as exc:
            raise DefinitionError.of(refused + exc.problems) from exc
        raise DefinitionError.of(refused)
    prepared = before = None
    if snapshot is not None:
        # Validation and matching only read: done before the write transaction takes the lock.
        before = _existing(snapshot, signal_id)
        prepared = read_findings(
            session=snapshot, definition=_validate(snapshot, _changed_document(before, changes))
        )
    signal = _existing(session, signal_id)
    old = definition_of(signal)
    if (
        prepared is not None
        and before is not None
        # the version check: the stored definition is the one the snapshot changed, names unchanged since
        and old == definition_of(before)
        and snapshot_still_valid(session=session, snapshot=prepared)
    ):
        new = prepared.definition
    else:
        new = _validate(session, _changed_document(signal, changes))
    conditions_changed = (new.yes_when, new.no_when) != (old.yes_when, old.no_when)
    if new != old:
        for key, value in _definition_columns(new).items():
            setattr(signal, key, value)
        signal.updated_at = _definition_stamp(session, now or utcnow())
        if new.deadline != old.deadline:
            signal.deadline_warned = False
        session.add(signal)
        session.flush()
    report = evaluate_signal(
        session=session, signal_id=signal_id, today=today, now=now, drop_unmatched=conditions_changed,
        snapshot=prepared,
    )
    return signal, report


def _changed_document(signal: Signal, changes: dict[str, Any]) -> dict[str, Any]:
    """The stored definition with ``changes`` applied (``description: null`` removes it)."""
    document = {**definition_document(signal), **changes}
    if document.get("description") is None:
        document.pop("description", None)
    return document


def resolve_signal(
    *, session: Session, signal_id: str, outcome: str, note: str | None, now: datetime | None = None
) -> SignalWithEvidence:
    """An analyst resolves an open or pending signal with ``outcome`` (``yes`` | ``no`` | ``annulled``).

    Raises ``SignalNotFound`` or ``TransitionNotAllowed`` (already resolved: reopen first).
    """
    signal, _history = apply_manual(
        session=session, signal_id=signal_id, action="resolve", outcome=outcome, note=note, now=now
    )
    return signal_detail(session=session, signal=signal)


def reject_signal(
    *, session: Session, signal_id: str, note: str | None, now: datetime | None = None
) -> SignalWithEvidence:
    """An analyst rejects the match a pending signal waits on: back to ``open``.

    Raises ``SignalNotFound`` or ``TransitionNotAllowed`` (not pending review).
    """
    signal, _history = apply_manual(session=session, signal_id=signal_id, action="reject", note=note, now=now)
    return signal_detail(session=session, signal=signal)


def reopen_signal(
    *, session: Session, signal_id: str, note: str | None, now: datetime | None = None
) -> SignalWithEvidence:
    """An analyst reopens a resolved signal: back to ``open`` (outcome, resolved_at, known_at cleared).

    Raises ``SignalNotFound`` or ``TransitionNotAllowed`` (not resolved).
    """
    signal, _history = apply_manual(session=session, signal_id=signal_id, action="reopen", note=note, now=now)
    return signal_detail(session=session, signal=signal)


# ---------------------------------------------------------------- the transitions feed
def recent_transitions(
    *, session: Session, limit: int, signal_id: str | None = None
) -> tuple[list[tuple[SignalHistory, str]], datetime | None]:
    """The latest ``limit`` transitions (newest first) with each signal's question, and the feed's
    ``updated`` time: the newest transition, else the newest definition change (``None``: no signals)."""
    stmt = select(SignalHistory, Signal.question).join(Signal, Signal.id == SignalHistory.signal_id)
    if signal_id is not None:
        stmt = stmt.where(SignalHistory.signal_id == signal_id)
    rows = [(h, q) for h, q in session.execute(stmt.order_by(SignalHistory.id.desc()).limit(limit))]
    if rows:
        return rows, max(h.at for h, _q in rows)
    latest = select(func.max(Signal.updated_at))
    if signal_id is not None:
        latest = latest.where(Signal.id == signal_id)
    return rows, session.execute(latest).scalar_one_or_none()


def transitions_feed(
    *, session: Session, signal_id: str | None, limit: int, api_base: str, self_url: str
) -> bytes:
    """The Atom 1.0 document (UTF-8) of the latest ``limit`` transitions, newest first.

    ``signal_id`` limits it to one signal; ``api_base`` (the API root) and ``self_url`` (the URL the
    feed was fetched from) go into its links. Raises ``SignalNotFound`` for an unknown ``signal_id``.
    """
    if signal_id is not None:
        _existing(session, signal_id)
    rows, updated = recent_transitions(session=session, limit=limit, signal_id=signal_id)
    return render_feed(
        rows,
        api_base=api_base,
        self_url=self_url,
        updated=updated,
        feed_id=f"tag:chipwatch,2026:signal/{signal_id}" if signal_id else "tag:chipwatch,2026:signals",
        title=f"chipwatch: transitions of {signal_id}" if signal_id else "chipwatch: signal transitions",
    )
