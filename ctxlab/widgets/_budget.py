"""The Budget panel: tokens by placement per reasoning request, thresholds, and markers.

A plotly figure shown by `LivePlot` (plotly.js is not stored in the widget state): one x per
request; stacked areas by placement (system, tool schemas,
summary, conversation, transient, references); the lines of the usage notice, the trigger and the
input limit as they were at each request, extended one x to the right with the values the current
config will apply next — or, while the Config tab shows a config not applied, the values it would
apply, marked so (moving a slider moves them at once, before Apply) — a recording *as recorded* has
neither: its agent's own lines are not in the file, and it has no next request; markers where a
compaction, an offload or an omission happened. Clicking a point selects that step.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import ipywidgets as w
import numpy as np

from ctxlab.analysis._calibration import ZERO_BILL
from ctxlab.exceptions import UsageError
from ctxlab.manifest import PLACEMENTS, Thresholds
from ctxlab.util._html import PLACEMENT_LABELS
from ctxlab.widgets._budget_figure import LINES, budget_figure, hover_template
from ctxlab.widgets._budget_marks import (
    MARKERS,
    compaction_marks,
    recorded_marks,
    recorded_symbols,
)
from ctxlab.widgets._columns import RowColumns
from ctxlab.widgets._plot import LivePlot
from ctxlab.widgets._steps import StepLog

__all__ = ["NOT_APPLIED", "UNITS", "BudgetPanel"]

UNITS = {"tokens": "tokens", "percent": "% of the input limit"}
"""The y axis's units: their names and axis titles."""


NOT_APPLIED = "next request, if applied (not applied)"
"""What the plot says over the lines' next point while the Config tab shows a config not
applied: the lines are drawn at it, the next request would use them only after Apply."""
UNKNOWN_LINES = "usage notice, trigger: unknown (not in the file)"
"""What the hover says at a request without thresholds (a recording as recorded): its agent's
own lines are not in the file, and none is drawn — never a line at 0."""


