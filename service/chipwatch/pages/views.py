"""What the templates show (pure): labels, provenance, health summaries, chart rows and leaderboards,
built from the plain data :mod:`chipwatch.pages.reads` returns."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime
from typing import Any

from chipwatch.pages.charts import NARROW, WIDE, Point, bar_chart, format_number
from chipwatch.race.leaderboard import DERIVED_METRICS

METRIC_LABELS = {
    "throughput_per_watt_ratio": "Throughput per watt",
    "throughput_per_kw_ratio": "Throughput per kW",
    "throughput_per_mw_ratio": "Throughput per MW",
    "tokens_per_mw_ratio": "Tokens per MW",
    "throughput_per_kw": "Throughput per kW",
    "single_user_output_speed": "Single-user output speed",
    "single_user_output_speed_ratio": "Single-user output speed",
    "single_user_speed_ratio": "Single-user output speed",
    "end_to_end_latency_ratio": "End-to-end latency",
    "throughput_ratio": "Throughput",
    "output_throughput": "Output throughput",
    "tokens_per_s": "Throughput",
    "samples_per_s": "Samples per second",
    "queries_per_s": "Queries per second",
    "latency_ms": "Latency",
    "tokens_per_s_per_accelerator": "Throughput per accelerator",
    "tokens_per_s_per_kw": "Throughput per kW",
    "flop_s_per_w": "FLOP/s per watt",
}
VERIFICATION_LABELS = {
    "vendor_reported": "Vendor reported",
    "witnessed": "Witnessed",
    "independent": "Independent",
}
_LOWER_IS_BETTER = re.compile(r"latency|ttft|tpot|itl|_ms$|time_to", re.IGNORECASE)
CHART_ROWS = 12
"""A leaderboard chart shows the best this many; its table lists every entry."""


def metric_label(metric: str | None) -> str:
    """A readable name of a result metric (``single_user_output_speed`` -> "Single-user output speed")."""
    if not metric:
        return "Value"
    return METRIC_LABELS.get(metric) or metric.replace("_", " ").capitalize()


def lower_is_better(metric: str | None, unit: str | None) -> bool:
    """True for latency-like figures (a smaller number is the better result)."""
    return bool(_LOWER_IS_BETTER.search(metric or "")) or (unit or "").strip().lower() in ("ms", "s")


def unit_label(unit: str | None) -> str:
    """How a unit is written on an axis: ``x`` as "× baseline", others as given."""
    if unit in (None, ""):
        return "no unit given"
    return "\u00d7 baseline" if unit == "x" else unit


def axis_label(metric: str | None, unit: str | None) -> str:
    """The quantity and its unit for a chart axis: "Single-user output speed, tok/s"."""
    text = f"{metric_label(metric)}, {unit_label(unit)}"
    if lower_is_better(metric, unit):
        text += " (lower is better)"
    return text


def when(value: Any, precision: str | None = "day") -> str:
    """A date or time for people: a date at its precision (``Aug 2026``, ``Q3 2026``, ``2025``), a time
    as ``YYYY-MM-DD HH:MM UTC``; "—" for None."""
    if value in (None, ""):
        return "\u2014"
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value) if "T" in value else date.fromisoformat(value)
        except ValueError:
            return value
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M UTC")
    if precision == "year":
        return f"{value.year}"
    if precision == "quarter":
        return f"Q{(value.month - 1) // 3 + 1} {value.year}"
    if precision == "month":
        return value.strftime("%b %Y")
    return value.isoformat()


def money(amount: float | None, currency: str | None) -> str:
    """An amount with its currency, in millions or billions (``USD 20 bn``); "—" for None."""
    if amount is None:
        return "\u2014"
    code = f"{currency} " if currency else ""
    for size, word in ((1e9, "bn"), (1e6, "m")):
        if abs(amount) >= size:
            return f"{code}{format_number(amount / size)} {word}"
    return f"{code}{format_number(amount)}"


def duration(seconds: float | None) -> str:
    """An interval for people: ``45 s``, ``5 min``, ``1 h``, ``1 d 2 h``; "—" for None."""
    if seconds is None:
        return "\u2014"
    seconds = int(seconds)
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{round(seconds / 60)} min"
    if seconds < 172800:
        return f"{format_number(seconds / 3600)} h"
    return f"{format_number(seconds / 86400)} d"


def name_of(id_: str | None, names: Mapping[str, str]) -> str:
    """An entity's display name, else its id."""
    return names.get(id_ or "", id_ or "")


