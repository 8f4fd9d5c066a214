"""The what-if lab's comparison table: one row per config, its figures, the verdict under it,
what the costs are priced as (or that they are unpriced), where a replay stopped, the
calibrated figures — and, while a slider's move is being analysed, the headline figures at once
with ``computing…`` in the cells and a note saying which configs' retention and cost are
coming."""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as w
import pandas as pd

from ctxlab.analysis._config_run import ConfigRun
from ctxlab.analysis._whatif import COMPARISON_COLUMNS, HEADLINE_COLUMNS, WhatIf
from ctxlab.widgets._panels import _table

__all__ = ["COMPUTING", "ComparisonTable", "scrolling"]

_HEADERS = {
    "cost": "cost (USD)",
    "input_cost": "input cost (USD)",
    "output_cost": "output cost (USD)",
}
"""Table headers with their unit."""


def scrolling(table: str) -> str:
    """``table`` in a box of the output's width that scrolls sideways: a wide table would run
    out of the output area, its right-hand columns cut off."""
    # ``contain: inline-size``: the box's width is the output's, never the table's (without it
    # the widget's flex item grew to the table and the scroll never happened).
    style = "overflow-x:auto;max-width:100%;contain:inline-size"
    return f"<div class='ctxlab-scroll' style='{style}'>{table}</div>"


COMPUTING = "computing…"
"""What a figure still being computed shows, in its cell and in the note under the table."""

UNPRICED = "unpriced"
"""What a cost cell shows when the model has no known price (the note under the table says
which model)."""

_COSTS = frozenset(
    ("cost", "input_cost", "output_cost", "cost_vs_baseline", "cost_vs_no_compaction")
)


def _cell(value: Any) -> str:
    if value is None or (not isinstance(value, str) and pd.isna(value)):  # None, NaN, NA
        return "–"
    if isinstance(value, float):
        return f"{value:.4f}" if value < 10 else f"{value:,.0f}"
    return str(value)


class ComparisonTable:
    """The table (``table``) and the note under it (``computing``) of a `WhatIf`."""

    def __init__(self, what: WhatIf) -> None:
        self.what = what
        self.table = w.HTML()
        self.computing = w.HTML()
        # Each config's last computed row, with the run it is of: while another config is
        # analysed, this one's row still holds.
        self._rows: dict[str, tuple[ConfigRun, dict[str, Any]]] = {}

    def show(self, *, complete: bool) -> None:
        """The whole table (``complete``: grading and pricing what is not yet), or the
        headline figures with what is still being computed said."""
        self.table.value = self._table_html() if complete else self._headline_html()
        waiting = [n for n, r in self.what.runs.items() if not (r.graded and r.priced)]
        self.computing.value = (
            f"<div class='ctxlab-computing' style='color:#555'><i>retention and cost of "
            f"{html.escape(', '.join(waiting))}: {COMPUTING}</i> (the lines and the other "
            "figures are final)</div>"
            if waiting and not complete
            else ""
        )

    def _table_html(self) -> str:
        """The comparison table, where a replay stopped (and why), the calibrated figures."""
        frame = self.what.table()
        # Kept per run: while another config is re-analysed, this one's row still holds.
        self._rows = {
            name: (run, {c: frame.loc[name, c] for c in COMPARISON_COLUMNS})
            for name, run in self.what.runs.items()
        }
        rows = [
            [name, *(self._value(frame.loc[name, c], c) for c in COMPARISON_COLUMNS)]
            for name in frame.index
        ]
        page = self._comparison(rows)
        verdict = frame.attrs.get("verdict")
        if verdict:
            page += f"<div class='ctxlab-verdict' style='color:#555'>{html.escape(verdict)}</div>"
        return page + self._notes(frame)

    def _headline_html(self) -> str:
        """The table while some configs' retention and cost are computed: their headline
        figures (`WhatIf.headline`), ``computing…`` in the rest; the other configs' rows as
        last computed (their runs are unchanged)."""
        frame = self.what.headline()
        rows = []
        for name, run in self.what.runs.items():
            kept = self._rows.get(name)
            known = kept[1] if kept is not None and kept[0] is run else {}
            rows.append(
                [
                    name,
                    *(
                        _cell(frame.loc[name, c])
                        if c in HEADLINE_COLUMNS
                        else self._value(known[c], c)
                        if c in known
                        else COMPUTING
                        for c in COMPARISON_COLUMNS
                    ),
                ]
            )
        return self._comparison(rows) + self._notes(None)

    def _value(self, value: Any, column: str) -> str:
        """A cell; a cost of a model no table prices is said ``unpriced``, never "–" or 0."""
        if column in _COSTS and not self.what.price.known:
            return UNPRICED
        return _cell(value)

    def _comparison(self, rows: list[list[str]]) -> str:
        headers = [_HEADERS.get(c, c) for c in COMPARISON_COLUMNS]
        return scrolling(_table(rows, ["config", *headers], "ctxlab-whatif"))

    def _notes(self, frame: pd.DataFrame | None) -> str:
        """What the costs are priced as and the clock their cache ran on, where a replay stopped
        (and why); with the full table, the calibrated figures."""
        colour = "#555" if self.what.price.known else "#c00"
        page = (
            f"<div class='ctxlab-pricing' style='color:{colour}'>costs: "
            f"{html.escape(self.what.pricing)}</div>"
            f"<div class='ctxlab-clock' style='color:#555'>{html.escape(self.what.cache_clock)}"
            "</div>"
        )
        total = len(self.what.baseline)  # the references are priced once, at the first table
        for name, run in self.what.runs.items():
            if run.error:
                # Not priced (NaN in the table): say where and why it stopped.
                page += (
                    f"<div class='ctxlab-failed' style='color:#c00'>{html.escape(name)}: the "
                    f"replay stopped at request {len(run.prepared)} of {total} and is not priced — "
                    f"{html.escape(run.error)}</div>"
                )
        note = frame.attrs.get("calibration") if frame is not None else None
        if frame is not None and note and "tokens_sent_calibrated" in frame:
            sent = ", ".join(
                f"{html.escape(str(n))} {'–' if pd.isna(v) else f'{int(v):,}'}"
                for n, v in frame["tokens_sent_calibrated"].items()
            )
            page += (
                f"<div class='ctxlab-calibrated' style='color:#555'>in the provider's tokens: "
                f"{sent} — {html.escape(note)}</div>"
            )
        return page
