"""``Retry-After`` (RFC 9110 section 10.2.3), as sent with 429 and 503 answers by feeds and webhook
endpoints alike."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

RETRY_AFTER_STATUSES = frozenset({429, 503})


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` value: delay-seconds (``"120"``) or an HTTP-date.

    A date in the past gives 0.0; an absent, blank or unreadable value gives None. ``now`` (aware)
    defaults to the current time and is only used for HTTP-dates.
    """
    if not value or not value.strip():
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())
