"""`Outcomes`' per-branch table: a branch's row over its runs' rows (`SUMMARY_COLUMNS`), and the
table as static HTML with what it says. Kept apart from `Outcomes` so that it stays about
reading each run's record; this module only summarizes and shows the rows it is given."""

from __future__ import annotations

import html
import math
import statistics
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ctxlab.fork._branch_stats import branch_statistics
from ctxlab.fork._stats import runs_needed

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["branch_row", "cell", "outcomes_html", "pd_na"]


def branch_row(
    rows: Sequence[dict[str, Any]], name: str, reference: str, confidence: float, width: float
) -> dict[str, Any]:
    """The summary row of branch ``name`` over its runs' outcome ``rows`` (`SUMMARY_COLUMNS`),
    its statistics against ``reference``'s runs (none for the reference itself)."""
    mine = [r for r in rows if r["branch"] == name]
    theirs = [r for r in rows if r["branch"] == reference]
    costs = [r["cost"] for r in mine]
    steps = [r["steps"] for r in mine]
    diverged = [r["diverges_at"] for r in mine if r["diverges_at"] is not None]
    return {
        **{k: mine[0][k] for k in ("branch", "config", "arrival", "at")},
        "runs": len(mine),
        "passed": sum(r["passed"] is True for r in mine),
        "replied": sum(r["reply"] is not None for r in mine),
        "steps": statistics.fmean(steps),
        "steps_min": min(steps),
        "steps_max": max(steps),
        "tokens": statistics.fmean(r["tokens"] for r in mine),
        "cost": statistics.fmean(costs),
        "cost_sd": _spread(costs),
        "cost_estimate": statistics.fmean(r["cost_estimate"] for r in mine),
        "spent": math.fsum(r["spent"] for r in mine),
        "from_cache": sum(r["from_cache"] for r in mine),
        "compactions": statistics.fmean(r["compactions"] for r in mine),
        "diverges_at": min(diverged) if diverged else None,
        "errors": sum(r["error"] is not None for r in mine),
        **branch_statistics(mine, None if name == reference else theirs, confidence, width),
    }


def outcomes_html(
    frame: pd.DataFrame,
    reference: str,
    confidence: float,
    width: float,
    findings: Sequence[str],
    pricing: Sequence[str],
    spending: str,
) -> str:
    """The summary ``frame`` as static HTML (every value escaped), then what its columns mean,
    the ``findings``, what the costs are priced as and what was spent (`Outcomes.table_html`)."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in frame.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(cell(v))}</td>" for v in row) + "</tr>"
        for row in frame.itertuples(index=False)
    )
    level = f"{confidence:g}"
    most = runs_needed(0.5, width, confidence)
    note = (
        f"<div class='ctxlab-outcomes-note'>passed and replied: runs out of "
        f"{html.escape(str(frame['runs'].max()))}; verdicts: runs the check judged (a run "
        f"with no verdict is no failure); pass_low to pass_high: the {level} Wilson interval "
        f"of the pass rate; difference: the pass rate less "
        f"{html.escape(reference)}'s, with Newcombe's interval (paired by run number "
        f"over pairs runs, else unpaired); runs_needed: runs with a verdict for an interval "
        f"of ±{width:g} at the branch's rate (at most {most}, at 0.5); "
        f"steps_after_compaction: the mean reasoning steps a run made after each of its compactions; diverges_at: the first step where a run's "
        f"context differs from {html.escape(reference)}'s first run.</div>"
    )
    note += "".join(f"<div class='ctxlab-finding'>{html.escape(f)}</div>" for f in findings)
    note += "".join(f"<div class='ctxlab-pricing'>cost: {html.escape(p)}</div>" for p in pricing)
    note += f"<div class='ctxlab-spending'>{html.escape(spending)}</div>"
    return (
        f"<table class='ctxlab-outcomes'><thead><tr>{head}</tr></thead>"
        f"<tbody>{body}</tbody></table>{note}"
    )


def _spread(costs: list[float]) -> float:
    """The standard deviation of the runs' costs: NaN when any is unpriced (statistics.stdev
    raises on NaN), 0 for one run."""
    if any(math.isnan(c) for c in costs):
        return math.nan
    return statistics.stdev(costs) if len(costs) > 1 else 0.0


def pd_na() -> object:
    """pandas' missing value (``<NA>``, in a nullable column), which compares to nothing."""
    import pandas as pd

    return pd.NA


def cell(value: Any) -> str:
    """A summary value as the table shows it: a dash for none, a float rounded to be read."""
    if value is None or value is pd_na() or value != value:  # None, <NA> or NaN
        return "–"
    if isinstance(value, float):
        if value.is_integer():
            return f"{int(value):,}"  # a mean of whole numbers that is one
        return f"{value:.4f}" if abs(value) < 10 else f"{value:,.1f}"
    return str(value)
