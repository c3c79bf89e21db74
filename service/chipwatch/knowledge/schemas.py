"""API models of the knowledge base: for each kind, ``<Name>Create``, ``<Name>Update`` and
``<Name>Public`` derived from the table's base model, so a column is declared once."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any

from pydantic import Field as PField
from pydantic import computed_field, create_model
from pydantic.fields import FieldInfo
from sqlmodel import SQLModel

from chipwatch.knowledge.models import DATASET_PROVENANCE_FIELDS, KB_TABLES, RETRACTION_FIELDS
from chipwatch.vocab.facts import ChangeCause, FactAction
from chipwatch.vocab.slugs import SLUG, SLUG_MAX_LENGTH


def _nullable(info: FieldInfo) -> Any:
    """The field's type made optional, keeping its bounds: a patch obeys the create body's lengths and
    non-negative amounts."""
    optional = info.annotation | None
    return Annotated[optional, *info.metadata] if info.metadata else optional


def _api_models(table: type[SQLModel]) -> tuple[type[SQLModel], type[SQLModel], type[SQLModel]]:
    """Validated ``<Name>Create``, ``<Name>Update`` (every field optional) and ``<Name>Public`` models.

    Table models skip validation on construction, so request bodies use these instead.
    """
    base = table.__mro__[1]
    name = table.__name__
    id_field = (str, PField(pattern=SLUG, max_length=SLUG_MAX_LENGTH, description="readable slug id"))
    strict = type(f"{name}Strict", (base,), {"model_config": {**base.model_config, "extra": "forbid"}})
    create = create_model(f"{name}Create", __base__=strict, id=id_field)
    # Dataset provenance and retraction are read-only: shown on the facts that have them, never accepted
    # in a body.
    imported = {
        fname: (info.annotation, info)
        for fname, info in table.model_fields.items()
        if fname in DATASET_PROVENANCE_FIELDS or fname in RETRACTION_FIELDS
    }
    public = create_model(f"{name}Public", __base__=base, id=(str, ...), **imported)
    optional = {
        fname: (_nullable(info), PField(default=None, description=info.description))
        for fname, info in base.model_fields.items()
    }
    update = create_model(f"{name}Update", __config__={"extra": "forbid"}, **optional)
    return create, update, public


def provenance_source_ids(source_id: str | None, attributes: Mapping[str, Any] | None) -> list[str]:
    """Every source behind a fact, each once: its ``source_id`` first, then the sources of the news items
    accepting a candidate (or a later corroboration) recorded in ``attributes.provenance_items``, in their
    order. Empty for a fact with neither."""
    ids = [source_id] if source_id else []
    for item in (attributes or {}).get("provenance_items") or []:
        if isinstance(item, Mapping) and item.get("source_id") and item["source_id"] not in ids:
            ids.append(str(item["source_id"]))
    return ids


def _with_sources(public: type[SQLModel]) -> type[SQLModel]:
    """``public`` with a read-only ``sources`` list (:func:`provenance_source_ids`)."""

    class WithSources(public):  # type: ignore[misc, valid-type]
        @computed_field(  # type: ignore[prop-decorator]
            description="ids of every source behind the fact: source_id first, then the sources of the news "
            "items in attributes.provenance_items"
        )
        @property
        def sources(self) -> list[str]:
            return provenance_source_ids(self.source_id, self.attributes)  # type: ignore[attr-defined]

    WithSources.__name__ = WithSources.__qualname__ = public.__name__
    return WithSources


API_MODELS: dict[str, tuple[type[SQLModel], type[SQLModel], type[SQLModel]]] = {
    kind: _api_models(table) for kind, table in KB_TABLES.items()
}
"""API path segment -> (Create, Update, Public) models."""
# A funding round accepted from news often stands on several outlets' items: show them all.
_create, _update, _public = API_MODELS["funding-rounds"]
API_MODELS["funding-rounds"] = (_create, _update, _with_sources(_public))


class FactChangePublic(SQLModel):
    """One history entry of a fact: what changed (``field`` with its old and new JSON value, or a whole-fact
    ``action`` with no field), why (``cause``: seed, api, import, candidate; ``cause_ref``: the import id
    for an import) and when (``changed_at``, UTC)."""

    id: int
    kind: str
    fact_id: str
    action: FactAction
    field: str | None = None
    old_value: Any = None
    new_value: Any = None
    cause: ChangeCause
    cause_ref: str | None = None
    actor: str | None = None
    changed_at: datetime
