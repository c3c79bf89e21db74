"""When to check a source next: pure functions of the source's history (no clock, no I/O).

* A healthy source is checked about twice per typical gap between its items (so a new item waits on
  average a quarter of that gap), clamped to [min, max]; the server's ``Cache-Control: max-age`` is a
  floor, because asking earlier only gets the same cached answer (capped at 24 h so a huge max-age
  cannot park a source).
* A failing source backs off exponentially with jitter (so that many sources failing together, e.g.
  after a network outage, do not retry in lock-step) and is never given up on: the delay is capped.
* ``Retry-After`` (429/503) is a floor on the delay, as RFC 9110 asks.

Each step says why in words (:class:`Interval`, :func:`next_check`): a source shows the reason for its
interval and its next check as ``interval_reason``.
"""

from __future__ import annotations

import random
import statistics
from dataclasses import dataclass
from datetime import datetime, timedelta

DAY_S = 86400
# How many of the most recent items the adaptive interval looks at: enough to smooth one burst,
# few enough that a change of publishing rhythm shows within a couple of weeks for a daily feed.
RECENT_ITEMS = 20
# Cap for ``Retry-After`` as well: a server asking for a week of silence still gets a daily retry.
MAX_RETRY_AFTER_S = 7 * DAY_S


@dataclass(frozen=True)
class Interval:
    """Seconds between healthy checks of a source, and why, in words."""

    seconds: int
    reason: str


def duration(seconds: float) -> str:
    """``seconds`` for a reader: ``45 s``, ``5 min``, ``1 h 40 min``, ``2 d 3 h``."""
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min" + (f" {s % 60} s" if s % 60 else "")
    if s < DAY_S:
        return f"{s // 3600} h" + (f" {s % 3600 // 60} min" if s % 3600 // 60 else "")
    return f"{s // DAY_S} d" + (f" {s % DAY_S // 3600} h" if s % DAY_S // 3600 else "")


def clamped(seconds: float, *, min_s: int, max_s: int, what: str) -> Interval:
    """``seconds`` kept within ``[min_s, max_s]``, the reason starting with ``what`` (how the figure
    was found) and saying when a bound applied."""
    if seconds < min_s:
        return Interval(min_s, f"{what} is {duration(seconds)}, raised to the minimum, {duration(min_s)}")
    if seconds > max_s:
        return Interval(max_s, f"{what} is {duration(seconds)}, lowered to the maximum, {duration(max_s)}")
    return Interval(int(seconds), f"{what}: {duration(int(seconds))}")


def adaptive_interval(
    item_times: list[datetime],
    *,
    default_s: int,
    min_s: int = 300,
    max_s: int = DAY_S,
) -> Interval:
    """The interval suited to how often the source publishes, with its reason.

    Takes the publication (or first-seen) times of recent items in any order, uses the newest
    ``RECENT_ITEMS``, and returns half the median gap between consecutive items, clamped to
    ``[min_s, max_s]``. The median ignores one-off bursts and long holidays. With fewer than two
    distinct times there is no gap to measure and ``default_s`` (also clamped) is returned.
    Naive and aware datetimes must not be mixed. Raises ValueError when ``min_s > max_s``.
    """
    if min_s > max_s:
        raise ValueError(f"min_s ({min_s}) must not exceed max_s ({max_s})")
    times = sorted(set(item_times), reverse=True)[:RECENT_ITEMS]
    if len(times) < 2:
        return clamped(default_s, min_s=min_s, max_s=max_s,
                       what="fewer than two items with distinct times, so the default interval")
    gaps = [(newer - older).total_seconds() for newer, older in zip(times, times[1:], strict=False)]
    median = statistics.median(gaps)
    what = f"half the median gap ({duration(median)}) between the {len(times)} newest items"
    return clamped(median / 2, min_s=min_s, max_s=max_s, what=what)


def adaptive_interval_s(
    item_times: list[datetime],
    *,
    default_s: int,
    min_s: int = 300,
    max_s: int = DAY_S,
) -> int:
    """Seconds between checks suited to how often the source publishes: :func:`adaptive_interval`'s
    figure without its reason."""
    return adaptive_interval(item_times, default_s=default_s, min_s=min_s, max_s=max_s).seconds


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
    ceiling = _backoff_ceiling(consecutive_failures, base_s=base_s, max_s=max_s)
    return rng.uniform(ceiling / 2, ceiling)


def _backoff_ceiling(consecutive_failures: int, *, base_s: float, max_s: float) -> float:
    # Cap the exponent before computing the power so a long outage cannot overflow a float.
    exponent = min(consecutive_failures - 1, 62)
    return min(float(max_s), base_s * (2.0**exponent))


def next_check(
    now: datetime,
    *,
    interval: Interval,
    max_age_s: float | None = None,
    retry_after_s: float | None = None,
    failures: int = 0,
    rng: random.Random,
    max_s: float = DAY_S,
) -> tuple[datetime, str]:
    """The time of the next check, and why (the interval's reason, then what lengthened the delay).

    * ``failures == 0`` (the last check succeeded): ``now + max(interval, max_age_s)``, with
      ``max_age_s`` (from ``Cache-Control``) capped at 24 h.
    * ``failures > 0``: ``now + backoff_s(failures, base_s=interval, max_s=max_s)``.
    * In both cases a ``retry_after_s`` (from ``Retry-After`` on 429/503) is a floor: the next check
      is never earlier than the server asked (capped at 7 days so a source cannot be parked for ever).
    """
    reasons = [interval.reason] if interval.reason else []
    base_s = max(float(interval.seconds), 1.0)
    if failures > 0:
        delay = backoff_s(failures, base_s=base_s, max_s=max_s, rng=rng)
        ceiling = _backoff_ceiling(failures, base_s=base_s, max_s=max_s)
        reasons.append(
            f"{failures} failed check{'s' if failures > 1 else ''} in a row: backing off {duration(delay)} "
            f"(a random wait of {duration(ceiling / 2)} to {duration(ceiling)}; the interval doubles with "
            f"each failure, up to {duration(max_s)})"
        )
    else:
        delay = float(interval.seconds)
        max_age = min(float(max_age_s or 0), float(DAY_S))
        if max_age > delay:
            delay = max_age
            reasons.append(f"the feed's Cache-Control max-age is longer: {duration(delay)}")
    retry_after = min(float(retry_after_s or 0), float(MAX_RETRY_AFTER_S))
    if retry_after > delay:
        delay = retry_after
        reasons.append(f"the server asked to wait {duration(delay)} (Retry-After)")
    return now + timedelta(seconds=delay), "; ".join(reasons)


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
    """The time of the next check: :func:`next_check` for an interval of ``interval_s`` seconds, without
    the reason."""
    at, _reason = next_check(
        now,
        interval=Interval(int(interval_s), ""),
        max_age_s=max_age_s,
        retry_after_s=retry_after_s,
        failures=failures,
        rng=rng,
        max_s=max_s,
    )
    return at
