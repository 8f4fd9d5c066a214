"""A what-if row from a run's own records, figure by figure, on a run built by hand: tokens
sent (input only, every purpose), cost split into input and output, the summary calls (only
those), the ratios, peak, errors, replay time in milliseconds, and a run that failed part way
(its whole-session figures not given, where it stopped)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from ctxlab.analysis._comparison import REWRITE_COLUMNS, WHOLE_SESSION, comparison_row
from ctxlab.analysis._cost import RequestCost
from ctxlab.analysis._prices import Price

PRICE = Price(input=3.0, output=15.0, cache_write=3.75, cache_read=0.3)


def _run(error: str | None = None) -> SimpleNamespace:
    costs = [
        RequestCost(1_000, 200, 3_000, 100, 0.01, "reasoning", expired=150),
        RequestCost(500, 0, 0, 200, 0.005, "summary"),
        RequestCost(300, 900, 0, 10, 0.001, "recovery", expired=100),
        RequestCost(400, 0, 0, 150, 0.004, "summary"),
    ]
    manifests = [
        SimpleNamespace(estimated_input_tokens=4_200, validation="passed"),
        SimpleNamespace(estimated_input_tokens=5_100, validation="budget_exceeded"),
        SimpleNamespace(estimated_input_tokens=3_900, validation="passed"),
    ]
    prepared = [SimpleNamespace(compaction=None), SimpleNamespace(compaction=object())]
    return SimpleNamespace(
        name="tight",
        costs=costs,
        cost=0.02,
        steps=[],
        manifests=manifests,
        prepared=prepared,
        error=error,
        seconds=1.2345,
        # Each step's own request: the second's (a compaction's) after its summary call.
        step_costs=lambda: [costs[0], costs[2]],
    )


def test_each_figure_of_a_finished_run() -> None:
    row = comparison_row(_run(), feasible=0.04, unlimited=0.0, price=PRICE, over_limit_billed=2)
    assert row["config"] == "tight"
    assert row["tokens_sent"] == 1_000 + 200 + 3_000 + 500 + 300 + 900 + 400  # input only
    output = (100 + 200 + 10 + 150) * 15.0 / 1e6
    assert row["output_cost"] == pytest.approx(output)
    assert row["input_cost"] == pytest.approx(0.02 - output)
    assert row["summary_calls"] == 2  # not the recovery request
    assert row["cost_vs_baseline"] == pytest.approx(0.5)
    assert math.isnan(row["cost_vs_no_compaction"])  # a reference that costs nothing
    assert (row["requests"], row["peak"], row["errors"], row["failed_at"]) == (3, 5_100, 1, None)
    assert row["compactions"] == 1 and row["over_limit_billed"] == 2
    assert row["replay_ms"] == pytest.approx(1_234.5)
    assert row["retention"] is None and row["retention_min"] is None


def test_a_run_that_failed_part_way_gives_no_whole_session_figures() -> None:
    row = comparison_row(_run("ContextBudgetExceeded"), feasible=0.04, unlimited=0.05, price=PRICE)
    assert all(math.isnan(row[name]) for name in (*WHOLE_SESSION, *REWRITE_COLUMNS))
    assert row["failed_at"] == 3  # the request after the last it prepared
    assert row["errors"] == 2  # the failed manifest and the stop
    assert row["peak"] == 5_100 and row["requests"] == 3


def test_the_cache_rewrites_by_time_and_by_compaction_in_tokens_and_dollars() -> None:
    row = comparison_row(_run(), feasible=0.04, unlimited=0.05, price=PRICE)
    # By time: every request's expired tokens, each at the write price less the read price.
    assert row["rewrite_time_tokens"] == 150 + 100
    assert row["rewrite_time_usd"] == pytest.approx(250 * (3.75 - 0.3) / 1e6, rel=1e-12)
    # By compaction: what the compacting step's request wrote (900), less time's share (100).
    assert row["rewrite_compaction_tokens"] == 800
    assert row["rewrite_compaction_usd"] == pytest.approx(800 * (3.75 - 0.3) / 1e6, rel=1e-12)
