"""Next-check computation: adaptive interval, backoff with jitter, Cache-Control and Retry-After."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from chipwatch.sources.schedule import adaptive_interval_s, backoff_s, next_check_at

NOW = datetime(2026, 9, 1, 12, 0, tzinfo=UTC)


def hours_ago(*hours: float) -> list[datetime]:
    return [NOW - timedelta(hours=h) for h in hours]


def test_fewer_than_two_items_uses_the_default():
    assert adaptive_interval_s([], default_s=3600) == 3600
    assert adaptive_interval_s(hours_ago(1), default_s=3600) == 3600
    # Two items at the same instant give no gap either.
    assert adaptive_interval_s([NOW, NOW], default_s=7200) == 7200


def test_default_is_clamped_too():
    assert adaptive_interval_s([], default_s=10, min_s=300) == 300
    assert adaptive_interval_s([], default_s=10**6, max_s=86400) == 86400


def test_half_the_median_gap():
    # Items every 4 hours: check every 2 hours.
    assert adaptive_interval_s(hours_ago(0, 4, 8, 12, 16), default_s=3600) == 2 * 3600


def test_order_does_not_matter_and_median_ignores_a_burst_and_a_holiday():
    times = hours_ago(12, 0, 6, 6.01, 18, 24, 24 * 14)  # a burst pair and a two-week gap
    assert adaptive_interval_s(times, default_s=3600) == 3 * 3600
    assert adaptive_interval_s(list(reversed(times)), default_s=3600) == 3 * 3600


def test_interval_is_clamped():
    assert adaptive_interval_s(hours_ago(0, 0.01, 0.02), default_s=3600, min_s=300) == 300
    assert adaptive_interval_s(hours_ago(0, 24 * 30, 24 * 60), default_s=3600, max_s=86400) == 86400


def test_only_recent_items_count():
    # 20 recent items an hour apart, then a long tail of monthly ones: the recent rhythm wins.
    recent = hours_ago(*range(20))
    old = [NOW - timedelta(days=30 * k) for k in range(2, 40)]
    assert adaptive_interval_s(recent + old, default_s=86400) == 1800


def test_min_above_max_is_an_error():
    with pytest.raises(ValueError, match="min_s"):
        adaptive_interval_s([], default_s=1, min_s=10, max_s=5)


def test_backoff_grows_exponentially_within_equal_jitter_bounds():
    rng = random.Random(42)
    for failures in range(1, 8):
        ceiling = min(86400, 60 * 2 ** (failures - 1))
        for _ in range(50):
            delay = backoff_s(failures, base_s=60, rng=rng)
            assert ceiling / 2 <= delay <= ceiling


def test_backoff_is_capped_and_never_gives_up():
    rng = random.Random(1)
    for failures in (30, 1000, 10**6):
        delay = backoff_s(failures, base_s=60, max_s=86400, rng=rng)
        assert 43200 <= delay <= 86400


def test_backoff_jitter_spreads_retries():
    rng = random.Random(7)
    delays = {round(backoff_s(5, base_s=60, rng=rng), 3) for _ in range(20)}
    assert len(delays) > 15


def test_backoff_with_no_failures_is_the_base():
    assert backoff_s(0, base_s=600, rng=random.Random(0)) == 600


def test_backoff_rejects_non_positive_base():
    with pytest.raises(ValueError):
        backoff_s(1, base_s=0, rng=random.Random(0))


def test_success_uses_the_interval():
    at = next_check_at(
        NOW, interval_s=1800, max_age_s=None, retry_after_s=None, failures=0, rng=random.Random(0)
    )
    assert at == NOW + timedelta(seconds=1800)


def test_max_age_is_a_floor_capped_at_a_day():
    rng = random.Random(0)
    at = next_check_at(NOW, interval_s=600, max_age_s=3600, retry_after_s=None, failures=0, rng=rng)
    assert at == NOW + timedelta(hours=1)
    # A shorter max-age does not make us poll faster than the interval.
    at = next_check_at(NOW, interval_s=600, max_age_s=60, retry_after_s=None, failures=0, rng=rng)
    assert at == NOW + timedelta(minutes=10)
    # A year-long max-age is capped at 24 h.
    at = next_check_at(NOW, interval_s=600, max_age_s=365 * 86400, retry_after_s=None, failures=0, rng=rng)
    assert at == NOW + timedelta(days=1)


def test_failure_backs_off_from_the_interval():
    at = next_check_at(
        NOW, interval_s=600, max_age_s=None, retry_after_s=None, failures=3, rng=random.Random(3)
    )
    delay = (at - NOW).total_seconds()
    assert 1200 <= delay <= 2400  # ceiling 600 * 2**2


def test_retry_after_is_honoured_as_a_minimum():
    rng = random.Random(0)
    at = next_check_at(NOW, interval_s=600, max_age_s=None, retry_after_s=7200, failures=1, rng=rng)
    assert at == NOW + timedelta(hours=2)
    # A Retry-After shorter than the backoff does not shorten it.
    at = next_check_at(NOW, interval_s=3600, max_age_s=None, retry_after_s=5, failures=4, rng=rng)
    assert (at - NOW).total_seconds() >= 4 * 3600


def test_retry_after_is_capped_at_a_week():
    at = next_check_at(
        NOW, interval_s=600, max_age_s=None, retry_after_s=10**9, failures=1, rng=random.Random(0)
    )
    assert at == NOW + timedelta(days=7)
