"""Where the project's own files live: the service runs from a checkout (editable install or image)."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(os.environ.get("CHIPWATCH_PROJECT_ROOT") or Path(__file__).resolve().parents[2])
MIGRATIONS_DIR = PROJECT_ROOT / "migrations"
SCHEMA_DIR = PROJECT_ROOT / "schema"
SEED_DIR = PROJECT_ROOT / "seed_data"
