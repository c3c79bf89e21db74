"""Column types shared by every domain."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime
from sqlalchemy.types import TypeDecorator

from chipwatch.kit.time import as_utc


class UTCDateTime(TypeDecorator):
    """A timestamp stored in UTC and always read back timezone-aware.

    SQLite keeps no zone, so values are normalised to UTC on the way in and tagged UTC on the way out;
    PostgreSQL's ``timestamptz`` round-trips the same way.  A naive value given to it is taken as UTC.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect) -> datetime | None:
        return as_utc(value)

    def process_result_value(self, value: datetime | None, dialect) -> datetime | None:
        return as_utc(value)
