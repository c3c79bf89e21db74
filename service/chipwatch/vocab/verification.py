"""How far a fact has been checked (DESIGN.md, "Knowledge base"): reported by the vendor, watched by a
third party, or reproduced independently."""

from __future__ import annotations

from typing import Literal

Verification = Literal["vendor_reported", "witnessed", "independent"]
