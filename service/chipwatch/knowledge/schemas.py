"""API models of the knowledge base: for each kind, ``<Name>Create``, ``<Name>Update`` and
``<Name>Public`` derived from the table's base model, so a column is declared once."""

from __future__ import annotations

from pydantic import Field as PField
from pydantic import create_model
from sqlmodel import SQLModel

from chipwatch.knowledge.models import KB_TABLES
from chipwatch.vocab.slugs import SLUG, SLUG_MAX_LENGTH


def _api_models(table: type[SQLModel]) -> tuple[type[SQLModel], type[SQLModel], type[SQLModel]]:
    """Validated ``<Name>Create``, ``<Name>Update`` (every field optional) and ``<Name>Public`` models.

    Table models skip validation on construction, so request bodies use these instead.
    """
    base = table.__mro__[1]
    name = table.__name__
    id_field = (str, PField(pattern=SLUG, max_length=SLUG_MAX_LENGTH, description="readable slug id"))
    strict = type(f"{name}Strict", (base,), {"model_config": {**base.model_config, "extra": "forbid"}})
    create = create_model(f"{name}Create", __base__=strict, id=id_field)
    public = create_model(f"{name}Public", __base__=base, id=(str, ...))
    optional = {
        fname: (info.annotation | None, PField(default=None, description=info.description))
        for fname, info in base.model_fields.items()
    }
    update = create_model(f"{name}Update", __config__={"extra": "forbid"}, **optional)
    return create, update, public


API_MODELS: dict[str, tuple[type[SQLModel], type[SQLModel], type[SQLModel]]] = {
    kind: _api_models(table) for kind, table in KB_TABLES.items()
}
"""API path segment -> (Create, Update, Public) models."""
