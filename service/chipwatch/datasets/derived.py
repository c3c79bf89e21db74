"""Figures computed from stated ones, each labelled derived with its formula and inputs.

A derived figure is never stored or shown as if a dataset had reported it: it carries ``derived=True``,
the formula in words and the exact inputs, so a reader can redo the arithmetic. A figure whose inputs
are unknown, zero, or not of the right kind is not computed (None), never estimated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from chipwatch.datasets.benchmark_serving import ServingResult


# Not frozen: a frozen dataclass's __init__ sets each field through object.__setattr__, and an import
# computes a figure or two per row. Nothing changes a figure once computed.
@dataclass(slots=True, kw_only=True)
class DerivedFigure:
    """A computed figure: ``value`` in ``unit``, from ``inputs`` by ``formula``."""

    name: str
    value: float
    unit: str
    formula: str
    inputs: dict[str, float] = field(default_factory=dict)
    derived: bool = True


def tokens_per_s_per_accelerator(
    tokens_per_s: float | None, accelerator_count: int | None
) -> DerivedFigure | None:
    """System tokens/s divided by its accelerator count; None unless both are known and positive."""
    if tokens_per_s is None or accelerator_count is None or tokens_per_s <= 0 or accelerator_count <= 0:
        return None
    return DerivedFigure(
        name="tokens_per_s_per_accelerator",
        value=tokens_per_s / accelerator_count,
        unit="tokens/s per accelerator",
        formula="tokens_per_s / accelerator_count",
        inputs={"tokens_per_s": tokens_per_s, "accelerator_count": accelerator_count},
    )


def tokens_per_s_per_kw(tokens_per_s: float | None, power_w: float | None) -> DerivedFigure | None:
    """System tokens/s per kilowatt of measured system power; None unless both are known and positive."""
    if tokens_per_s is None or power_w is None or tokens_per_s <= 0 or power_w <= 0:
        return None
    return DerivedFigure(
        name="tokens_per_s_per_kw",
        value=tokens_per_s / (power_w / 1000.0),
        unit="tokens/s per kW",
        formula="tokens_per_s / (power_w / 1000)",
        inputs={"tokens_per_s": tokens_per_s, "power_w": power_w},
    )


def flop_s_per_w(flop_s: float | None, tdp_w: float | None, *, precision: str) -> DerivedFigure | None:
    """Peak FLOP/s at ``precision`` per watt of TDP; None unless both are known and positive."""
    if flop_s is None or tdp_w is None or flop_s <= 0 or tdp_w <= 0:
        return None
    return DerivedFigure(
        name=f"flop_s_per_w_{precision}",
        value=flop_s / tdp_w,
        unit="FLOP/s per W",
        formula=f"flop_s_{precision} / tdp_w",
        inputs={f"flop_s_{precision}": flop_s, "tdp_w": tdp_w},
    )


def for_mlperf_result(result: dict[str, Any]) -> tuple[DerivedFigure, ...]:
    """Per-accelerator and per-kW throughput of an MLPerf result (a plain
    :class:`~chipwatch.datasets.mlperf_summary.MlperfResult`, as
    the parser gives it) stated in tokens/s.

    Per accelerator only for a system of one accelerator kind (a mixed system's average would belong
    to no chip); per kW only where the submitter measured system power in watts.
    """
    if result["metric"] != "tokens_per_s":
        return ()
    figures = [tokens_per_s_per_kw(result["value"], result["power_w"])]
    if len(result["accelerators"]) == 1:
        figures.append(tokens_per_s_per_accelerator(result["value"], result["accelerator_count"]))
    return tuple(figure for figure in figures if figure is not None)


def for_serving_result(result: ServingResult) -> tuple[DerivedFigure, ...]:
    """Output tokens/s per accelerator of a benchmark_serving run whose accelerator count was given."""
    figure = tokens_per_s_per_accelerator(result.output_tokens_per_s, result.accelerator_count)
    return () if figure is None else (figure,)


def for_chip(spec: dict[str, Any]) -> tuple[DerivedFigure, ...]:
    """FLOP/s per W at every precision Epoch states a FLOP/s figure for, where the TDP is known
    (``spec`` a plain :class:`~chipwatch.datasets.epoch_hardware.ChipSpec`, as the parser gives it)."""
    tdp_w = spec["tdp_w"]
    figures = (flop_s_per_w(flop_s, tdp_w, precision=key) for key, flop_s in spec["flop_s"].items())
    return tuple(figure for figure in figures if figure is not None)
