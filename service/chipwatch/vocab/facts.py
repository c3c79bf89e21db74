"""How a knowledge-base fact changes and why (DESIGN.md, "Round 2": facts have history).

``FactAction`` says what happened to the fact: it was created, some of its fields were updated, it was
retired (a dataset version no longer lists it), restored (a later version lists it again) or retracted
(an analyst withdrew it). Retirement and retraction keep the row; nothing is hard-deleted.
``seed_conflict`` records a change that did not happen: a seed load found the fact's seed entry changed
while the fact had been edited since the last load, and kept the edit (per field: ``old_value`` the
value kept, ``new_value`` the seed's value, not applied).

``ChangeCause`` says what made the change: a seed load, an analyst through the API, a dataset import,
or an accepted candidate fact from news items.
"""

from __future__ import annotations

from typing import Literal, get_args

FactKind = Literal[
    "vendors", "chips", "models", "benchmarks", "results", "funding-rounds", "deployments", "claims"
]
"""A knowledge-base kind as the API path names it (``/v1/{kind}/{id}``)."""

FactAction = Literal["created", "updated", "retired", "restored", "retracted", "seed_conflict"]
ChangeCause = Literal["seed", "api", "import", "candidate"]

FACT_ACTIONS: tuple[FactAction, ...] = get_args(FactAction)
CHANGE_CAUSES: tuple[ChangeCause, ...] = get_args(ChangeCause)

DeploymentStatus = Literal["planned", "pilot", "volume", "operational", "decommissioned"]
"""Where a deployment stands. ``pilot`` and ``volume`` are a vendor's rollout stages as the founding
articles report them (a pilot at small scale, then volume); ``operational`` and ``decommissioned`` are
Epoch AI's cluster states (its ``Existing`` is ``operational``). ``planned`` is common to both. The words
are not merged: a signal asking for ``operational`` is not satisfied by ``volume``."""

FundingStatus = Literal["closed", "in_discussion"]
"""Where a funding round stands: closed, or still being negotiated (Epoch's ``Late discussions``)."""

DEPLOYMENT_STATUSES: tuple[DeploymentStatus, ...] = get_args(DeploymentStatus)
FUNDING_STATUSES: tuple[FundingStatus, ...] = get_args(FundingStatus)
