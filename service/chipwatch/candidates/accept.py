"""Accepting a candidate: the fact it proposes enters the knowledge base with its items as provenance
(services flush, never commit).

- A new fact: a funding round or acquisition (``funding-rounds``), a deployment, a benchmark result or a
  chip (a launch), with ``source_id`` the most trusted carrying source, ``verification`` what the
  sources allow (``candidates.keys``), ``published_on`` the earliest item date, and in ``attributes``
  the candidate id and every item (source, link, title, date, the words the fact was read from). Names
  the knowledge base lacks (a start-up, an operator, a new chip) become vendors and chips, each recorded
  as created from the candidate.
- A corroboration (the candidate matches a fact): that fact gains the items as provenance and, when the
  sources allow more, a higher verification.
- A launched chip name that is another name of a known chip (``alias_of``): the name becomes an alias.

Every write is recorded in fact history (cause ``candidate``, ``cause_ref`` the candidate id) and passed
to the fact listeners (signal evaluation), in the caller's transaction.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Annotated, Any

from pydantic import Field, TypeAdapter, ValidationError
from sqlalchemy import select
from sqlmodel import Session, SQLModel

from chipwatch.candidates import keys
from chipwatch.candidates.models import Candidate, CandidateItem
from chipwatch.candidates.schemas import CandidateAcceptIn
from chipwatch.candidates.service import CandidateDecided, candidate_view, get_candidate, item_links
from chipwatch.kit.time import utcnow
from chipwatch.knowledge.checks import check_row
from chipwatch.knowledge.history import field_changes, record_change
from chipwatch.knowledge.models import KB_TABLES
from chipwatch.knowledge.service import fact_listeners
from chipwatch.sources.models import Item
from chipwatch.vocab.slugs import Slug, slugify

FACT_FIELDS: dict[str, tuple[str, ...]] = {
    "funding": ("vendor_id", "vendor_name", "amount", "currency", "round_type", "post_money_valuation"),
    "acquisition": ("acquirer_id", "acquirer_name", "vendor_id", "vendor_name", "amount", "currency"),
    "deployment": (
        "operator_id", "operator_name", "chip_id", "chip_name", "units", "power_mw", "status", "place"
    ),
    "benchmark": ("chip_id", "chip_name", "metric", "value", "value_min", "value_max", "unit", "baseline_id",
                  "baseline_name", "reported_by_id", "reported_by_name"),
    "launch": ("vendor_id", "vendor_name", "chip_id", "chip_name"),
}
"""The fields an analyst may correct while accepting, by candidate kind."""

_Text = Annotated[str, Field(strict=True, min_length=1, max_length=200)]
_Amount = Annotated[float, Field(strict=True, ge=0, allow_inf_nan=False)]
_Figure = Annotated[float, Field(strict=True, allow_inf_nan=False)]
_Count = Annotated[int, Field(strict=True, ge=0, le=2**31 - 1)]
_EDIT_TYPES: dict[str, TypeAdapter[Any]] = {
    **{name: TypeAdapter(Slug | None) for name in (
        "vendor_id", "acquirer_id", "operator_id", "chip_id", "baseline_id", "reported_by_id")},
    **{name: TypeAdapter(_Text | None) for name in (
        "vendor_name", "acquirer_name", "operator_name", "chip_name", "baseline_name", "reported_by_name",
        "currency", "round_type", "status", "place", "metric", "unit")},
    **{name: TypeAdapter(_Amount | None) for name in ("amount", "post_money_valuation", "power_mw")},
    **{name: TypeAdapter(_Figure | None) for name in ("value", "value_min", "value_max")},
    "units": TypeAdapter(_Count | None),
}
"""The type of each editable fact field: the knowledge base's columns take the edit as given (SQLite keeps
a string in an integer column), so an edit of the wrong type or sign is refused here, not stored."""


def _edit_problems(edits: dict[str, Any], kind: str) -> list[tuple[str, str]]:
    """``(field, message)`` for each edit of a field a ``kind`` candidate lacks or of a value its field
    refuses (wrong type, negative amount, blank name)."""
    problems = []
    for name in sorted(edits):
        if name not in FACT_FIELDS[kind]:
            problems.append((f"fact.{name}", f"not a field of a {kind} candidate"))
            continue
        try:
            _EDIT_TYPES[name].validate_python(edits[name])
        except ValidationError as exc:
            problems.append((f"fact.{name}", exc.errors()[0]["msg"]))
    return problems


def acceptance_problems(
    candidate: Candidate, edits: dict[str, Any], verification: str | None, alias_of: str | None
) -> list[tuple[str, str]]:
    """``(field, message)`` for each problem of accepting ``candidate`` with these edits: a fact field
    the kind lacks or a value its field refuses, a verification above what the sources allow,
    ``alias_of`` on a kind other than launch. Reads nothing; also run by the route when the request
    layer refused another part of the body, so one 422 names every problem."""
    problems = _edit_problems(edits, candidate.kind)
    if not keys.at_most(verification or candidate.verification, candidate.verification):
        problems.append(("verification", f"the sources allow at most {candidate.verification}"))
    if alias_of is not None and candidate.kind != "launch":
        problems.append(("alias_of", "only a launch candidate names a chip"))
    return problems


_TRUST_RANK = {"independent": 3, "analyst": 2, "press": 1, "vendor": 0}


class InvalidEdit(ValueError):
    """Edits made while accepting are not acceptable: ``problems`` lists each ``(field, message)``;
    ``field`` and ``message`` are the first."""

    def __init__(self, field: str, message: str, *more: tuple[str, str]) -> None:
        self.problems = [(field, message), *more]
        super().__init__("; ".join(f"{f}: {m}" for f, m in self.problems))
        self.field, self.message = field, message


def accept_candidate(
    *,
    session: Session,
    candidate_id: int,
    accept_in: CandidateAcceptIn | None = None,
    actor: str = "admin",
    now: datetime | None = None,
) -> dict[str, Any]:
    """Accept a pending candidate (see the module docstring); returns the candidate view, whose
    ``fact_ref`` names the fact written.

    Raises ``CandidateNotFound``, ``CandidateDecided`` (accepted or rejected already), :class:`InvalidEdit`
    (an unknown field, a verification above what the sources allow, ``alias_of`` on a kind other than
    launch, field edits on a corroboration) and ``knowledge.checks.Invalid`` (the fact as edited breaks a
    rule of the knowledge base: a range whose low end exceeds its high end, a negative amount).
    """
    accept_in = accept_in or CandidateAcceptIn()
    now = now or utcnow()
    candidate = get_candidate(session=session, candidate_id=candidate_id)
    if candidate.status != "pending":
        raise CandidateDecided(f"candidate {candidate_id} is {candidate.status} already")
    edits = accept_in.fact or {}
    # The edits' own problems are gathered, so one answer names each of them.
    problems = acceptance_problems(candidate, edits, accept_in.verification, accept_in.alias_of)
    verification = accept_in.verification or candidate.verification
    if problems:
        raise InvalidEdit(*problems[0], *problems[1:])
    fact = {**candidate.fact, **edits}
    links = item_links(session, [candidate.id])[candidate.id]
    ctx = _Context(session, candidate, links, verification, actor, now)
    if accept_in.alias_of is not None:
        kb_kind, fact_id = "chips", ctx.add_alias(accept_in.alias_of, fact.get("chip_name") or "")
    elif candidate.corroborates_id and accept_in.fact_id is None:
        if edits:
            raise InvalidEdit("fact", "a corroboration adds provenance to an existing fact; edit that fact "
                              f"with PATCH /v1/{candidate.corroborates_kind}/{candidate.corroborates_id}")
        kb_kind, fact_id = candidate.corroborates_kind or "", ctx.corroborate(candidate.corroborates_id)
    else:
        kb_kind, fact_id = keys.KB_KIND[candidate.kind], ctx.create(fact, accept_in.fact_id)
    candidate.status, candidate.decided_at, candidate.decided_by = "accepted", now, actor
    candidate.fact_kind, candidate.fact_id = kb_kind, fact_id
    candidate.note, candidate.updated_at = accept_in.note, now
    if edits:
        candidate.fact = fact
    session.add(candidate)
    session.flush()
    return candidate_view(session=session, candidate_id=candidate_id)


class _Context:
    """What every write of one acceptance shares: provenance, cause and time."""

    def __init__(
        self, session: Session, candidate: Candidate, links: list[CandidateItem], verification: str,
        actor: str, now: datetime,
    ) -> None:
        self.session, self.candidate, self.links = session, candidate, links
        self.verification, self.actor, self.now = verification, actor, now
        ids = [link.item_id for link in links]
        items = {i.id: i for i in session.scalars(select(Item).where(Item.id.in_(ids)))}
        self.items = [
            {
                "item_id": link.item_id, "source_id": link.source_id, "trust": link.trust,
                "url": items[link.item_id].link if link.item_id in items else None,
                "title": items[link.item_id].title if link.item_id in items else None,
                "published_at": link.published_at.isoformat() if link.published_at else None,
                "quote": link.quote,
            }
            for link in links
        ]
        dated = [link.published_at for link in links if link.published_at is not None]
        self.published_on = min(dated).date() if dated else now.date()
        best = max(
            links, key=lambda link: (_TRUST_RANK.get(link.trust, 0), -(link.published_at or now).timestamp())
        )
        self.source_id = best.source_id

    # ------------------------------------------------------------------ writes
    def _write(self, kb_kind: str, row: SQLModel) -> str:
        check_row(session=self.session, kind=kb_kind, data=row.model_dump())
        self.session.add(row)
        self.session.flush()
        record_change(session=self.session, kind=kb_kind, fact_id=row.id, action="created", cause="candidate",
                      cause_ref=str(self.candidate.id), actor=self.actor, at=self.now)
        self._notify(kb_kind, row)
        return row.id

    def _notify(self, kb_kind: str, row: SQLModel) -> None:
        for listener in fact_listeners:
            listener(self.session, kb_kind, row)

    def _known(self, kb_kind: str, id_: str | None) -> str | None:
        """``id_`` when the knowledge base has that ``kb_kind`` row, else None."""
        return id_ if id_ and self.session.get(KB_TABLES[kb_kind], id_) is not None else None

    def _unique_id(self, kb_kind: str, base: str) -> str:
        table = KB_TABLES[kb_kind]
        base = base[:56].strip("-") or kb_kind.rstrip("s")
        candidate, n = base, 1
        while self.session.get(table, candidate) is not None:
            n += 1
            candidate = f"{base}-{n}"
        return candidate

    def _provenance(self, reported_by: str | None) -> dict[str, Any]:
        quotes = "; ".join(f"\u201c{i['quote']}\u201d ({i['source_id']})" for i in self.items)
        return {
            "source_id": self.source_id,
            "reported_by": reported_by,
            "verification": self.verification,
            "as_of": self.published_on,
            "published_on": self.published_on,
            "notes": f"Read from {len(self.items)} news item(s), candidate {self.candidate.id}: {quotes}"[
                :4000
            ],
        }

    def _attributes(self, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        return {"candidate_id": self.candidate.id, "provenance_items": self.items, **(extra or {})}

    def entity(self, kb_kind: str, field: str, id_: str | None, name: str | None, **extra: Any) -> str | None:
        """The id of a vendor or chip: ``id_`` when the knowledge base has it, else one created from
        ``name`` (None when neither is given)."""
        table = KB_TABLES[kb_kind]
        if id_:
            if self.session.get(table, id_) is None:
                raise InvalidEdit(f"fact.{field}", f"no {kb_kind.rstrip('s')} with id {id_!r}")
            return id_
        if not name or not name.strip():
            return None
        slug = slugify(name) or f"{kb_kind.rstrip('s')}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"
        if self.session.get(table, slug) is not None:
            return slug
        row = table(id=slug, name=name.strip(), **self._provenance(None), **extra)
        return self._write(kb_kind, row)

    def create(self, fact: dict[str, Any], fact_id: str | None) -> str:
        """Write the candidate's fact as a new knowledge-base row; returns its id."""
        kind = self.candidate.kind
        kb_kind = keys.KB_KIND[kind]
        if fact_id is not None and self.session.get(KB_TABLES[kb_kind], fact_id) is not None:
            raise InvalidEdit("fact_id", f"a {kb_kind} row with id {fact_id!r} exists already")
        month = self.published_on.strftime("%Y-%m")
        if kind in ("funding", "acquisition"):
            return self._funding(fact, fact_id, month)
        if kind == "deployment":
            return self._deployment(fact, fact_id, month)
        if kind == "benchmark":
            return self._result(fact, fact_id)
        vendor = self.entity("vendors", "vendor_id", fact.get("vendor_id"), fact.get("vendor_name"))
        base = slugify(fact.get("chip_name") or "") or f"{vendor}-chip"
        chip_id = fact_id or self._unique_id("chips", base)
        row = KB_TABLES["chips"](
            id=chip_id, name=fact.get("chip_name") or chip_id, vendor_id=vendor, status="announced",
            released_on=self.published_on, attributes=self._attributes(), **self._provenance(vendor),
        )
        return self._write("chips", row)

    def _funding(self, fact: dict[str, Any], fact_id: str | None, month: str) -> str:
        vendor = self.entity("vendors", "vendor_id", fact.get("vendor_id"), fact.get("vendor_name"))
        if vendor is None:
            raise InvalidEdit("fact.vendor_name", "the company is required")
        acquirer = None
        if self.candidate.kind == "acquisition":
            acquirer = self.entity(
                "vendors", "acquirer_id", fact.get("acquirer_id"), fact.get("acquirer_name")
            )
            round_type, base = "acquisition", f"{vendor}-acquisition-{acquirer or 'buyer'}"
        else:
            round_type = fact.get("round_type") or "undisclosed"
            base = f"{vendor}-{round_type.replace('_', '-')}-{month}"
        row = KB_TABLES["funding-rounds"](
            id=fact_id or self._unique_id("funding-rounds", base), vendor_id=vendor, round_type=round_type,
            acquirer_id=acquirer, amount=fact.get("amount"), currency=fact.get("currency"),
            post_money_valuation=fact.get("post_money_valuation"), announced_on=self.published_on,
            status="closed", attributes=self._attributes(), **self._provenance(acquirer or vendor),
        )
        return self._write("funding-rounds", row)

    def _deployment(self, fact: dict[str, Any], fact_id: str | None, month: str) -> str:
        operator = self.entity("vendors", "operator_id", fact.get("operator_id"), fact.get("operator_name"))
        chip = self._known("chips", fact.get("chip_id"))
        status = fact.get("status") or "planned"
        power = fact.get("power_mw")
        units = fact.get("units")
        where = operator or slugify(fact.get("place") or "") or "site"
        what = chip or slugify(fact.get("chip_name") or "") or "ai"
        base = f"{where}-{what}-{month}"
        row = KB_TABLES["deployments"](
            id=fact_id or self._unique_id("deployments", base), chip_id=chip,
            system_label=None if chip else fact.get("chip_name"), operator_id=operator, status=status,
            capacity_mw=power if status == "operational" else None,
            capacity_mw_target=power if status != "operational" else None,
            units_min=units, units_max=units, attributes=self._attributes({"place": fact.get("place")}),
            **self._provenance(operator),
        )
        return self._write("deployments", row)

    def _result(self, fact: dict[str, Any], fact_id: str | None) -> str:
        chip = self.entity("chips", "chip_id", fact.get("chip_id"), fact.get("chip_name"))
        if chip is None:
            raise InvalidEdit("fact.chip_name", "the chip is required")
        baseline = self._known("chips", fact.get("baseline_id"))
        reporter = self._known("vendors", fact.get("reported_by_id"))
        lo, hi = fact.get("value_min"), fact.get("value_max")
        value = fact.get("value") if fact.get("value") is not None else (
            (lo + hi) / 2 if lo is not None and hi is not None else None)
        figure = f"{slugify(str(value))}{slugify(fact.get('unit') or '')}"
        base = f"{chip}-{fact.get('metric') or 'claim'}-{figure}"
        row = KB_TABLES["results"](
            id=fact_id or self._unique_id("results", base), chip_ids=[chip],
            baseline_ids=[baseline] if baseline else [],
            baseline_label=None if baseline else fact.get("baseline_name"),
            metric=fact.get("metric") or "performance",
            comparator="range" if lo is not None and hi is not None else "eq", value=value, value_min=lo,
            value_max=hi, unit=fact.get("unit"),
            attributes=self._attributes({"reported_by_name": fact.get("reported_by_name")}),
            **self._provenance(reporter),
        )
        return self._write("results", row)

    def corroborate(self, fact_id: str, kb_kind: str | None = None) -> str:
        """Add the items to the provenance of the fact the candidate matches (or, with ``kb_kind``, of that
        kind's fact ``fact_id``), and raise its verification when the sources allow more; returns its id.
        A vendor or a chip has no verification to raise: its provenance is what changes."""
        kb_kind = kb_kind or self.candidate.corroborates_kind or ""
        row = self.session.get(KB_TABLES[kb_kind], fact_id)
        if row is None:
            raise InvalidEdit("corroborates", f"the {kb_kind} fact {fact_id!r} no longer exists")
        attributes = dict(getattr(row, "attributes", None) or {})
        before = list(attributes.get("provenance_items") or [])
        seen = {entry.get("item_id") for entry in before}
        after = before + [i for i in self.items if i["item_id"] not in seen]
        changes: dict[str, tuple[Any, Any]] = {}
        if after != before:
            attributes["provenance_items"] = after
            attributes["candidate_ids"] = sorted({*attributes.get("candidate_ids", []), self.candidate.id})
            changes["attributes.provenance_items"] = (before, after)
            row.attributes = attributes
        if keys.VERIFICATION_ORDER.index(self.verification) > keys.VERIFICATION_ORDER.index(
            row.verification
        ) and kb_kind not in ("vendors", "chips"):
            changes.update(
                field_changes({"verification": row.verification}, {"verification": self.verification})
            )
            row.verification = self.verification
        self.session.add(row)
        self.session.flush()
        record_change(session=self.session, kind=kb_kind, fact_id=fact_id, action="updated", changes=changes,
                      cause="candidate", cause_ref=str(self.candidate.id), actor=self.actor, at=self.now)
        if changes:
            self._notify(kb_kind, row)
        return fact_id

    def add_alias(self, chip_id: str, name: str) -> str:
        """Add the launched ``name`` to the aliases of the known chip ``chip_id``; returns its id."""
        row = self.session.get(KB_TABLES["chips"], chip_id)
        if row is None:
            raise InvalidEdit("alias_of", f"no chip with id {chip_id!r}")
        before = list(row.aliases or [])
        if name and name != row.name and name not in before:
            row.aliases = [*before, name]
            self.session.add(row)
            self.session.flush()
            record_change(session=self.session, kind="chips", fact_id=chip_id, action="updated",
                          changes={"aliases": (before, row.aliases)}, cause="candidate",
                          cause_ref=str(self.candidate.id), actor=self.actor, at=self.now)
            self._notify("chips", row)
        return chip_id


def refresh_accepted(*, session: Session, candidates: list[Candidate], now: datetime) -> None:
    """Accepted candidates that gained items since: the fact accepting each wrote gains them as
    provenance and the verification the sources now allow (a second independent source after the
    acceptance makes it witnessed), recorded in its history (cause ``candidate``, actor ``news``)."""
    for candidate in candidates:
        if candidate.status != "accepted" or not candidate.fact_id or candidate.fact_kind not in KB_TABLES:
            continue
        links = item_links(session, [candidate.id])[candidate.id]
        ctx = _Context(session, candidate, links, candidate.verification, "news", now)
        ctx.corroborate(candidate.fact_id, kb_kind=candidate.fact_kind)


__all__ = ["FACT_FIELDS", "InvalidEdit", "accept_candidate", "acceptance_problems", "refresh_accepted"]
