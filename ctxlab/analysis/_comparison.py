"""One row of the what-if table: a config's run summed up — requests, tokens, cost (all-in,
input, output) and its ratios to the two references, compactions, retention and its control,
peak, errors, where a failed replay stopped, requests over the limit by the bill's measure,
replay time.

A replay that failed part way (a request no compaction could bring under the limit) sent only
the requests before it: its sums would price a third of the session as if it were the whole and
rank it cheapest. Its tokens and costs are therefore not given (NaN) and ``failed_at`` says
where it stopped; its peak, compactions and retention are of the requests it did prepare."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ctxlab.analysis._cost import Price
from ctxlab.analysis._references import output_cost

if TYPE_CHECKING:
    from ctxlab.analysis._config_run import ConfigRun

__all__ = [
    "COMPARISON_COLUMNS",
    "HEADLINE_COLUMNS",
    "WHOLE_SESSION",
    "comparison_row",
    "headline_row",
]

COMPARISON_COLUMNS = (
    "requests",
    "tokens_sent",
    "cost",
    "cost_vs_baseline",
    "cost_vs_no_compaction",
    "compactions",
    "retention",
    "retention_min",
    "retention_control",
    "peak",
    "errors",
    "failed_at",
    "over_limit_billed",
)
"""The figures `WhatIf.table` gives per config (besides ``replay_ms``), in order."""

HEADLINE_COLUMNS = ("requests", "compactions", "peak", "errors", "failed_at", "over_limit_billed")
"""The figures of `COMPARISON_COLUMNS` that need neither the retention grader nor the pricer
(`headline_row`, with ``over_limit_billed`` from the bill): what a what-if shows at once."""

WHOLE_SESSION = (
    "tokens_sent",
    "cost",
    "input_cost",
    "output_cost",
    "cost_vs_baseline",
    "cost_vs_no_compaction",
)
"""The figures that sum the whole session: not given (NaN) for a replay that failed part way."""


def comparison_row(
    run: ConfigRun,
    feasible: float,
    unlimited: float,
    price: Price,
    over_limit_billed: int | None = None,
) -> dict[str, Any]:
    """The row of ``run``; ``feasible`` and ``unlimited`` are the references' costs (a
    reference that costs nothing makes NaN ratios); ``over_limit_billed`` the run's requests
    over the input limit by the bill's measure (`ctxlab.analysis._billed`; None without a
    bill)."""
    records = [s.compaction for s in run.steps if s.compaction is not None]
    spent_on_output = output_cost(run.costs, price)
    kept = [r.retention.core for r in records if r.retention and r.retention.core is not None]
    control = [c for r in records if r.retention and (c := r.retention.control_share()) is not None]
    headline = headline_row(run)
    row = {
        "config": run.name,
        "requests": headline["requests"],
        "tokens_sent": sum(c.input_tokens for c in run.costs),
        "cost": run.cost,
        "input_cost": run.cost - spent_on_output,
        "output_cost": spent_on_output,
        "cost_vs_baseline": run.cost / feasible if feasible > 0 else math.nan,
        "cost_vs_no_compaction": run.cost / unlimited if unlimited > 0 else math.nan,
        "compactions": headline["compactions"],
        "summary_calls": sum(1 for c in run.costs if c.purpose == "summary"),
        "retention": sum(kept) / len(kept) if kept else None,
        "retention_min": min(kept) if kept else None,
        "retention_control": sum(control) / len(control) if control else None,
        "peak": headline["peak"],
        "errors": headline["errors"],
        "failed_at": headline["failed_at"],
        "over_limit_billed": over_limit_billed,
        "replay_ms": run.seconds * 1000,
    }
    if run.error:
        row.update(dict.fromkeys(WHOLE_SESSION, math.nan))
    return row


def headline_row(run: ConfigRun) -> dict[str, Any]:
    """The figures of ``run`` read from its prepared requests alone (no grading, no pricing):
    requests, compactions, peak, errors and ``failed_at``."""
    manifests = run.manifests
    return {
        "requests": len(manifests),
        "compactions": sum(1 for s in run.prepared if s.compaction is not None),
        "peak": max((m.estimated_input_tokens for m in manifests), default=0),
        "errors": sum(1 for m in manifests if m.validation != "passed") + (1 if run.error else 0),
        # The request it could not prepare: the one after the last it did.
        "failed_at": len(manifests) if run.error else None,
    }
