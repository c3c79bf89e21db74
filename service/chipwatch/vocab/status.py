"""Signal states (DESIGN.md, "Signals"): ``status`` and ``outcome``, the side a condition stands on, and
how well a signal's sources are watched."""

from __future__ import annotations

from typing import Literal, get_args

Status = Literal["open", "pending_review", "resolved"]
Outcome = Literal["yes", "no", "annulled"]
Side = Literal["yes", "no"]
WatchHealth = Literal["ok", "degraded", "blind"]

STATUSES: tuple[Status, ...] = get_args(Status)
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)
