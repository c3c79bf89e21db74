"""Server-side SVG charts (pure): horizontal bar and dot charts with labelled axes and units.

Readable without colour: every bar carries its label and value as text, a baseline is hatched where the
measured value is solid, and the verification level of each point is a marker shape (circle: vendor
reported, square: witnessed, diamond: independent) named in the legend. Each point's source is in its
hover text (``<title>``) and in the table the page sets beside the chart.

Figures spanning more than two orders of magnitude are drawn on a log scale, as dots on stems, since a
bar's length means nothing there; ratios against a baseline are drawn from the 1x reference line,
left for "less than the baseline", right for "more".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

WIDE = 560
NARROW = 360
PAD_LEFT = 8
PAD_RIGHT = 78  # room for the value written after the longest bar
LABEL_FONT = 13
ROW_GAP = 10
BAR_H = 14
BASELINE_H = 10
AXIS_H = 46
TOP_H = 22
LOG_SPAN = 100.0  # max / min beyond which a log scale is used
MARKERS = ("vendor_reported", "witnessed", "independent")


@dataclass(frozen=True, slots=True)
class Point:
    """One row of a chart.

    ``value`` is the figure drawn (a range's midpoint), ``low``/``high`` a range's ends, ``comparator``
    the result's (``gt``: "more than"), ``baseline`` the baseline's figure in the same unit (drawn
    hatched below), ``marker`` a verification level, ``note`` the hover text (source, provenance).
    """

    label: str
    value: float
    low: float | None = None
    high: float | None = None
    comparator: str = "eq"
    baseline: float | None = None
    baseline_label: str | None = None
    marker: str = "vendor_reported"
    note: str = ""


def format_number(value: float) -> str:
    """A figure for people: thousands grouped, at most 3 significant decimals (``85,400``, ``1.7``,
    ``0.045``); integers without a decimal point."""
    magnitude = abs(value)
    if magnitude >= 1000:
        digits = 0
    elif magnitude >= 100:
        digits = 1
    elif magnitude >= 1:
        digits = 2
    else:
        digits = 3
    text = f"{value:,.{digits}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def format_tick(value: float) -> str:
    """An axis tick: compact thousands (``2k``, ``1.5M``)."""
    magnitude = abs(value)
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if magnitude >= size:
            return format_number(value / size) + suffix
    return format_number(value)


def _nice_step(span: float, ticks: int = 4) -> float:
    raw = span / max(ticks, 1)
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * power:
            return factor * power
    return 10 * power


def linear_ticks(low: float, high: float) -> tuple[float, float, list[float]]:
    """A linear domain that starts at zero (or below, for negatives) with round ticks:
    ``(start, end, ticks)``."""
    low, high = min(low, 0.0), max(high, 0.0)
    if high == low:
        high = low + 1.0
    step = _nice_step(high - low)
    start = math.floor(low / step) * step
    end = math.ceil(high / step) * step
    count = round((end - start) / step)
    return start, end, [start + i * step for i in range(count + 1)]


def log_ticks(low: float, high: float) -> tuple[float, float, list[float]]:
    """A log domain from the power of ten at or below ``low`` to the one at or above ``high``, with ticks
    at each power (and at 2 and 5 times it when the domain spans at most two decades)."""
    first = math.floor(math.log10(low))
    last = math.ceil(math.log10(high))
    if last == first:
        last += 1
    ticks: list[float] = []
    for power in range(first, last + 1):
        ticks.append(10.0**power)
        if last - first <= 2 and power < last:
            ticks += [2 * 10.0**power, 5 * 10.0**power]
    return 10.0**first, 10.0**last, sorted(ticks)


class _Scale:
    def __init__(self, start: float, end: float, log: bool, width: int) -> None:
        self.start, self.end, self.log = start, end, log
        self.x0, self.x1 = PAD_LEFT, width - PAD_RIGHT

    def __call__(self, value: float) -> float:
        if self.log:
            value = max(value, self.start)
            share = (math.log10(value) - math.log10(self.start)) / (
                math.log10(self.end) - math.log10(self.start)
            )
        else:
            share = (value - self.start) / (self.end - self.start)
        return round(self.x0 + share * (self.x1 - self.x0), 1)


def _marker(kind: str, x: float, y: float) -> str:
    """The verification marker at (x, y): circle, square or diamond, dark with a white outline."""
    common = 'fill="#111" stroke="#fff" stroke-width="1.5"'
    if kind == "independent":
        return f'<path d="M{x} {y - 7}L{x + 7} {y}L{x} {y + 7}L{x - 7} {y}Z" {common}/>'
    if kind == "witnessed":
        return f'<rect x="{x - 5.5}" y="{y - 5.5}" width="11" height="11" {common}/>'
    return f'<circle cx="{x}" cy="{y}" r="5.5" {common}/>'


def marker_svg(kind: str) -> Markup:
    """A small stand-alone SVG of one verification marker (for legends and badges)."""
    return Markup(
        '<svg class="marker" width="16" height="16" viewBox="0 0 16 16" aria-hidden="true" focusable="false">'
        f"{_marker(kind, 8, 8)}</svg>"
    )


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _lines(text: str, limit: int, max_lines: int = 2) -> list[str]:
    """``text`` broken at spaces into at most ``max_lines`` lines of ``limit`` characters (the last one
    clipped with an ellipsis)."""
    lines: list[str] = []
    rest = text
    while rest and len(lines) < max_lines - 1 and len(rest) > limit:
        cut = rest.rfind(" ", 0, limit + 1)
        if cut <= 0:
            break
        lines.append(rest[:cut])
        rest = rest[cut + 1 :]
    lines.append(_clip(rest, limit))
    return lines


def _value_text(p: Point, unit_suffix: str) -> str:
    prefix = {"gt": "> ", "gte": "\u2265 ", "lt": "< ", "lte": "\u2264 ", "approx": "\u2248 "}.get(
        p.comparator, ""
    )
    if p.low is not None and p.high is not None and p.low != p.high:
        return f"{format_number(p.low)}\u2013{format_number(p.high)}{unit_suffix}"
    return f"{prefix}{format_number(p.value)}{unit_suffix}"


def bar_chart(
    points: Sequence[Point],
    *,
    chart_id: str,
    title: str,
    axis_label: str,
    unit_suffix: str = "",
    reference: float | None = None,
    reference_label: str | None = None,
    log: bool | None = None,
    width: int = WIDE,
) -> Markup:
    """An accessible SVG chart of ``points``, one row each, in the order given.

    ``axis_label`` names the quantity and its unit (it is written under the axis); ``unit_suffix`` is
    appended to each value label (``x`` for ratios). With ``reference`` (1 for ratios) a dashed line
    marks it and each bar starts there. ``log`` forces a log scale on or off; by default figures
    spanning more than :data:`LOG_SPAN` use one. Values must be positive on a log scale (others are
    left out and the description says how many). ``width`` is the drawing's width in its own units,
    which are CSS pixels when shown at that width (:data:`WIDE` for screens, :data:`NARROW` for
    phones). Returns ``Markup`` safe to insert in a page.
    """
    drawn = [p for p in points if p.value is not None]
    values = [v for p in drawn for v in (p.value, p.low, p.high, p.baseline) if v is not None]
    if reference is not None:
        values.append(reference)
    positive = [v for v in values if v > 0]
    if log is None:
        log = bool(positive) and len(positive) == len(values) and max(positive) / min(positive) > LOG_SPAN
    if log:
        dropped = [p for p in drawn if p.value <= 0]
        drawn = [p for p in drawn if p.value > 0]
        start, end, ticks = log_ticks(min(positive), max(positive))
    else:
        dropped = []
        start, end, ticks = linear_ticks(min(values, default=0.0), max(values, default=1.0))
    scale = _Scale(start, end, log, width)
    label_chars = int((width - PAD_LEFT) / 7.2)
    origin = scale(reference) if reference is not None else scale(max(start, 0.0) if not log else start)

    rows: list[str] = []
    y = TOP_H
    for index, p in enumerate(drawn):
        lines = _lines(p.label, label_chars)
        label_h = LABEL_FONT * len(lines) + 2 * (len(lines) - 1)
        row_h = label_h + 4 + BAR_H + (BASELINE_H + 3 if p.baseline is not None else 0)
        bar_y = y + label_h + 4
        mid = bar_y + BAR_H / 2
        x_value = scale(p.value)
        parts = [
            f'<text class="row-label" x="{PAD_LEFT}" y="{y + (i + 1) * LABEL_FONT + i * 2}">'
            f"{escape(line)}</text>"
            for i, line in enumerate(lines)
        ]
        left, right = sorted((origin, x_value))
        if log and reference is None:
            parts.append(
                f'<line x1="{origin}" y1="{mid}" x2="{x_value}" y2="{mid}" stroke="#1d4f91" '
                'stroke-width="3"/>'
            )
        else:
            parts.append(
                f'<rect x="{left}" y="{bar_y}" width="{max(right - left, 1)}" height="{BAR_H}" '
                'fill="#1d4f91"/>'
            )
        if p.low is not None and p.high is not None:
            lo, hi = scale(p.low), scale(p.high)
            parts.append(
                f'<path d="M{lo} {mid}H{hi}M{lo} {mid - 6}V{mid + 6}M{hi} {mid - 6}V{mid + 6}" '
                'stroke="#111" stroke-width="2" fill="none"/>'
            )
        parts.append(_marker(p.marker if p.marker in MARKERS else MARKERS[0], x_value, mid))
        text_x = max(x_value, scale(p.high) if p.high is not None else x_value, origin) + 10
        parts.append(
            f'<text class="value" x="{text_x}" y="{mid + 4.5}">{escape(_value_text(p, unit_suffix))}</text>'
        )
        if p.baseline is not None:
            base_y = bar_y + BAR_H + 3
            x_base = scale(p.baseline)
            b_left, b_right = sorted((origin, x_base))
            parts.append(
                f'<rect x="{b_left}" y="{base_y}" width="{max(b_right - b_left, 1)}" height="{BASELINE_H}" '
                f'fill="url(#{chart_id}-hatch)" stroke="#444" stroke-width="1"/>'
            )
            base_text = f"{format_number(p.baseline)}{unit_suffix} {p.baseline_label or 'baseline'}"
            parts.append(
                f'<text class="value baseline" x="{b_right + 6}" y="{base_y + BASELINE_H - 1}">'
                f"{escape(_clip(base_text, label_chars // 2))}</text>"
            )
        hover = p.label + ": " + _value_text(p, unit_suffix)
        if p.baseline is not None:
            hover += f" (baseline {format_number(p.baseline)}{unit_suffix} {p.baseline_label or ''})".rstrip()
        if p.note:
            hover += "\n" + p.note
        rows.append(
            f'<g class="point" data-index="{index}"><title>{escape(hover)}</title>{"".join(parts)}</g>'
        )
        y += row_h + ROW_GAP

    plot_bottom = y
    scale_note = " (log scale)" if log else ""
    # bold 12px text runs about 7.4 px a character; a long label takes a second line
    axis_lines = _lines(axis_label + scale_note, int((width - PAD_LEFT) / 7.4))
    height = plot_bottom + AXIS_H + 15 * (len(axis_lines) - 1)
    axis = [f'<line x1="{scale.x0}" y1="{plot_bottom}" x2="{scale.x1}" y2="{plot_bottom}" stroke="#333"/>']
    for tick in ticks:
        x = scale(tick)
        axis.append(f'<line x1="{x}" y1="{TOP_H - 4}" x2="{x}" y2="{plot_bottom}" stroke="#ddd"/>')
        axis.append(f'<line x1="{x}" y1="{plot_bottom}" x2="{x}" y2="{plot_bottom + 5}" stroke="#333"/>')
        axis.append(
            f'<text class="tick" x="{x}" y="{plot_bottom + 18}" text-anchor="middle">'
            f"{escape(format_tick(tick))}</text>"
        )
    for i, line in enumerate(axis_lines):
        axis.append(
            f'<text class="axis-label" x="{scale.x0}" y="{plot_bottom + 38 + 15 * i}">{escape(line)}</text>'
        )
    if reference is not None:
        x_ref = scale(reference)
        axis.append(
            f'<line x1="{x_ref}" y1="{TOP_H - 6}" x2="{x_ref}" y2="{plot_bottom}" stroke="#111" '
            'stroke-dasharray="4 3" stroke-width="1.5"/>'
        )
        axis.append(
            f'<text class="tick" x="{x_ref + 4}" y="{TOP_H - 8}">'
            f"{escape(reference_label or 'reference')}</text>"
        )

    summary = f"{len(drawn)} points"
    if drawn:
        best = max(drawn, key=lambda p: p.value)
        summary += f"; highest {best.label}: {_value_text(best, unit_suffix)}"
    if dropped:
        summary += f"; {len(dropped)} not drawn (not positive, on a log scale)"
    svg = (
        f'<svg class="chart" id="{chart_id}" viewBox="0 0 {width} {height}" width="{width}" role="img" '
        f'aria-labelledby="{chart_id}-title {chart_id}-desc" xmlns="http://www.w3.org/2000/svg">'
        f'<title id="{chart_id}-title">{escape(title)}</title>'
        f'<desc id="{chart_id}-desc">{escape(summary)}; axis: {escape(axis_label + scale_note)}</desc>'
        f'<defs><pattern id="{chart_id}-hatch" patternUnits="userSpaceOnUse" width="6" height="6" '
        'patternTransform="rotate(45)"><rect width="6" height="6" fill="#fff"/>'
        '<line x1="0" y1="0" x2="0" y2="6" stroke="#444" stroke-width="2.5"/></pattern></defs>'
        + "".join(axis)
        + "".join(rows)
        + "</svg>"
    )
    return Markup(svg)
