"""Imports every domain's tables so SQLModel.metadata (and Alembic) sees them all."""

from sqlmodel import SQLModel

from chipwatch.knowledge.models import (  # noqa: F401
    Benchmark,
    Chip,
    Claim,
    Deployment,
    FundingRound,
    Model,
    Result,
    Vendor,
)
from chipwatch.signals.models import Evidence, Signal, SignalHistory  # noqa: F401
from chipwatch.sources.models import Item, ItemMention, Source  # noqa: F401
from chipwatch.webhooks.models import Delivery, DeliveryAttempt, Event, Webhook  # noqa: F401

metadata = SQLModel.metadata
