"""A source says why it is checked as often as it is (``interval_reason``), in words and in the API."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from chipwatch.sources.schedule import Interval, adaptive_interval, next_check
from tests.fixtures.sources import Entry, add_source, rss, run_check

T0 = datetime(2026, 8, 25, 9, 0, tzinfo=UTC)
NOW = datetime(2026, 9, 1, 12, 0, tzinfo=UTC)


def _every(hours: float, n: int) -> list[datetime]:
    return [T0 + timedelta(hours=hours * i) for i in range(n)]


def test_the_adaptive_interval_gives_its_figures():
    assert adaptive_interval(_every(20, 10), default_s=3600, min_s=300, max_s=86400) == Interval(
        36000, "half the median gap (20 h) between the 10 newest items: 10 h"
    )
    assert adaptive_interval(_every(0.05, 30), default_s=3600, min_s=300, max_s=86400) == Interval(
        300,
        "half the median gap (3 min) between the 20 newest items is 1 min 30 s, raised to the minimum, 5 min",
    )
    assert adaptive_interval(_every(96, 5), default_s=3600, min_s=300, max_s=86400) == Interval(
        86400, "half the median gap (4 d) between the 5 newest items is 2 d, lowered to the maximum, 1 d"
    )
    assert adaptive_interval([T0], default_s=3600, min_s=300, max_s=86400) == Interval(
        3600, "fewer than two items with distinct times, so the default interval: 1 h"
    )


def test_what_lengthens_the_next_check_is_said_after_the_interval():
    interval = Interval(3600, "fixed interval (check_interval_s)")
    at, reason = next_check(NOW, interval=interval, max_age_s=36000, rng=random.Random(1))
    assert at == NOW + timedelta(seconds=36000)
    assert reason == "fixed interval (check_interval_s); the feed's Cache-Control max-age is longer: 10 h"
    at, reason = next_check(NOW, interval=interval, failures=3, rng=random.Random(1))
    delay = (at - NOW).total_seconds()
    assert 7200 <= delay <= 14400
    assert reason.startswith("fixed interval (check_interval_s); 3 failed checks in a row: backing off ")
    assert reason.endswith("(a random wait of 2 h to 4 h; the interval doubles with each failure, up to 1 d)")
    _at, reason = next_check(NOW, interval=interval, retry_after_s=7200, rng=random.Random(1))
    assert reason == "fixed interval (check_interval_s); the server asked to wait 2 h (Retry-After)"


def test_a_source_shows_the_reason_for_its_interval(db, client, httpserver_ipv4):
    every_20_hours = [Entry(f"Post {i}", guid=f"p{i}", date=T0 + timedelta(hours=20 * i)) for i in range(6)]
    httpserver_ipv4.expect_request("/feed.xml").respond_with_data(
        rss(every_20_hours), content_type="application/rss+xml"
    )
    add_source("slow", httpserver_ipv4.url_for("/feed.xml"))
    assert client.get("/v1/sources/slow").json()["interval_reason"] is None  # not checked yet
    run_check("slow")
    shown = client.get("/v1/sources/slow").json()
    assert shown["effective_interval_s"] == 36000
    assert shown["interval_reason"] == "half the median gap (20 h) between the 6 newest items: 10 h"
    # A check with no new item keeps the interval and its reason.
    run_check("slow")
    assert client.get("/v1/sources/slow").json()["interval_reason"] == shown["interval_reason"]


def test_a_failing_source_says_it_is_backing_off(db, client, closed_port_url):
    add_source("down", closed_port_url, check_interval_s=600)
    run_check("down")
    run_check("down")
    reason = client.get("/v1/sources/down").json()["interval_reason"]
    assert reason.startswith("fixed interval (check_interval_s); 2 failed checks in a row: backing off ")