def names_of(ids: Sequence[str], names: Mapping[str, str]) -> str:
    """Display names joined by " / "."""
    return " / ".join(name_of(i, names) for i in ids)


def provenance(
    row: Mapping[str, Any], sources: Mapping[str, Mapping[str, Any]], names: Mapping[str, str]
) -> dict:
    """Who stands behind a fact and where it was read: verification level, who reported, witnessed or
    reproduced it, its source (name and link) or dataset (kind, version, row link), and its dates."""
    source = row.get("source")
    source_id = row.get("source_id") or (source or {}).get("id")
    if source is None and source_id:
        source = sources.get(source_id) or {"id": source_id, "name": source_id, "url": None}
    by = []
    for key, word in (
        ("reported_by", "reported by"),
        ("witnessed_by", "witnessed by"),
        ("reproduced_by", "reproduced by"),
    ):
        if row.get(key):
            by.append(f"{word} {name_of(row[key], names)}")
    return {
        "verification": row.get("verification") or "vendor_reported",
        "verification_label": VERIFICATION_LABELS.get(row.get("verification") or "", "Vendor reported"),
        "by": ", ".join(by),
        "source_name": (source or {}).get("name") or (source or {}).get("id"),
        "source_url": (source or {}).get("url"),
        "dataset": row.get("dataset"),
        "dataset_version": (row.get("dataset_version") or "")[:12] or None,
        "dataset_scope": row.get("dataset_scope"),
        "link": row.get("link"),
        "certainty": row.get("certainty"),
        "published": when(row.get("published_on"), row.get("published_on_precision")),
        "as_of": when(row.get("as_of"), row.get("as_of_precision")),
    }


def provenance_text(prov: Mapping[str, Any]) -> str:
    """Provenance in one line (a chart point's hover text)."""
    parts = [prov["verification_label"]]
    if prov["by"]:
        parts.append(prov["by"])
    if prov["source_name"]:
        parts.append(
            f"source: {prov['source_name']}" + (f" ({prov['source_url']})" if prov["source_url"] else "")
        )
    if prov["dataset"]:
        parts.append(f"dataset: {prov['dataset']} {prov['dataset_scope'] or ''}".rstrip())
    if prov["link"]:
        parts.append(prov["link"])
    if prov["published"] != "\u2014":
        parts.append(f"published {prov['published']}")
    return "; ".join(parts)


def _result_label(r: Mapping[str, Any], names: Mapping[str, str], *, with_chip: bool) -> str:
    parts = []
    if with_chip and r.get("chips"):
        parts.append(names_of(r["chips"], names))
    models = names_of(r.get("models") or [], names) or r.get("model_label")
    if models:
        parts.append(models)
    if r.get("baselines") or r.get("baseline_label"):
        parts.append("vs " + (r.get("baseline_label") or names_of(r["baselines"], names)))
    setting = (r.get("operating_point") or "").replace("_", " ")
    if r.get("interactivity_tok_s_user"):
        setting = (setting + f" at {format_number(r['interactivity_tok_s_user'])} tok/s/user").strip()
    if setting:
        parts.append(setting)
    return " \u00b7 ".join(parts) or r.get("id", "")


def normalize_result(row: Mapping[str, Any]) -> dict[str, Any]:
    """A knowledge-base result row or a race ``ResultView`` in one shape (race names: chips, baselines,
    models, benchmark)."""
    r = dict(row)
    r.setdefault("chips", row.get("chip_ids") or [])
    r.setdefault("baselines", row.get("baseline_ids") or [])
    r.setdefault("models", row.get("model_ids") or [])
    r.setdefault("benchmark", row.get("benchmark_id"))
    return r