class BudgetPanel:
    """The figure and how it follows a `StepLog`."""

    def __init__(
        self, on_select: Callable[[int], None], on_units: Callable[[], None] | None = None
    ) -> None:
        # Every trace, axis and control of the figure is declared once, in drawing order, by
        # `budget_figure`; `update` only fills their data.
        self._on_select = on_select
        self.plot = LivePlot(budget_figure())
        self.plot.view.on_click(self._clicked)
        self.selected: int | None = None
        self.units = "tokens"
        """``"tokens"``, or ``"percent"``: every value as a share of its request's input limit."""
        self._limits = np.ones(1)
        self._usage_columns = RowColumns(("usage_total_input", "calibrated"), np.float64, np.nan)
        self._usage_log: StepLog | None = None
        self._usage_seen = 0
        self._calibrated_at = 0
        self._columns = RowColumns(
            (*PLACEMENTS, "input_limit", "total", "offloads", "omissions"), np.int32
        )
        # The lines as floats: a request without thresholds (a recording as recorded) has none,
        # drawn as a gap — not as a line at 0 that jumps to the config's value.
        self._lines = RowColumns(tuple(key for key, _, _ in LINES), np.float64, np.nan)
        self.units_picker = w.ToggleButtons(
            options=[(label, key) for key, label in UNITS.items()],
            value="tokens",
            description="plot in",
            style={"button_width": "auto"},
        )
        """The y axis's units; ``on_units`` is called to redraw when they change."""

        def picked(change: dict[str, Any]) -> None:
            self.set_units(change["new"])
            if on_units is not None:
                on_units()

        self.units_picker.observe(picked, names="value")
        self.widget = w.VBox([self.units_picker, self.plot.view])

    def set_units(self, units: str) -> None:
        """Plot tokens (``"tokens"``) or shares of each request's input limit (``"percent"``);
        call `update` afterwards to redraw."""
        if units not in UNITS:
            msg = f"units must be one of {list(UNITS)}, got {units!r}"
            raise UsageError(msg)
        self.units = units
        self.units_picker.value = units
        for trace in self.plot.data:
            label = trace.get("meta")
            if label:
                trace["hovertemplate"] = hover_template(label, units)
        self.plot.relayout(
            yaxis={**self.plot.layout["yaxis"], "title": {"text": UNITS[units]}},
            title={**self.plot.layout["title"], "text": f"{UNITS[units].capitalize()} per request"},
        )

    def _scaled(self, values: np.ndarray, steps: np.ndarray | None = None) -> np.ndarray:
        """``values`` in the current units (``steps``: the row of each value, default 0..n-1)."""
        if self.units == "tokens":
            return values
        limits = self._limits[: len(values)] if steps is None else self._limits[steps]
        return 100.0 * values / limits

    def trace(self, name: str) -> dict[str, Any]:
        """The trace called ``name`` (a placement, a line label or a marker name), as shown."""
        return self.plot.trace(PLACEMENT_LABELS.get(name, name))

    def _clicked(self, x: float, trace: str) -> None:
        self._on_select(round(x))

    def update(
        self,
        log: StepLog,
        next_lines: Thresholds | None,
        select: int | None = None,
        *,
        applied: bool = True,
    ) -> None:
        """Redraw from ``log``; ``next_lines`` are the thresholds the next request will use
        (None when there is no next request: a recording as recorded) — ``applied=False``: those
        of a config the Config tab shows, not applied yet (the plot says so).

        ``select`` also moves the selection line there, in the same update of the view.
        """
        # int32, not NumPy's default int64: JavaScript has no int64 typed array, so plotly would
        # send int64 as lists that ipywidgets then walks item by item (measured: 7.7 → 4.3 ms a
        # step at 1,000 steps). Token counts fit in int32. The rows are read by column name
        # (placements, lines): as mappings, not the typed row.
        rows: Sequence[Mapping[str, Any]] = log.rows
        count = len(rows)
        x = np.arange(count, dtype=np.int32)
        data = self.plot.data
        columns = self._columns.of(rows)  # only the rows new since the last redraw are read
        lines = self._lines.of(rows)
        limits = columns["input_limit"].astype(np.float64)
        self._limits = np.maximum(limits, 1.0)
        with self.plot.batch_update():
            for index, placement in enumerate(PLACEMENTS):
                data[index]["x"] = x
                data[index]["y"] = self._scaled(columns[placement].copy())
            self._draw_lines(lines, next_lines, applied)
            self._draw_marks(log, columns)
            self._draw_usage(log)
            self._draw_total(columns["total"], limits, np.isnan(lines["trigger_tokens"]))
            self._name_lines(
                known=next_lines is not None or not np.isnan(lines["trigger_tokens"]).all()
            )
            # Whole requests only on the x axis, about ten ticks whatever the length.
            dtick = max(1, -(-count // 10))
            if self.plot.layout["xaxis"].get("dtick") != dtick:
                self.plot.relayout(xaxis={**self.plot.layout["xaxis"], "dtick": dtick})
            if select is not None:
                self._draw_selection(select)

    def _draw_marks(self, log: StepLog, columns: Mapping[str, np.ndarray]) -> None:
        # The markers on the stack: compactions, offloads, omissions, recorded compactions —
        # each at its request's total, scaled with the lines (drawn first: their limits).
        base = len(PLACEMENTS) + len(LINES)
        marks = [compaction_marks(log)]
        for key in ("offloads", "omissions"):
            hits = np.flatnonzero(columns[key])  # a row's step is its index
            marks.append(
                (
                    hits.astype(float).tolist(),
                    columns["total"][hits].astype(float).tolist(),
                    [f"{n} {key}" for n in columns[key][hits].tolist()],
                )
            )
        marks.append(recorded_marks(log))
        data = self.plot.data
        for offset, (xs, ys, text) in enumerate(marks):
            at = np.asarray(xs, dtype=float)
            data[base + offset]["x"] = at
            data[base + offset]["y"] = self._scaled(
                np.asarray(ys, dtype=float),
                np.clip(at.astype(np.int64), 0, len(self._limits) - 1),
            )
            data[base + offset]["text"] = text
        # A recording's compaction that fired far from its tool's documented threshold: crossed.
        symbols = recorded_symbols(log)
        plain = MARKERS[3][1]
        data[base + len(marks) - 1]["marker"]["symbol"] = (
            symbols if any(s != plain for s in symbols) else plain
        )

    def _draw_lines(
        self, lines: Mapping[str, np.ndarray], next_lines: Thresholds | None, applied: bool
    ) -> None:
        # Each line as it was at each request, and one x further what the next request will
        # use (or would, once applied): that point moves as a slider does.
        count = len(lines["trigger_tokens"])
        ahead = () if next_lines is None else (float(next_lines.input_limit),)
        self._limits = np.append(self._limits[:count], np.maximum(ahead, 1.0))
        line_x = np.arange(count + len(ahead), dtype=np.int32)
        for offset, (key, _, _) in enumerate(LINES):
            upcoming = [getattr(next_lines, key)] if next_lines is not None else []
            trace = self.plot.data[len(PLACEMENTS) + offset]
            trace["x"] = line_x
            trace["y"] = self._scaled(
                np.concatenate([lines[key], np.asarray(upcoming, dtype=np.float64)])
            )
        # The last x of the lines is no request yet: the lines the next one will use.
        self.plot.relayout(
            annotations=[
                {
                    "x": count,
                    "y": 1,
                    "yref": "paper",
                    "yanchor": "bottom",
                    "text": "next request" if applied else NOT_APPLIED,
                    "showarrow": False,
                    "font": {"size": 10, "color": "#777" if applied else "#b35900"},
                }
            ]
            if next_lines is not None
            else []
        )

    def _draw_total(self, totals: np.ndarray, limits: np.ndarray, unknown: np.ndarray) -> None:
        # ``limits``: each request's input limit (0 where unknown), as `update` read them;
        # ``unknown``: the requests without thresholds, whose hover says so.
        count = len(totals)
        totals = totals.copy()  # the plot keeps what it is given: not a view of the columns
        x = np.arange(count, dtype=np.int32)
        total, share = self.trace("total"), self.trace("share")
        total["x"], total["y"], total["customdata"] = x, self._scaled(totals), totals
        texts = [f"<br>{UNKNOWN_LINES}" if u else "" for u in unknown.tolist()]
        # One text for all when every request says the same (a recording as recorded: 280 KB
        # of one sentence at 5,000 requests); plotly.js gives a scalar to every point.
        total["text"] = texts[0] if texts and texts.count(texts[0]) == count else texts
        share["x"] = x
        share["y"] = np.divide(100.0 * totals, limits, out=np.zeros(count), where=limits > 0)

    def _name_lines(self, *, known: bool) -> None:
        # A recording as recorded has no line to draw: its legend says "unknown", not a line
        # that is not there (nor one at 0).
        for offset, (_, label, _) in enumerate(LINES[:2]):
            trace = self.plot.data[len(PLACEMENTS) + offset]
            trace["name"] = label if known else f"{label}: unknown"

    def update_usage(self, log: StepLog) -> None:
        """Redraw only the provider-usage line (a response arrived; nothing else changed)."""
        with self.plot.batch_update():
            self._draw_usage(log)

    def _draw_usage(self, log: StepLog) -> None:
        # The bill arrives after its row was drawn: the rows a response filled since the last
        # redraw are read again; a calibration changes every row; another log, everything.
        fresh = log is not self._usage_log or log.calibration_revision != self._calibrated_at
        changed = log.usage_changes[self._usage_seen :] if not fresh else ()
        columns = self._usage_columns.of(log.rows, changed=changed, reset=fresh)
        self._usage_log, self._usage_seen = log, len(log.usage_changes)
        self._calibrated_at = log.calibration_revision
        flagged = log.flags()
        # An estimate flagged off its bill is left out of its line (and so of the y axis's
        # range: 15 million tokens against a bill of 10,588 flattened the whole session).
        off = [step for step, flag in flagged if flag != ZERO_BILL]
        for name, key in (
            ("provider usage", "usage_total_input"),
            ("calibrated estimate", "calibrated"),
        ):
            values = columns[key]
            shown = ~np.isnan(values)
            if key == "calibrated" and off:
                shown[off] = False
            at = np.flatnonzero(shown)  # a row's step is its index
            trace = self.trace(name)
            trace["x"] = at.astype(float)
            trace["y"] = self._scaled(values[at], at)
        marks = self.trace("flagged")
        steps = np.asarray([step for step, _ in flagged], dtype=np.int64)
        bills = columns["usage_total_input"][steps] if flagged else np.zeros(0)
        marks["x"] = steps.astype(float)
        marks["y"] = self._scaled(np.nan_to_num(bills), steps)
        marks["text"] = [f"request {step}: {flag}" for step, flag in flagged]

    def select(self, step: int) -> None:
        """Draw the selection line at ``step``."""
        with self.plot.batch_update():
            self._draw_selection(step)

    def _draw_selection(self, step: int) -> None:
        self.selected = step
        self.plot.relayout(
            shapes=[
                {
                    "type": "line",
                    "x0": step,
                    "x1": step,
                    "yref": "paper",
                    "y0": 0,
                    "y1": 1,
                    "line": {"color": "#444", "width": 1, "dash": "dot"},
                }
            ]
        )
