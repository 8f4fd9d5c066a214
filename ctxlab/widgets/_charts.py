"""Charts of a sweep (`ctxlab.sweep`'s frame): the cost/retention trade-off per config, and a
config × session heatmap. Plain plotly figures: they render in a notebook, in HTML and offline.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import plotly.graph_objects as go

from ctxlab.config._config import ContextConfig, named_configs
from ctxlab.exceptions import UsageError
from ctxlab.util._checks import shown

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["pareto_chart", "pareto_front", "sweep_heatmap"]

_HOVER_FIELDS = ("trigger_ratio", "reserve_ratio", "tool_result_limit")


def pareto_front(
    points: pd.DataFrame, cost: str = "cost", retention: str = "retention"
) -> list[str]:
    """The index labels no other point beats on both (cheaper and at least as retentive, or
    as cheap and more retentive), cheapest first."""
    _frame(points, (cost, retention), "pareto_front")
    ordered = points.sort_values([cost, retention], ascending=[True, False])
    front: list[str] = []
    best = float("-inf")
    for label, row in ordered.iterrows():
        if row[retention] > best:
            front.append(str(label))
            best = row[retention]
    return front


_SWEPT = ("config", "session", "window", "error", "cost_vs_baseline", "retention")
"""The columns of a sweep's frame the charts read."""


def _frame(frame: object, columns: tuple[Any, ...], chart: str) -> None:
    # A chart reads a frame's columns: anything else, or a frame without them, said by name.
    if isinstance(frame, type) or not hasattr(frame, "columns"):
        msg = f"{chart} draws a pandas DataFrame (ctxlab.sweep's frame), got {shown(frame)}"
        raise UsageError(msg)
    missing = [c for c in columns if not isinstance(c, str) or c not in frame.columns]
    if missing:
        msg = (
            f"{chart}: the frame has no column {', '.join(map(shown, missing))} (its columns: "
            f"{', '.join(map(str, list(frame.columns)[:12]))})"
        )
        raise UsageError(msg)


def _summary(frame: pd.DataFrame) -> pd.DataFrame:
    ok = frame[frame["error"].isna()]
    if "failed_at" not in ok:  # a frame of a sweep from before failed replays were marked
        ok = ok.assign(failed_at=None)
    grouped = ok.groupby(["config", "window"], sort=False)
    return grouped.agg(
        # A replay that failed part way has no cost: the mean is of the sessions it finished.
        cost=("cost_vs_baseline", "mean"),
        # None compacted: nothing was lost, but nothing was measured either (NaN, not 1.0).
        retention=("retention", "mean"),
        sessions=("session", "nunique"),
        failed=("failed_at", "count"),
    )


_POSITIONS = ("top center", "bottom center", "middle right", "middle left")
"""Label positions taken in turn along the cost axis: close points' labels do not pile up."""


def pareto_chart(
    frame: pd.DataFrame, configs: Mapping[str, ContextConfig] | None = None
) -> go.Figure:
    """Cost (relative to the feasible baseline: no summary, the oldest turns dropped to fit)
    against retention, one point per config and window,
    averaged over sessions; the Pareto front joined by a line; hover names the config (and its
    main settings when ``configs`` is given)."""
    _frame(frame, _SWEPT, "pareto_chart")
    if configs is not None:
        configs = named_configs(configs)
    summary = _summary(frame)
    figure = go.Figure()
    for window in summary.index.get_level_values("window").unique():
        part: pd.DataFrame = summary.xs(window, level="window")  # type: ignore[assignment]
        part = part.sort_values("cost")
        measured = part["retention"].notna()
        hover = [_hover(str(name), row, configs) for name, row in part.iterrows()]
        figure.add_trace(
            go.Scatter(
                x=part["cost"],
                # A config that never compacted sits at the top, drawn open: nothing lost,
                # nothing measured.
                y=part["retention"].fillna(1.0),
                mode="markers+text",
                text=[str(n) for n in part.index],
                textposition=[_POSITIONS[i % len(_POSITIONS)] for i in range(len(part))],
                textfont={"size": 10},
                name=f"window {window:,}",
                hovertext=hover,
                hoverinfo="text",
                marker={
                    "size": 11,
                    "symbol": ["circle" if m else "circle-open" for m in measured],
                },
            )
        )
        front = pareto_front(part.fillna({"retention": 1.0}))
        figure.add_trace(
            go.Scatter(
                x=part.loc[front, "cost"],
                y=part.loc[front, "retention"],
                mode="lines",
                name=f"Pareto front ({window:,})",
                line={"dash": "dot", "width": 1},
                hoverinfo="skip",
            )
        )
    figure.update_layout(
        xaxis_title="cost relative to dropping the oldest turns to fit (lower is cheaper)",
        yaxis_title="retention (measured on the original messages)",
        yaxis_range=[0, 1.05],  # a share: 0 to 1, whatever the points
        height=420,
        margin={"l": 60, "r": 20, "t": 30, "b": 50},
    )
    return figure


def _hover(name: str, row: Any, configs: Mapping[str, ContextConfig] | None) -> str:
    lines = [
        f"<b>{html.escape(name)}</b>",
        f"cost {row['cost']:.3f} of the baseline (drop oldest turns)",
        (
            f"retention {row['retention']:.3f} over {int(row['sessions'])} sessions"
            if row["retention"] == row["retention"]  # not NaN
            else f"no compaction in its {int(row['sessions'])} sessions: retention not measured"
        ),
    ]
    if row["failed"]:
        lines.append(
            f"its replay failed part way on {int(row['failed'])} of {int(row['sessions'])} "
            "sessions: the cost is the mean of the others"
        )
    if configs and name in configs:
        lines += [f"{f} = {getattr(configs[name], f)}" for f in _HOVER_FIELDS]
    return "<br>".join(lines)


def sweep_heatmap(
    frame: pd.DataFrame, value: str = "cost_vs_baseline", window: int | None = None
) -> go.Figure:
    """``value`` for every config (rows) × session (columns) at one window (the first when
    omitted)."""
    _frame(frame, ("config", "session", "window", value), "sweep_heatmap")
    windows = [int(w) for w in frame["window"].dropna().unique()]
    if window is not None and (isinstance(window, bool) or window not in windows):
        msg = f"the sweep has no window {shown(window)}; its windows: {windows}"
        raise UsageError(msg)
    if not windows:
        msg = "sweep_heatmap: the frame has no row to draw"
        raise UsageError(msg)
    chosen = window if window is not None else windows[0]
    part = frame[frame["window"] == chosen]
    table = part.pivot_table(index="config", columns="session", values=value, sort=False)
    figure = go.Figure(
        go.Heatmap(
            z=table.values,
            x=[str(c) for c in table.columns],
            y=[str(i) for i in table.index],
            colorbar={"title": value},
            hovertemplate="%{y} · %{x}<br>%{z:.3f}<extra></extra>",
        )
    )
    figure.update_layout(
        title=f"{value} at a {chosen:,}-token window",
        height=120 + 40 * len(table.index),
        xaxis={"showticklabels": len(table.columns) <= 20},
    )
    return figure