def result_row(
    r: Mapping[str, Any],
    sources: Mapping[str, Mapping[str, Any]],
    names: Mapping[str, str],
    *,
    with_chip: bool = False,
) -> dict[str, Any]:
    """One result as a table row: what was measured, the figure and its unit, the baseline, the ratio to
    it, the setting, and its provenance."""
    r = normalize_result(r)
    value, low, high = r.get("value"), r.get("value_min"), r.get("value_max")
    comparator = r.get("comparator") or "eq"
    unit = r.get("unit") or ""
    if low is not None and high is not None and low != high:
        figure = f"{format_number(low)}\u2013{format_number(high)}"
    elif value is not None:
        prefix = {"gt": "> ", "gte": "\u2265 ", "lt": "< ", "lte": "\u2264 ", "approx": "\u2248 "}.get(
            comparator, ""
        )
        figure = prefix + format_number(value)
    else:
        figure = "\u2014"
    ratio = None
    if value is not None and r.get("baseline_value"):
        ratio = value / r["baseline_value"]
    prov = provenance(r, sources, names)
    return {
        "id": r.get("id"),
        "chips": [(c, name_of(c, names)) for c in r["chips"]],
        "metric": metric_label(r.get("metric")),
        "metric_id": r.get("metric"),
        "models": names_of(r["models"], names) or r.get("model_label") or "\u2014",
        "benchmark": name_of(r.get("benchmark"), names) or "\u2014",
        "figure": figure,
        "sort_value": value if value is not None else "",
        "unit": unit_label(unit) if unit == "x" else unit,
        "baseline": r.get("baseline_label") or names_of(r["baselines"], names) or "\u2014",
        "baseline_value": format_number(r["baseline_value"]) + (f" {unit}" if unit else "")
        if r.get("baseline_value") is not None
        else "\u2014",
        "ratio": f"{format_number(ratio)}\u00d7" if ratio is not None else "\u2014",
        "setting": _result_label(
            {**r, "models": [], "model_label": None, "baselines": [], "baseline_label": None},
            names,
            with_chip=False,
        )
        if (r.get("operating_point") or r.get("interactivity_tok_s_user"))
        else "\u2014",
        "label": _result_label(r, names, with_chip=with_chip),
        "notes": r.get("notes"),
        "prov": prov,
        "derived": r.get("derived") or [],
    }


def _point(r: Mapping[str, Any], row: Mapping[str, Any], *, label: str, baseline: bool) -> Point:
    value = r.get("value")
    if value is None and r.get("value_min") is not None and r.get("value_max") is not None:
        value = (r["value_min"] + r["value_max"]) / 2
    return Point(
        label=label,
        value=value,
        low=r.get("value_min"),
        high=r.get("value_max"),
        comparator=r.get("comparator") or "eq",
        baseline=r.get("baseline_value") if baseline else None,
        baseline_label=row["baseline"] if baseline and r.get("baseline_value") is not None else None,
        marker=row["prov"]["verification"],
        note=provenance_text(row["prov"]),
    )


def chart(points: Sequence[Point], *, chart_id: str, title: str, **options: Any) -> dict[str, Any]:
    """A chart drawn twice, for wide screens and for phones (the page shows the one that fits), with
    what its legend needs: ``{"id", "title", "svg", "svg_narrow", "baseline", "ranges"}``."""
    return {
        "id": chart_id,
        "title": title,
        "svg": bar_chart(points, chart_id=chart_id, title=title, width=WIDE, **options),
        "svg_narrow": bar_chart(points, chart_id=f"{chart_id}-n", title=title, width=NARROW, **options),
        "baseline": any(p.baseline is not None for p in points),
        "ranges": any(p.low is not None and p.high is not None for p in points),
    }


def result_charts(
    results: Iterable[Mapping[str, Any]],
    sources: Mapping[str, Mapping[str, Any]],
    names: Mapping[str, str],
    *,
    prefix: str,
    with_chip: bool = False,
) -> list[dict[str, Any]]:
    """Charts of results: one of every ratio against a baseline (drawn from the 1x line), then one per
    metric and unit of absolute figures (the baseline's figure hatched below each bar), then one per
    derived figure (labelled derived). Each is ``{"id", "title", "svg"}``."""
    ratios: list[Point] = []
    groups: dict[tuple[str, str], list[Point]] = defaultdict(list)
    derived: dict[tuple[str, str], list[Point]] = defaultdict(list)
    for raw in results:
        r = normalize_result(raw)
        row = result_row(r, sources, names, with_chip=with_chip)
        if r.get("value") is None and r.get("value_min") is None:
            continue
        if r.get("unit") == "x":
            label = f"{metric_label(r.get('metric'))}: {row['label']}"
            if lower_is_better(r.get("metric"), None):
                label += " (lower is better)"
            ratios.append(_point(r, row, label=label, baseline=False))
        else:
            groups[(r.get("metric") or "", r.get("unit") or "")].append(
                _point(r, row, label=row["label"], baseline=True)
            )
        for fig in row["derived"]:
            if fig.get("value") is None:
                continue
            key = (fig.get("name") or "derived", fig.get("unit") or "")
            derived[key].append(
                Point(
                    label=row["label"],
                    value=fig["value"],
                    marker=row["prov"]["verification"],
                    note=f"derived: {fig.get('formula', '')}; " + provenance_text(row["prov"]),
                )
            )
    charts: list[dict[str, Any]] = []
    if ratios:
        charts.append(
            chart(
                ratios,
                chart_id=f"{prefix}-ratios",
                title="Against the baseline",
                axis_label="Ratio to the baseline, \u00d7 baseline",
                unit_suffix="\u00d7",
                reference=1.0,
                reference_label="baseline = 1\u00d7",
                log=True,
            )
        )
    for index, ((metric, unit), points) in enumerate(sorted(groups.items())):
        chart_id = f"{prefix}-m{index}"
        title = f"{metric_label(metric)} ({unit_label(unit)})"
        charts.append(chart(points, chart_id=chart_id, title=title, axis_label=axis_label(metric, unit)))
    for index, ((name, unit), points) in enumerate(sorted(derived.items())):
        chart_id = f"{prefix}-d{index}"
        title = f"{metric_label(name)} ({unit}), derived"
        charts.append(
            chart(
                points, chart_id=chart_id, title=title, axis_label=f"{metric_label(name)}, {unit} (derived)"
            )
        )
    return charts


