"""The Budget panel's figure, declared once and empty: every trace, axis and control in drawing
order (`BudgetPanel.update` only fills their data, so an update sends arrays, not a figure)."""

from __future__ import annotations

import plotly.graph_objects as go

from ctxlab.manifest import PLACEMENTS
from ctxlab.util._html import PLACEMENT_COLORS, PLACEMENT_LABELS
from ctxlab.widgets._budget_marks import MARKERS

__all__ = ["LINES", "budget_figure", "hover_template"]

LINES = (
    ("notice_tokens", "usage notice", "#888888"),
    ("trigger_tokens", "trigger", "#d62728"),
    ("input_limit", "input limit", "#000000"),
)
"""The threshold lines: the manifest's field, the trace's name, its colour."""


def hover_template(label: str, units: str) -> str:
    """A trace's hover line in ``units`` (``"tokens"`` or ``"percent"``)."""
    value = "%{y:,}" if units == "tokens" else "%{y:.1f} %"
    return f"{label}: {value}<extra></extra>"


def budget_figure() -> go.Figure:
    """The empty figure: placements stacked, threshold lines, markers, the bill and the
    calibrated estimate, the hover's leading lines, and the layout."""
    figure = go.Figure()
    _add_placements(figure)
    _add_lines(figure)
    _add_markers(figure)
    _add_usage(figure)
    _add_hover_leaders(figure)
    _lay_out(figure)
    return figure


def _add_placements(figure: go.Figure) -> None:
    for placement in PLACEMENTS:
        label = PLACEMENT_LABELS.get(placement, placement)
        figure.add_scatter(
            x=[],
            y=[],
            name=label,
            meta=label,  # the label of its hover line, in either units
            stackgroup="tokens",
            mode="lines",
            line={"width": 0.5, "color": PLACEMENT_COLORS[placement]},
            hovertemplate=hover_template(label, "tokens"),
        )


def _add_lines(figure: go.Figure) -> None:
    for _, label, color in LINES:
        figure.add_scatter(
            x=[],
            y=[],
            name=label,
            uid=label,  # found by it when its legend says "unknown"
            meta=label,
            mode="lines",
            line={"dash": "dash", "color": color, "width": 1.5},
            hovertemplate=hover_template(label, "tokens"),
        )


def _add_markers(figure: go.Figure) -> None:
    for name, symbol, color in MARKERS:
        figure.add_scatter(
            x=[],
            y=[],
            name=name,
            mode="markers",
            marker={
                "symbol": symbol,
                "size": 11,
                "color": color,
                "line": {"width": 1, "color": "#333"},
            },
            hovertemplate="%{text}<extra></extra>",
            text=[],
        )


def _add_usage(figure: go.Figure) -> None:
    # What the provider billed as input (input + cache reads + writes), where it reported it:
    # beside the stacked estimate it shows how far ctxlab's count is from the real one.
    figure.add_scatter(
        x=[],
        y=[],
        name="provider usage",
        meta="provider billed input",
        mode="lines+markers",
        line={"color": "#111111", "width": 1},
        marker={"size": 4},
        hovertemplate=hover_template("provider billed input", "tokens"),
    )
    # ctxlab's estimate calibrated to the provider's tokenizer and the unrecorded fixed part
    # (`ctxlab.calibrate`), where a calibration is known: comparable to the billed line.
    figure.add_scatter(
        x=[],
        y=[],
        name="calibrated estimate",
        meta="calibrated estimate",
        mode="lines",
        line={"color": "#111111", "width": 1, "dash": "dot"},
        hovertemplate=hover_template("calibrated estimate", "tokens"),
    )


def _add_hover_leaders(figure: go.Figure) -> None:
    # Invisible lines that lead the unified hover: the step's total, and its share of the
    # input limit (on a hidden axis of its own). Numbers only: an update stays cheap.
    figure.add_scatter(
        x=[],
        y=[],
        name="total",
        mode="lines",
        showlegend=False,
        line={"width": 0, "color": "rgba(0,0,0,0)"},
        hovertemplate="<b>total %{customdata:,} tokens</b>%{text}<extra></extra>",
        text=[],
    )
    figure.add_scatter(
        x=[],
        y=[],
        name="share",
        mode="lines",
        showlegend=False,
        yaxis="y2",
        line={"width": 0, "color": "rgba(0,0,0,0)"},
        hovertemplate="%{y:.0f} % of the input limit<extra></extra>",
    )


def _lay_out(figure: go.Figure) -> None:
    figure.update_layout(
        height=330,
        margin={"l": 50, "r": 10, "t": 30, "b": 40},
        title={"text": "Tokens per reasoning request", "x": 0.01, "font": {"size": 13}},
        xaxis={
            "title": "request",
            "rangemode": "tozero",
            "tick0": 0,
            "dtick": 1,
            "unifiedhovertitle": {"text": "request %{x}"},
        },
        yaxis={"title": "tokens", "rangemode": "tozero"},
        yaxis2={"overlaying": "y", "visible": False, "range": [0, 100]},
        legend={"orientation": "h", "y": -0.25},
        hovermode="x unified",
    )
