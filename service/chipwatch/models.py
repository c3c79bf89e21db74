"""Imports every domain's table module so SQLModel.metadata (and Alembic) sees them all."""

from sqlmodel import SQLModel

import chipwatch.candidates.models
import chipwatch.imports.models
import chipwatch.knowledge.models
import chipwatch.outbox.models
import chipwatch.seed_state
import chipwatch.signals.models
import chipwatch.sources.models
import chipwatch.webhooks.models  # noqa: F401
from chipwatch.sources.search import outside_metadata

metadata = SQLModel.metadata
include_name = outside_metadata
"""Alembic's ``include_name`` for every comparison of the database with ``metadata``: the search index
objects the migrations make by hand (chipwatch.sources.search) are left out."""