# ---------------------------------------------------------------------------------------------- sources
def source_state(source: Mapping[str, Any]) -> str:
    """``failing`` (the last check failed), ``ok``, ``disabled``, ``not checked`` or ``not watched``
    (an article or report, never fetched)."""
    if not source.get("url") or source.get("kind") in ("article", "report", "page"):
        return "not watched"
    if not source.get("enabled"):
        return "disabled"
    if source.get("consecutive_failures", 0) > 0:
        return "failing"
    if source.get("last_checked_at") is None:
        return "not checked"
    return "ok"


def source_rows(all_sources: Iterable[Mapping[str, Any]], *, failing_only: bool = False) -> list[dict]:
    """Sources as table rows: state, last check, last success, error, interval (fixed or adaptive),
    failures, next check."""
    rows = []
    for s in all_sources:
        state = source_state(s)
        if failing_only and state != "failing":
            continue
        fixed = s.get("check_interval_s")
        interval = (
            duration(fixed) + " (fixed)"
            if fixed
            else (
                duration(s.get("effective_interval_s")) + " (adaptive)"
                if s.get("effective_interval_s")
                else "adaptive"
            )
        )
        rows.append(
            {
                "id": s["id"],
                "name": s["name"],
                "url": s.get("url"),
                "kind": s.get("kind"),
                "trust": s.get("trust"),
                "state": state,
                "last_checked": when(s.get("last_checked_at")),
                "last_success": when(s.get("last_success_at")),
                "last_status": s.get("last_status") or "\u2014",
                "http_status": s.get("last_http_status"),
                "error": s.get("last_error"),
                "failures": s.get("consecutive_failures", 0),
                "interval": interval,
                "next_check": when(s.get("next_check_at")),
                "item_count": s.get("items_count", 0),
            }
        )
    return rows


