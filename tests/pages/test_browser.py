"""The pages in a real headless Chromium against a seeded server on 127.0.0.1.

Each page is loaded at 1440 and 390 CSS pixels: the right values are on screen, the page fits the width,
every control has an accessible name, and not one request leaves the service. An admin logs in,
resolves a signal and sees it change. Screenshots go to ``$CHIPWATCH_SCREENSHOT_DIR`` or a temporary
folder (printed). With the shared corpus present, MLPerf v5.1 results are imported first so the
leaderboards hold the real submissions.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from chipwatch.db import session_scope
from chipwatch.imports.service import ImportRequest, run_import
from tests.fixtures.corpus import corpus_dir
from tests.fixtures.database import ADMIN_TOKEN
from tests.fixtures.server import serving
from tests.pages.browser import Tab

SIGNAL = "jalapeno-100mw-2026"
MLPERF_V51 = "mlperf-inference/v5.1_summary_results_subset.json"
NVIDIA_FEED = "feeds-ai-chips/depodefi-rss-miner__nvidia-generative-ai-blog.xml"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
WIDTHS = (1440, 390)
CONTROLS_WITHOUT_NAMES = """(() => {
  const named = (e) => {
    if (e.getAttribute('aria-label') || e.getAttribute('aria-labelledby')) return true;
    if (e.labels && e.labels.length) return Array.from(e.labels).some((l) => l.innerText.trim());
    return (e.innerText || e.value || '').trim().length > 0;
  };
  const controls = document.querySelectorAll('a[href], button, select, textarea, input:not([type=hidden])');
  return Array.from(controls).filter((e) => !named(e)).map((e) => e.outerHTML.slice(0, 120));
})()"""


@pytest.fixture
def live(db, httpserver_ipv4) -> Iterator[dict]:
    """A seeded instance served by uvicorn on 127.0.0.1, yielding its base URL and an HTTP client on it.

    Two feeds are added and checked through the API against a server on 127.0.0.1: one answers 503 (a
    failing source), the other serves a real NVIDIA blog feed from the corpus. With the corpus present,
    MLPerf v5.1 results are imported too, so the leaderboards hold the real submissions.
    """
    from chipwatch.app import create_app

    app = create_app(scheduler=False)  # wires the listeners that imports and checks need
    mlperf = corpus_dir() / MLPERF_V51
    if mlperf.is_file():
        with session_scope() as session:
            request = ImportRequest(
                kind="mlperf-inference-summary", data=mlperf.read_bytes(), file_name=mlperf.name, actor="test"
            )
            run_import(session=session, request=request)
    httpserver_ipv4.expect_request("/down.xml").respond_with_data("unavailable", status=503)
    feeds = {"loopback-down": "/down.xml"}
    nvidia = corpus_dir() / NVIDIA_FEED
    if nvidia.is_file():
        httpserver_ipv4.expect_request("/nvidia.xml").respond_with_data(
            nvidia.read_bytes(), content_type="application/rss+xml"
        )
        feeds["nvidia-blog-mirror"] = "/nvidia.xml"
    with serving(app) as base, httpx.Client(base_url=base, timeout=60, headers=ADMIN) as api:
        for source_id, path in feeds.items():
            body = {
                "id": source_id,
                "name": source_id.replace("-", " ").title(),
                "url": httpserver_ipv4.url_for(path),
                "trust": "vendor",
            }
            created = api.post("/v1/sources", json=body)
            assert created.status_code == 201, created.text
            assert api.post(f"/v1/sources/{source_id}/check").status_code == 200
        yield {"base": base, "api": api, "mlperf": mlperf.is_file()}


def _outside(tab: Tab, base: str) -> list[str]:
    """URLs the tab sent requests for that are not the service's (``data:`` and the page's own ``blob:``
    URLs never leave the browser)."""
    return [
        u
        for u in tab.requests()
        if not (u.startswith(base + "/") or u.startswith(f"blob:{base}/") or u.startswith("data:"))
    ]


def _wait_for(tab: Tab, expression: str, timeout_s: float = 15.0):
    import time

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = tab.evaluate(expression)
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"never true: {expression}")


def _check_layout(tab: Tab, width: int) -> None:
    assert tab.evaluate("document.documentElement.scrollWidth") <= width, "the page is wider than the screen"
    assert tab.evaluate(CONTROLS_WITHOUT_NAMES) == []


def test_every_page_shows_the_right_values_at_both_widths(chromium, live, screenshot_dir):
    base, api = live["base"], live["api"]
    race = api.get("/v1/race").json()
    sources = api.get("/v1/sources", params={"limit": 500}).json()["items"]
    top = api.get(
        "/v1/race/leaderboard",
        params={
            "benchmark": "inferencex",
            "model": "gpt-oss-120b",
            "scenario": "max_per_user",
            "metric": "single_user_output_speed",
        },
    ).json()["entries"][0]
    assert (top["chip"], top["value"]) == ("jalapeno", 1459.0)
    for width in WIDTHS:
        tab = chromium.new_tab(width=width)
        tab.goto(f"{base}/")
        assert tab.text(f"#signal-{SIGNAL} .signal-status") == "○ open"
        assert tab.text("#count-open") == str(race["signal_counts"]["open"])
        assert tab.evaluate("document.querySelectorAll('#board tbody tr').length") == len(race["signals"])
        assert tab.evaluate("document.querySelectorAll('svg.chart').length") >= 4
        _check_layout(tab, width)
        tab.screenshot(screenshot_dir / f"race-{width}.png")

        tab.goto(f"{base}/signals/{SIGNAL}")
        assert tab.text("#status-text") == "open" and tab.text("#outcome-text") == "not yet known"
        assert "at least 100 MW" in tab.text("#conditions + h3 + ol")
        _check_layout(tab, width)
        tab.screenshot(screenshot_dir / f"signal-{width}.png")

        tab.goto(f"{base}/chips/jalapeno")
        assert tab.text("#spec-tdp") == "700 W"
        assert tab.text("#spec-memory-bandwidth") == "15.4 TB/s"
        # the chart a phone sees is the narrow drawing, a wide screen the wide one
        visible = tab.evaluate(
            "Array.from(document.querySelectorAll('svg.chart')).filter("
            "s => s.getBoundingClientRect().width > 0).map(s => s.getAttribute('width'))"
        )
        assert visible and set(visible) == {"360" if width < 700 else "560"}
        _check_layout(tab, width)
        tab.screenshot(screenshot_dir / f"chip-{width}.png")

        tab.goto(f"{base}/leaderboards?benchmark=inferencex&model=gpt-oss-120b&scenario=max_per_user")
        assert tab.text(".leaderboard tbody tr:first-child .chip") == "Jalapeño"
        assert tab.text(".leaderboard tbody tr:first-child .value") == "1,459"
        _check_layout(tab, width)
        if live["mlperf"]:
            tab.goto(f"{base}/leaderboards?benchmark=mlperf-inference&model=deepseek-r1&scenario=offline")
            best = api.get(
                "/v1/race/leaderboard",
                params={"benchmark": "mlperf-inference", "model": "deepseek-r1", "scenario": "offline"},
            ).json()["entries"]
            # MLPerf v5.1: 72x GB300 leads DeepSeek-R1 offline with 420,659 tokens/s (corpus file)
            assert (best[0]["chip"], best[0]["value"]) == ("gb300", 420659.0)
            assert tab.text(".leaderboard tbody tr:first-child .chip") == "GB300"
            assert tab.text(".leaderboard tbody tr:first-child .value").startswith("420,659")
            _check_layout(tab, width)
        tab.screenshot(screenshot_dir / f"leaderboards-{width}.png")

        tab.goto(f"{base}/sources")
        assert tab.evaluate("document.querySelectorAll('#sources tbody tr').length") == len(sources)
        _check_layout(tab, width)
        assert tab.text("#source-loopback-down .source-state") == "✕ failing"
        tab.screenshot(screenshot_dir / f"sources-{width}.png")
        tab.click("#failing")
        tab.click_and_wait("form.filters button[type=submit]")
        assert tab.evaluate("location.search") == "?failing=true"
        rows = tab.evaluate("Array.from(document.querySelectorAll('#sources tbody tr')).map(r => r.id)")
        assert rows == ["source-loopback-down"]
        assert "503" in tab.text("#source-loopback-down .source-error")

        for path, ready in (
            ("/docs", "document.querySelector('.swagger-ui .info .title')"),
            ("/redoc", "document.querySelector('.api-content h1')"),
        ):
            tab.goto(base + path)
            assert "chipwatch" in _wait_for(tab, f"{ready} && {ready}.innerText")
            tab.screenshot(screenshot_dir / f"{path.strip('/')}-{width}.png")
        assert _outside(tab, base) == [], "a page requested something outside the service"


def test_an_admin_logs_in_and_resolves_a_signal(chromium, live, screenshot_dir):
    base, api = live["base"], live["api"]
    tab = chromium.new_tab(width=1440)
    tab.goto(f"{base}/signals/{SIGNAL}")
    assert tab.evaluate("document.querySelector('#resolve-form')") is None  # no forms for visitors
    tab.goto(f"{base}/login?next=/signals/{SIGNAL}")
    tab.type_into("#token", ADMIN_TOKEN)
    tab.click_and_wait("#login-form button[type=submit]")
    assert tab.evaluate("location.pathname") == f"/signals/{SIGNAL}"
    assert tab.text("#status-text") == "open"
    tab.evaluate("document.querySelector('#resolve-outcome').value = 'no'")
    tab.type_into("#resolve-note", "Capacity reached is not reported anywhere.")
    tab.screenshot(screenshot_dir / "admin-signal-1440.png")
    tab.click_and_wait("#resolve-form button[type=submit]")
    assert tab.text("#status-text") == "resolved" and tab.text("#outcome-text") == "no"
    assert "Capacity reached is not reported anywhere." in tab.text("#history + ol")
    assert tab.evaluate("document.querySelector('#reopen-form') !== null")
    tab.screenshot(screenshot_dir / "admin-resolved-1440.png")
    signal = api.get(f"/v1/signals/{SIGNAL}").json()
    assert (signal["status"], signal["outcome"], signal["version"]) == ("resolved", "no", 1)
    tab.goto(f"{base}/")
    assert tab.text(f"#signal-{SIGNAL} .signal-status") == "● resolved: no"
    assert tab.text("#count-resolved") == "1"
    tab.goto(f"{base}/signals/{SIGNAL}")
    tab.click_and_wait("#reopen-form button[type=submit]")
    assert tab.text("#status-text") == "open"
    tab.click_and_wait("header form button[type=submit]")  # log out
    assert tab.evaluate("document.querySelector('a[href=\"/login\"]') !== null")
    assert _outside(tab, base) == []


def test_tables_sort_when_a_header_is_clicked(chromium, live):
    base = live["base"]
    tab = chromium.new_tab(width=1440)
    tab.goto(f"{base}/sources")
    ids = tab.evaluate("Array.from(document.querySelectorAll('#sources tbody tr')).map(r => r.id)")
    assert ids == sorted(ids)
    tab.click("button[aria-label='Sort by Source']")
    tab.click("button[aria-label='Sort by Source']")
    assert tab.evaluate("document.querySelector('#sources th').getAttribute('aria-sort')") == "descending"
    names = tab.evaluate(
        "Array.from(document.querySelectorAll('#sources tbody tr td:first-child'))"
        ".map(td => td.getAttribute('data-sort'))"
    )
    assert names == sorted(names, reverse=True)


def test_screenshots_are_saved(screenshot_dir: Path):
    """Runs after the tests above (file order): the artefacts are there to look at."""
    shots = sorted(p.name for p in screenshot_dir.glob("*.png"))
    if not shots:
        pytest.skip("no browser run produced screenshots (chromium absent)")
    assert {
        f"{page}-{width}.png"
        for page in ("race", "signal", "chip", "leaderboards", "sources")
        for width in WIDTHS
    } <= set(shots)
