"""When to check a source next: pure functions of the source's history (no clock, no I/O).

* A healthy source is checked about twice per typical gap between its items (so a new item waits on
  average a quarter of that gap), clamped to [min, max]; the server's ``Cache-Control: max-age`` is a
  floor, because asking earlier only gets the same cached answer (capped at 24 h so a huge max-age
  cannot park a source).
* A failing source backs off exponentially with jitter (so that many sources failing together, e.g.
  after a network outage, do not retry in lock-step) and is never given up on: the delay is capped.
* ``Retry-After`` (429/503) is a floor on the delay, as RFC 9110 asks.
"""

from __future__ import annotations

import random
import statistics
from datetime import datetime, timedelta

DAY_S = 86400
# How many of the most recent items the adaptive interval looks at: enough to smooth one burst,
# few enough that a change of publishing rhythm shows within a couple of weeks for a daily feed.
RECENT_ITEMS = 20
# Cap for ``Retry-After`` as well: a server asking for a week of silence still gets a daily retry.
MAX_RETRY_AFTER_S = 7 * DAY_S


def adaptive_interval_s(
    item_times: list[datetime],
    *,
    default_s: int,
    min_s: int = 300,
    max_s: int = DAY_S,
) -> int:
    """Seconds between checks suited to how often the source publishes.

    Takes the publication (or first-seen) times of recent items in any order, uses the newest
    ``RECENT_ITEMS``, and returns half the median gap between consecutive items, clamped to
    ``[min_s, max_s]``. The median ignores one-off bursts and long holidays. With fewer than two
    distinct times there is no gap to measure and ``default_s`` (also clamped) is returned.
    Naive and aware datetimes must not be mixed.
    """
    if min_s > max_s:
        raise ValueError(f"min_s ({min_s}) must not exceed max_s ({max_s})")
    times = sorted(set(item_times), reverse=True)[:RECENT_ITEMS]
    if len(times) < 2:
        return int(min(max(default_s, min_s), max_s))
    gaps = [(newer - older).total_seconds() for newer, older in zip(times, times[1:], strict=False)]
    half_median = statistics.median(gaps) / 2
    return int(min(max(half_median, min_s), max_s))


def backoff_s(
    consecutive_failures: int,
    *,
    base_s: float,
    max_s: float = DAY_S,
    rng: random.Random,
) -> float:
    """Delay in seconds before retrying after ``consecutive_failures`` failures in a row.

    "Equal jitter" exponential backoff: the ceiling is ``min(max_s, base_s * 2**(failures-1))`` and the
    delay is uniform in ``[ceiling/2, ceiling]``, so it grows like the plain exponential but spreads
    retries, and never drops to zero (unlike full jitter, which can retry at once). Zero failures
    returns ``base_s`` (no backoff). The cap is what keeps a dead source on a daily retry for ever
    instead of being dropped. ``rng`` is passed in so tests can fix the seed.
    """
    if base_s <= 0 or max_s <= 0:
        raise ValueError("base_s and max_s must be positive")
    if consecutive_failures <= 0:
        return float(min(base_s, max_s))
    # Cap the exponent before computing the power so a long outage cannot overflow a float.
    exponent = min(consecutive_failures - 1, 62)
    ceiling = min(float(max_s), base_s * (2.0**exponent))
    return rng.uniform(ceiling / 2, ceiling)


def next_check_at(
    now: datetime,
    *,
    interval_s: float,
    max_age_s: float | None = None,
    retry_after_s: float | None = None,
    failures: int = 0,
    rng: random.Random,
    max_s: float = DAY_S,
) -> datetime:
    """The time of the next check.

    * ``failures == 0`` (the last check succeeded): ``now + max(interval_s, max_age_s)``, with
      ``max_age_s`` (from ``Cache-Control``) capped at 24 h.
    * ``failures > 0``: ``now + backoff_s(failures, base_s=interval_s, max_s=max_s)``.
    * In both cases a ``retry_after_s`` (from ``Retry-After`` on 429/503) is a floor: the next check
      is never earlier than the server asked (capped at 7 days so a source cannot be parked for ever).
    """
    if failures > 0:
        delay = backoff_s(failures, base_s=max(interval_s, 1.0), max_s=max_s, rng=rng)
    else:
        delay = float(interval_s)
        if max_age_s is not None and max_age_s > 0:
            delay = max(delay, min(float(max_age_s), float(DAY_S)))
    if retry_after_s is not None and retry_after_s > 0:
        delay = max(delay, min(float(retry_after_s), float(MAX_RETRY_AFTER_S)))
    return now + timedelta(seconds=delay)
