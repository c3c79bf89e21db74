"""Imports every domain's table module so SQLModel.metadata (and Alembic) sees them all."""

from sqlmodel import SQLModel

import chipwatch.imports.models
import chipwatch.knowledge.models
import chipwatch.outbox.models
import chipwatch.signals.models
import chipwatch.sources.models
import chipwatch.webhooks.models  # noqa: F401

metadata = SQLModel.metadata
