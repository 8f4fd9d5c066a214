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

from ctxlab.analysis._cost import Price, RequestCost, rewrite_dollars
from ctxlab.analysis._references import output_cost

if TYPE_CHECKING:
    from ctxlab.analysis._config_run import ConfigRun

__all__ = [
    "COMPARISON_COLUMNS",
    "HEADLINE_COLUMNS",
    "REWRITE_COLUMNS",
    "WHOLE_SESSION",
    "comparison_row",
    "headline_row",
    "rewrite_figures",
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
    "next_use_retention",
    "next_use_floor",
    "peak",
    "errors",
    "failed_at",
    "over_limit_billed",
)
"""The figures `WhatIf.table` gives per config (besides ``replay_ms``), in order."""

HEADLINE_COLUMNS = ("requests", "compactions", "peak", "errors", "failed_at", "over_limit_billed")
"""The figures of `COMPARISON_COLUMNS` that need neither the retention grader nor the pricer
(`headline_row`, with ``over_limit_billed`` from the bill): what a what-if shows at once."""

REWRITE_COLUMNS = (
    "rewrite_time_tokens",
    "rewrite_time_usd",
    "rewrite_compaction_tokens",
    "rewrite_compaction_usd",
)
"""The cache re-writes of a run (docs/concepts/cost.md defines them): *by time*, the tokens
written again only because their entry's lifetime had passed (`RequestCost.expired`); *by
compaction*, what the requests a compaction changed wrote, less time's share — each with what
writing them cost above reading as many (`rewrite_dollars`). Like `WHOLE_SESSION`, not given
(NaN) for a replay that failed part way."""

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
        **rewrite_figures(run, price),
        "replay_ms": run.seconds * 1000,
    }
    if run.error:
        # The re-writes sum the whole session too.
        row.update(dict.fromkeys((*WHOLE_SESSION, *REWRITE_COLUMNS), math.nan))
    return row


def rewrite_figures(run: ConfigRun, price: Price) -> dict[str, float]:
    """`REWRITE_COLUMNS` of ``run``: by time over every request it sends (summary calls
    included), by compaction over each compacting step's request."""
    by_time = sum(c.expired for c in run.costs)
    time_usd = sum(rewrite_dollars(c, c.expired, price) for c in run.costs)
    broken = [
        cost
        for step, cost in zip(run.prepared, run.step_costs(), strict=True)
        if step.compaction is not None
    ]
    by_compaction = sum(map(_rewritten, broken))
    compaction_usd = sum(rewrite_dollars(c, _rewritten(c), price) for c in broken)
    return {
        "rewrite_time_tokens": by_time,
        "rewrite_time_usd": time_usd,
        "rewrite_compaction_tokens": by_compaction,
        "rewrite_compaction_usd": compaction_usd,
    }


def _rewritten(cost: RequestCost) -> int:
    """What a request wrote to the cache that time did not cause: its cache writes — or, for
    a cache that bills no write (its writes are in ``uncached``), what it did not read — less
    its `RequestCost.expired`."""
    written = cost.cache_write or cost.uncached
    return max(written - cost.expired, 0)


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
