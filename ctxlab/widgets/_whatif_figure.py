"""The what-if plot as plain plotly JSON: each config's tokens per request and cumulative cost,
the provider's bill, the input limit, and the layout that holds them.

Plain dicts with NumPy arrays (`LivePlot`'s hot path): building a validated ``go.Figure`` of the
traces took longer than a 500-request replay.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ctxlab.analysis._config_run import ConfigRun
from ctxlab.analysis._whatif_frames import cumulative_costs

__all__ = ["curves", "whatif_layout"]

_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b")


def whatif_layout(*, priced: bool) -> dict[str, Any]:
    """The what-if plot's layout: tokens on the left, the cumulative cost on the right."""
    return {
        "height": 400,
        "margin": {"l": 60, "r": 60, "t": 20, "b": 40},
        "xaxis": {"title": "request", "unifiedhovertitle": {"text": "request %{x}"}},
        "yaxis": {"title": "input tokens"},
        "yaxis2": {
            # An unknown model draws no cost line: the axis says why.
            "title": "cumulative cost (USD)" if priced else "cost: unpriced (no known price)",
            "overlaying": "y",
            "side": "right",
            "rangemode": "tozero",
        },
        # Below the plot: above it, several configs' entries covered the curves.
        "legend": {"orientation": "h", "y": -0.2, "yanchor": "top"},
        "hovermode": "x unified",
    }


def curves(
    runs: Mapping[str, ConfigRun], usage: Sequence[int | None], limit: int, longest: int
) -> tuple[list[dict[str, Any]], int]:
    """Every trace of the plot (each config's two lines, the bill when ``usage`` has it, the
    input ``limit`` when there is one, over ``longest`` requests) and the highest value drawn."""
    traces: list[dict[str, Any]] = []
    peaks: list[int] = []
    for number, (name, run) in enumerate(runs.items()):
        lines, peak = _config_lines(name, run, _COLORS[number % len(_COLORS)])
        traces.extend(lines)
        peaks.append(peak)
    if usage:
        traces.append(
            _line(
                np.arange(len(usage)),
                usage,
                "billed (as recorded)",
                {"dash": "dot", "color": "#888"},
                "%{y:,} tokens billed<extra>as recorded</extra>",
            )
        )
    if limit:
        traces.append(
            _line(
                [0, max(longest - 1, 0)],
                [limit, limit],
                "input limit",
                {"dash": "dash", "color": "#000", "width": 1},
                "%{y:,} tokens<extra>input limit</extra>",
            )
        )
    # The axis holds every line drawn: the configs', the bill (a recording billed at a
    # larger window runs above this window's limit — drawn there, not cut off) and the
    # limit itself.
    peak = max((*peaks, *(u for u in usage if u is not None), limit), default=0)
    return traces, peak


def _line(
    x: Any, y: Any, name: str, line: dict[str, Any], hover: str, **extra: Any
) -> dict[str, Any]:
    """A line trace as plotly JSON."""
    return {
        "type": "scatter",
        "x": x,
        "y": y,
        "name": name,
        "mode": "lines",
        "line": line,
        "hovertemplate": hover,
        **extra,
    }


def _config_lines(name: str, run: ConfigRun, color: str) -> tuple[list[dict[str, Any]], int]:
    """A config's two lines, its tokens per request and its cost so far; and its peak."""
    totals = np.fromiter((m.estimated_input_tokens for m in run.manifests), dtype=np.int64)
    x = np.arange(len(totals))
    label = html.escape(name)
    tokens = _line(x, totals, name, {"color": color}, "%{y:,} tokens<extra>" + label + "</extra>")
    # Priced, never graded: a run not yet priced has its line drawn when it is.
    spent = np.array(cumulative_costs(run) if run.priced else [], dtype=np.float64)
    cost = _line(
        x[: len(spent)],
        spent,
        f"{name} cost",
        {"color": color, "dash": "dash", "width": 1},
        "%{y:$.4f} so far<extra>" + label + "</extra>",
        yaxis="y2",
    )
    return [tokens, cost], int(totals.max()) if len(totals) else 0
