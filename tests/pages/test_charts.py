"""The SVG chart renderer: scales, ticks, labels, markers, units on the axis, hover provenance."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from chipwatch.pages.charts import (
    NARROW,
    WIDE,
    Point,
    bar_chart,
    format_number,
    format_tick,
    linear_ticks,
    log_ticks,
)

SVG = "{http://www.w3.org/2000/svg}"


def _parse(markup) -> ET.Element:
    return ET.fromstring(str(markup))


def _texts(root: ET.Element, cls: str) -> list[str]:
    return [t.text or "" for t in root.iter(f"{SVG}text") if cls in (t.get("class") or "").split()]


def test_format_number_groups_thousands_and_keeps_significant_decimals():
    assert format_number(85400) == "85,400"
    assert format_number(1459.0) == "1,459"
    assert format_number(1.7) == "1.7"
    assert format_number(104.3) == "104.3"
    assert format_number(0.045) == "0.045"
    assert format_number(13015.4) == "13,015"
    assert format_tick(25000) == "25k" and format_tick(1_500_000) == "1.5M" and format_tick(0.1) == "0.1"


def test_linear_ticks_start_at_zero_and_cover_the_largest_value():
    start, end, ticks = linear_ticks(169, 1459)
    assert start == 0 and end >= 1459 and ticks[0] == 0 and ticks[-1] == end
    steps = {round(b - a, 9) for a, b in zip(ticks, ticks[1:], strict=False)}
    assert len(steps) == 1 and 3 <= len(ticks) <= 7


def test_log_ticks_are_powers_of_ten_around_the_values():
    start, end, ticks = log_ticks(0.3, 104.3)
    assert (start, end) == (0.1, 1000.0)
    assert [t for t in ticks if math.log10(t).is_integer()] == [0.1, 1.0, 10.0, 100.0, 1000.0]


def test_a_chart_names_its_unit_on_the_axis_and_writes_every_value():
    points = [
        Point(
            "GPT-OSS 120B",
            1459,
            baseline=535,
            baseline_label="GB200",
            marker="witnessed",
            note="Source: 36Kr",
        ),
        Point("DeepSeek R1", 700, baseline=169, baseline_label="GB300", marker="independent"),
    ]
    root = _parse(
        bar_chart(points, chart_id="c1", title="Speed", axis_label="Single-user output speed, tok/s")
    )
    assert _texts(root, "axis-label") == ["Single-user output speed, tok/s"]
    values = _texts(root, "value")
    assert "1,459" in values and "700" in values
    assert "535 GB200" in values and "169 GB300" in values
    assert [t.text for t in root.iter(f"{SVG}title")][0] == "Speed"
    hover = [g.find(f"{SVG}title").text for g in root.iter(f"{SVG}g") if g.get("class") == "point"]
    assert hover[0].startswith("GPT-OSS 120B: 1,459 (baseline 535 GB200)") and "Source: 36Kr" in hover[0]
    # baselines are hatched, measured values solid: told apart without colour
    assert sum(1 for r in root.iter(f"{SVG}rect") if r.get("fill") == "url(#c1-hatch)") == 2
    assert root.get("role") == "img" and root.get("aria-labelledby") == "c1-title c1-desc"


def test_verification_levels_are_distinct_marker_shapes():
    points = [
        Point("a", 1, marker="vendor_reported"),
        Point("b", 2, marker="witnessed"),
        Point("c", 3, marker="independent"),
    ]
    root = _parse(bar_chart(points, chart_id="m", title="t", axis_label="x, units"))
    groups = [g for g in root.iter(f"{SVG}g") if g.get("class") == "point"]
    shapes = [[child.tag.removeprefix(SVG) for child in g if child.get("fill") == "#111"] for g in groups]
    assert shapes == [["circle"], ["rect"], ["path"]]


def test_ratios_are_drawn_from_the_baseline_line_on_a_log_scale():
    points = [
        Point("latency", 0.45, low=0.3, high=0.6, comparator="range"),
        Point("per kW", 104.3),
        Point("throughput", 9, comparator="gt"),
    ]
    root = _parse(
        bar_chart(
            points,
            chart_id="r",
            title="t",
            axis_label="Ratio, x baseline",
            unit_suffix="x",
            reference=1.0,
            reference_label="baseline = 1x",
            log=True,
        )
    )
    assert _texts(root, "axis-label") == ["Ratio, x baseline (log scale)"]
    assert "0.3\u20130.6x" in _texts(root, "value") and "> 9x" in _texts(root, "value")
    assert "baseline = 1x" in _texts(root, "tick")
    dashed = [line for line in root.iter(f"{SVG}line") if line.get("stroke-dasharray")]
    x_ref = float(dashed[0].get("x1"))
    bars = [r for r in root.iter(f"{SVG}rect") if r.get("fill") == "#1d4f91"]
    # the latency bar ends at the reference line (it lies left of it); the others start there
    assert math.isclose(float(bars[0].get("x")) + float(bars[0].get("width")), x_ref, abs_tol=0.2)
    assert all(math.isclose(float(b.get("x")), x_ref, abs_tol=0.2) for b in bars[1:])


def test_wide_spans_switch_to_a_log_scale_and_narrow_charts_wrap_long_labels():
    points = [Point("small " * 12, 5.0), Point("large", 90000.0)]
    wide = _parse(bar_chart(points, chart_id="w", title="t", axis_label="Samples/s", width=WIDE))
    narrow = _parse(bar_chart(points, chart_id="n", title="t", axis_label="Samples/s", width=NARROW))
    assert _texts(wide, "axis-label") == ["Samples/s (log scale)"]
    assert narrow.get("viewBox").startswith(f"0 0 {NARROW} ") and wide.get("width") == str(WIDE)
    assert len(_texts(narrow, "row-label")) == 3  # the long label on two lines, the short one on one


def test_text_is_escaped():
    root = _parse(
        bar_chart(
            [Point("<script>x</script>", 1.0, note="a & b")], chart_id="e", title="<t>", axis_label="a < b"
        )
    )
    assert _texts(root, "row-label") == ["<script>x</script>"]  # parsed back: it was escaped in the markup
    assert list(root.iter("script")) == [] and list(root.iter(f"{SVG}script")) == []
