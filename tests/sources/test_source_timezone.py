"""A source's time zone: validated, seeded for the Chinese sources, and the zone its feed's dates are read in
by a real check, so that a signal never fires on a misread or guessed date."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
import yaml

from chipwatch.paths import SEED_DIR
from tests.fixtures.signals import create, evaluate, evidence
from tests.fixtures.sources import add_source, items_of, run_check, source_row

CHINESE_FEEDS = ("36kr-feed", "ithome", "jiqizhixin", "qbitai")


def test_the_chinese_sources_are_seeded_in_china_standard_time(db) -> None:
    for source_id in ("36kr", "zhihu", "bilibili", "weibo", "seed-articles", *CHINESE_FEEDS):
        assert source_row(source_id).timezone == "Asia/Shanghai", source_id
    assert source_row("nvidia-blog").timezone is None


def test_every_seeded_zone_is_a_zone_zoneinfo_knows() -> None:
    sources = yaml.safe_load((SEED_DIR / "sources.yaml").read_text("utf-8"))["sources"]
    zones = {s["timezone"] for s in sources if s.get("timezone")}
    assert zones == {"Asia/Shanghai"}
    for zone in zones:
        ZoneInfo(zone)


@pytest.mark.parametrize(
    ("zone", "status"),
    [("Asia/Shanghai", 201), ("America/Chicago", 201), (None, 201), ("Mars/Olympus", 422), ("CST ", 422),
     ("../../etc/passwd", 422), ("", 422)],
)
def test_a_source_zone_must_be_an_iana_name(client, admin_headers, zone, status) -> None:
    body = {"url": "https://news.example.cn/feed", "name": "News CN", "timezone": zone}
    response = client.post("/v1/sources", json=body, headers=admin_headers)
    assert response.status_code == status, response.text
    if status == 201:
        assert response.json()["timezone"] == zone
    else:
        assert response.json()["errors"][0]["field"].endswith("timezone")


def _feed(*dates: str) -> bytes:
    items = "".join(
        f"<item><title>Jalapeño item {i}</title><guid>tz-{i}</guid><pubDate>{d}</pubDate></item>"
        for i, d in enumerate(dates)
    )
    return f'<rss version="2.0"><channel><title>t</title>{items}</channel></rss>'.encode()


# (pubDate, the source's zone, stored published_at or None, reason code)
CHECKS = [
    ("Mon, 30 Nov 2026 08:30:00 CST", "Asia/Shanghai", datetime(2026, 11, 30, 0, 30, tzinfo=UTC),
     "zone-by-source"),
    ("Mon, 30 Nov 2026 08:30:00 CST", None, datetime(2026, 11, 30, 14, 30, tzinfo=UTC), "zone"),
    ("2026-11-30 08:30:00", "Asia/Shanghai", datetime(2026, 11, 30, 0, 30, tzinfo=UTC), "no-zone-source"),
    ("Mon, 30 Nov 2026 00:30:00 CET", "Asia/Shanghai", datetime(2026, 11, 29, 23, 30, tzinfo=UTC), "zone"),
    ("Mon, 30 Nov 2026 08:30:00 IST", None, None, "ambiguous-zone"),
    ("04/05/2026 08:30", None, None, "ambiguous-order"),
]


@pytest.mark.parametrize(("pub", "zone", "stored", "code"), CHECKS, ids=[f"{c[0]} in {c[1]}" for c in CHECKS])
def test_a_check_reads_dates_in_the_source_zone(db, httpserver, pub, zone, stored, code) -> None:
    httpserver.expect_request("/feed").respond_with_data(_feed(pub), content_type="application/rss+xml")
    add_source("cn-feed", httpserver.url_for("/feed"), timezone=zone)
    assert run_check("cn-feed").new_items == 1
    (item,) = items_of("cn-feed")
    assert item.published_at == stored
    assert item.published_is_estimated is (stored is None)
    assert item.published_reason.split(":")[0] == code


def test_the_issue_case_does_not_resolve_published_after(db, httpserver) -> None:
    """00:30 CET on 30 November is 23:30 UTC on the 29th: ``published_after: 2026-11-30`` must not fire,
    and an unknown date never fires it either."""
    httpserver.expect_request("/feed").respond_with_data(
        _feed("Mon, 30 Nov 2026 00:30:00 CET", "Mon, 30 Nov 2026 08:30:00 XYZ"),
        content_type="application/rss+xml",
    )
    add_source("eu-feed", httpserver.url_for("/feed"))
    run_check("eu-feed")
    create("after-30", yes=[{"item": {"terms_any": ["Jalapeño"], "published_after": "2026-11-30"}}])
    create("after-29", yes=[{"item": {"terms_any": ["Jalapeño"], "published_after": "2026-11-29"}}])
    first, second = items_of("eu-feed")
    evaluate(first.id, second.id)
    assert evidence("after-30") == []
    assert [e.ref_id for e in evidence("after-29")] == [str(first.id)]
    assert second.published_at is None and second.published_reason.startswith("unknown-zone")

