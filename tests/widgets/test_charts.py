"""The sweep charts: Pareto front and chart, heatmap."""

from __future__ import annotations

import pandas as pd
import pytest

pytest.importorskip("plotly")

from ctxlab import ContextConfig
from ctxlab.widgets import pareto_chart, pareto_front, sweep_heatmap


def _frame() -> pd.DataFrame:
    rows = []
    figures = {
        "cheap": (0.4, 0.90),
        "balanced": (0.5, 0.99),
        "costly": (0.7, 1.0),
        "bad": (0.8, 0.95),
    }
    for session in ("s1", "s2"):
        for config, (cost, kept) in figures.items():
            rows.append(
                {
                    "session": session,
                    "config": config,
                    "window": 32_000,
                    "cost_vs_baseline": cost,
                    "retention": kept,
                    "error": None,
                }
            )
    rows.append({"session": "s3", "config": "bad", "window": 32_000, "error": "boom"})
    return pd.DataFrame(rows)


def test_the_front_holds_the_configs_nothing_beats() -> None:
    points = pd.DataFrame(
        {"cost": [0.4, 0.5, 0.7, 0.8, 0.5], "retention": [0.9, 0.99, 1.0, 0.95, 0.9]},
        index=["cheap", "balanced", "costly", "bad", "worse"],
    )
    assert pareto_front(points) == ["cheap", "balanced", "costly"]


def test_the_pareto_chart_and_heatmap() -> None:
    configs = {"balanced": ContextConfig(trigger_ratio=0.6)}
    figure = pareto_chart(_frame(), configs)
    points, front = figure.data
    assert list(points.text) == ["cheap", "balanced", "costly", "bad"]
    assert list(points.x) == [0.4, 0.5, 0.7, 0.8]  # error rows left out of the means
    assert list(front.x) == [0.4, 0.5, 0.7]
    assert "trigger_ratio = 0.6" in points.hovertext[1] and "over 2 sessions" in points.hovertext[1]
    assert tuple(figure.layout.yaxis.range) == (0, 1.05)  # retention is a share
    heat = sweep_heatmap(_frame())
    (trace,) = heat.data
    assert list(trace.y) == ["cheap", "balanced", "costly", "bad"]
    assert list(trace.x) == ["s1", "s2"]
    assert trace.z[0][0] == 0.4


def test_a_config_that_never_compacted_is_drawn_open_not_at_a_measured_one() -> None:
    frame = _frame()
    frame.loc[frame["config"] == "costly", "retention"] = None  # compacted in no session
    (points, _) = pareto_chart(frame).data
    at = list(points.text).index("costly")
    assert points.y[at] == 1.0 and points.marker.symbol[at] == "circle-open"
    assert "retention not measured" in points.hovertext[at]
    assert points.marker.symbol[0] == "circle"
    # Neighbours' labels take turns around their points.
    assert len(set(points.textposition)) == 4


def test_a_config_whose_replay_failed_is_averaged_over_the_sessions_it_finished() -> None:
    frame = _frame().assign(failed_at=None)
    # "cheap" stopped part way on s2: no cost there (NaN), and the hover says so.
    at = (frame["config"] == "cheap") & (frame["session"] == "s2")
    frame.loc[at, ["cost_vs_baseline", "failed_at"]] = [float("nan"), 3]
    frame.loc[(frame["config"] == "cheap") & (frame["session"] == "s1"), "cost_vs_baseline"] = 0.3
    (points, _) = pareto_chart(frame).data
    index = list(points.text).index("cheap")
    assert points.x[index] == 0.3
    assert "its replay failed part way on 1 of 2 sessions" in points.hovertext[index]
    assert not any("failed part way" in h for n, h in enumerate(points.hovertext) if n != index)