def source_health(all_sources: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Counts of sources by state and the failing ones (most failures first)."""
    rows = source_rows(all_sources)
    counts: dict[str, int] = defaultdict(int)
    for row in rows:
        counts[row["state"]] += 1
    failing = sorted((r for r in rows if r["state"] == "failing"), key=lambda r: -r["failures"])
    watched = sum(v for k, v in counts.items() if k != "not watched")
    return {"counts": dict(counts), "watched": watched, "failing": failing, "total": len(rows)}


# ---------------------------------------------------------------------------------------------- race
def deployment_row(
    d: Mapping[str, Any], sources: Mapping[str, Mapping[str, Any]], names: Mapping[str, str]
) -> dict[str, Any]:
    """A deployment as a table row: chip or system, operator, status, capacity reached and targeted,
    target date, units or scale, provenance."""
    if d.get("units_min") is not None:
        units = format_number(d["units_min"])
        if d.get("units_max") not in (None, d["units_min"]):
            units += f"\u2013{format_number(d['units_max'])}"
    else:
        units = d.get("scale") or "\u2014"
    return {
        "id": d["id"],
        "chip": (d["chip_id"], name_of(d["chip_id"], names)) if d.get("chip_id") else None,
        "system": d.get("system_label"),
        "operator": name_of(d.get("operator_id"), names) or "\u2014",
        "status": (d.get("status") or "").replace("_", " "),
        "capacity": f"{format_number(d['capacity_mw'])} MW" if d.get("capacity_mw") is not None else "\u2014",
        "target": f"{format_number(d['capacity_mw_target'])} MW"
        if d.get("capacity_mw_target") is not None
        else "\u2014",
        "target_on": when(d.get("target_on"), d.get("target_on_precision")),
        "units": units,
        "notes": d.get("notes"),
        "prov": provenance(d, sources, names),
    }


def funding_row(
    f: Mapping[str, Any], sources: Mapping[str, Mapping[str, Any]], names: Mapping[str, str]
) -> dict[str, Any]:
    """A funding round (race ``FundingView`` or knowledge row) as a table row with provenance."""
    vendor = f.get("vendor") or f.get("vendor_id")
    acquirer = f.get("acquirer") or f.get("acquirer_id")
    valuation = money(f.get("post_money_valuation"), f.get("currency"))
    return {
        "id": f["id"],
        "vendor": name_of(vendor, names),
        "round": (f.get("round_type") or "").replace("_", " ")
        + (f" by {name_of(acquirer, names)}" if acquirer else ""),
        "amount": money(f.get("amount"), f.get("currency")),
        "valuation": valuation,
        "announced": when(f.get("announced_on"), f.get("announced_on_precision")),
        "status": f.get("status"),
        "prov": provenance(f, sources, names),
    }


# ---------------------------------------------------------------------------------------------- leaderboards
def _leaderboard_entry(
    e: Mapping[str, Any], derived: bool, sources: Mapping[str, Mapping[str, Any]], names: Mapping[str, str]
) -> dict[str, Any]:
    r = e["result"]
    chip_name = e["chip_name"] or name_of(e["chip"], names)
    stated = None
    if derived and r.get("value") is not None:
        stated = f"{format_number(r['value'])} {r.get('unit') or ''}".strip()
    return {
        "rank": e["rank"],
        "chip": (e["chip"], chip_name),
        "system": r.get("system") or chip_name,
        "submitter": r.get("submitter") or name_of(r.get("reported_by"), names) or "\u2014",
        "value": e["value"],
        "figure": format_number(e["value"]),
        "stated": stated,
        "formula": (e["derived"] or {}).get("formula"),
        "accelerators": r.get("accelerator_count"),
        "division": r.get("division"),
        "considered": e["results_considered"],
        "prov": provenance(r, sources, names),
    }


def leaderboards(
    boards: Iterable[Mapping[str, Any]], names: Mapping[str, str], sources: Mapping[str, Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Leaderboards (``race.leaderboard`` answers) as page sections, one per benchmark, model and
    scenario, each holding its boards (the stated metric first, then derived ones): a chart of the best
    :data:`CHART_ROWS` chips and a table of every entry with its system, submitter, accelerators,
    division and the provenance of the result behind it."""
    sections: dict[tuple[str, str, str], dict[str, Any]] = {}
    for index, board in enumerate(boards):
        metric = board["metric"]
        scenario = (board["scenario"] or "any scenario").replace("_", " ")
        bench, model = name_of(board["benchmark"], names), name_of(board["model"], names)
        section = sections.setdefault(
            (bench, model, scenario),
            {
                "anchor": f"board-{len(sections)}",
                "title": f"{bench}: {model}, {scenario}",
                "boards": [],
            },
        )
        unit = next((e["unit"] for e in board["entries"] if e["unit"]), None)
        derived = metric in DERIVED_METRICS
        entries = [_leaderboard_entry(e, derived, sources, names) for e in board["entries"]]
        points = [
            Point(
                label=f"{x['rank']}. {x['chip'][1]}"
                + (f" \u00b7 {x['system']}" if x["system"] != x["chip"][1] else "")
                + (f" ({x['submitter']})" if x["submitter"] != "\u2014" else ""),
                value=x["value"],
                marker=x["prov"]["verification"],
                note=provenance_text(x["prov"]),
            )
            for x in entries[:CHART_ROWS]
        ]
        label = metric_label(metric) + (" (derived)" if derived else "")
        section["boards"].append(
            {
                **chart(
                    points,
                    chart_id=f"lb{index}",
                    title=f"{label}, {unit_label(unit)}",
                    axis_label=axis_label(metric, unit) + (" (derived)" if derived else ""),
                ),
                "metric": label,
                "unit": unit_label(unit),
                "derived": derived,
                "lower_is_better": board["order"] == "ascending",
                "entries": entries,
            }
        )
    for section in sections.values():
        section["boards"].sort(key=lambda b: b["derived"])
    return list(sections.values())
