"""A what-if's break-evens (`WhatIf.compactions`, the table's ``compactions_paid_back``) on a
generated session, each figure recomputed here from the run's own priced requests by the
definition in docs/concepts/cost.md ("Does a compaction pay back?") — code that shares nothing
with `ctxlab.analysis._breakeven`."""

from __future__ import annotations

import math

import pytest

from ctxlab import Transcript, WhatIf
from ctxlab.analysis._cost import RequestCost
from ctxlab.exceptions import UsageError
from tests.helpers import bash_loop, ctxlab_what_if

M = 1_000_000
# claude-sonnet-4-6 at its list price, per million tokens.
IN, OUT, WRITE, READ = 3.0, 15.0, 3.75, 0.30


def session(turns: int = 40) -> Transcript:
    """A test run module by module, each output 40 lines; priced as Claude Sonnet 4.6."""
    calls = (
        (
            f"pytest tests/t{n}.py",
            f"FAILED tests/t{n}.py::test_{n} - assert {n * 31} == {n * 37}\n" * 40,
        )
        for n in range(turns)
    )
    return bash_loop("tests", "Fix the tests.", calls, "Done.", system="You fix tests.")


def _dollars(uncached: int, write: int, read: int, output: int) -> float:
    return (uncached * IN + write * WRITE + read * READ + output * OUT) / M


def by_hand(costs: list[RequestCost], position: int, removed: int, end: int) -> dict[str, object]:
    """The break-even of a compaction whose first request after is ``costs[position]``, its
    savings counted up to ``costs[end]`` (exclusive): no clock, so the cache is alive."""
    before = max(i for i in range(position) if costs[i].purpose != "summary")
    summaries = sum(c.cost for c in costs[before + 1 : position])
    first = costs[position]
    kept = costs[before].cache_read + costs[before].cache_write
    total = first.input_tokens + removed
    read = min(kept, total)
    uncached = min(first.uncached, total - read)
    unbroken = _dollars(uncached, total - read - uncached, read, first.output)
    cost = summaries + first.cost - unbroken
    savings = [
        _dollars(c.uncached, c.cache_write, c.cache_read + removed, c.output) - c.cost
        for c in costs[position + 1 : end]
        if c.purpose != "summary"
    ]
    paid_back = None
    running = 0.0
    for n, saving in enumerate(savings):
        running += saving
        if paid_back is None and running >= cost:
            paid_back = n + 1
    return {"cost": cost, "saved": running, "later": len(savings), "paid_back": paid_back}


async def _what(*, summary_calls: bool) -> WhatIf:
    return await ctxlab_what_if(session(), 8_000, summary_calls=summary_calls)


@pytest.mark.parametrize("summary_calls", [True, False])
async def test_every_break_even_figure_is_the_one_computed_by_hand(summary_calls: bool) -> None:
    what = await _what(summary_calls=summary_calls)
    run = what.runs["ctxlab"]
    costs = run.costs
    reasoning = [n for n, c in enumerate(costs) if c.purpose != "summary"]
    steps = [n for n, s in enumerate(run.prepared) if s.compaction is not None]
    assert len(steps) >= 2  # the session compacts more than once at this window
    frame = what.compactions("ctxlab")
    assert list(frame["request"]) == steps
    for row, (n, step) in zip(frame.itertuples(), enumerate(steps), strict=True):
        record = run.prepared[step].compaction
        assert record is not None
        removed = record.tokens_before - record.tokens_after
        end = reasoning[steps[n + 1]] if n + 1 < len(steps) else len(costs)
        hand = by_hand(costs, reasoning[step], removed, end)
        assert row.removed == removed
        assert row.cost == pytest.approx(hand["cost"], rel=1e-12)
        assert row.saved == pytest.approx(hand["saved"], rel=1e-12)
        assert row.later == hand["later"]
        assert row.saving == pytest.approx(removed * READ / M)
        paid = hand["paid_back"]
        assert (row.paid_back_at is pd_na()) if paid is None else row.paid_back_at == step + paid
        assert not row.cold and (row.gap_seconds is None or math.isnan(row.gap_seconds))
    paid_back = sum(not _missing(v) for v in frame["paid_back_at"])
    assert what.table().loc["ctxlab", "compactions_paid_back"] == f"{paid_back} of {len(steps)}"


async def test_bought_summaries_make_a_break_that_offline_ones_do_not() -> None:
    # Control: the summary call is most of the break at this window. Bought, no compaction
    # pays back before the next; made offline, each pays back within a few requests.
    bought = await _what(summary_calls=True)
    offline = await _what(summary_calls=False)
    assert bought.table().loc["ctxlab", "compactions_paid_back"] == "0 of 3"
    assert offline.table().loc["ctxlab", "compactions_paid_back"] == "3 of 3"
    assert (bought.compactions()["summary_cost"] > 0).all()
    assert (offline.compactions()["summary_cost"] == 0).all()


async def test_no_compaction_no_count() -> None:
    what = await ctxlab_what_if(session(5), 200_000)
    assert what.table().loc["ctxlab", "compactions_paid_back"] is None
    assert what.compactions().empty


def pd_na() -> object:
    import pandas as pd

    return pd.NA


def _missing(value: object) -> bool:
    return value is pd_na() or value is None


async def test_an_unknown_config_is_named_in_the_error() -> None:
    what = await _what(summary_calls=False)
    with pytest.raises(UsageError, match="'nope'"):
        what.compactions("nope")
