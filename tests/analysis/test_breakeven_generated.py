"""Break-evens on generated sessions — turns of any size, pauses short and long, summaries
bought or made offline, compacting at the trigger or while idle — each figure recomputed from
the run's priced requests by a reading of docs/concepts/cost.md written here, sharing no code
with `ctxlab.analysis._breakeven`."""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import ApproximateCounter, ContextConfig, Transcript, WhatIf
from ctxlab.analysis._cost import RequestCost
from ctxlab.messages import AssistantMessage, ToolResultBlock, ToolUseBlock, UserMessage

M = 1_000_000
IN, OUT, WRITE, READ = 3.0, 15.0, 3.75, 0.30  # claude-sonnet-4-6, per million tokens


@dataclass(frozen=True)
class Case:
    lines: list[int]
    pauses: list[float]
    window: int
    bought: bool
    idle: bool


@st.composite
def cases(draw: st.DrawFn) -> Case:
    # At least 20 turns of 30 lines (about 6,600 tokens): every session compacts.
    turns = draw(st.integers(20, 36))
    return Case(
        lines=draw(st.lists(st.integers(30, 70), min_size=turns, max_size=turns)),
        pauses=draw(
            st.lists(st.sampled_from([5.0, 30.0, 300.0, 301.0, 2_700.0]), min_size=turns + 1)
        ),
        window=draw(st.sampled_from([6_000, 8_000])),
        bought=draw(st.booleans()),
        idle=draw(st.booleans()),
    )


def transcript(case: Case) -> Transcript:
    messages: list[UserMessage | AssistantMessage] = [UserMessage(content="Fix the tests.")]
    for n, count in enumerate(case.lines):
        use = ToolUseBlock(id=f"c{n}", name="bash", input={"command": f"pytest t{n}.py"})
        messages.append(AssistantMessage(content=(use,)))
        out = f"FAILED t{n}.py::test_{n} - assert {n * 7} == {n * 9}\n" * count
        messages.append(UserMessage(content=(ToolResultBlock(tool_use_id=f"c{n}", content=out),)))
    messages.append(AssistantMessage(content="Done."))
    replies = [i for i, m in enumerate(messages) if isinstance(m, AssistantMessage)]
    times, now = {}, 1_700_000_000.0
    for index, pause in zip(replies, case.pauses, strict=False):
        now += pause
        times[index] = now
    meta = {"models": ["claude-sonnet-4-6"]}
    return Transcript("generated", meta, "You fix tests.", tuple(messages), times=times)


def dollars(uncached: int, write: int, read: int, output: int) -> float:
    return (uncached * IN + write * WRITE + read * READ + output * OUT) / M


def recomputed(
    costs: list[RequestCost], at: list[float | None], k: int, removed: int, end: int, life: float
) -> tuple[float, float, int | None]:
    """(cost, saved, paid back at) of a compaction whose first request after is reasoning
    request ``k``, by the definition; ``at``: each reasoning request's time."""
    reasoning = [n for n, c in enumerate(costs) if c.purpose != "summary"]

    def warm(j: int) -> bool:
        return j == 0 or at[j] is None or at[j - 1] is None or at[j] - at[j - 1] <= life  # type: ignore[operator]

    first, before = costs[reasoning[k]], costs[reasoning[k - 1]]
    calls = sum(c.cost for c in costs[reasoning[k - 1] + 1 : reasoning[k]])
    total = first.input_tokens + removed
    read = min(before.cache_read + before.cache_write, total) if warm(k) else 0
    uncached = min(first.uncached, total - read)
    cost = calls + first.cost - dollars(uncached, total - read - uncached, read, first.output)
    saved, paid = 0.0, (k if cost <= 0 else None)
    for j in range(k + 1, end):
        c = costs[reasoning[j]]
        extra = (0, removed) if warm(j) else (removed, 0)
        saved += dollars(c.uncached, c.cache_write + extra[0], c.cache_read + extra[1], c.output)
        saved -= c.cost
        if paid is None and saved >= cost:
            paid = j
    return cost, saved, paid


@settings(max_examples=25, deadline=None)
@given(cases())
def test_every_compactions_figures_are_the_definitions(case: Case) -> None:
    config = ContextConfig.preset("ctxlab")
    if case.idle:
        config = config.with_idle_compaction()
    session = transcript(case)
    what = WhatIf(
        session,
        {"c": config},
        context_window=case.window,
        counter=ApproximateCounter(),
        summary_calls=case.bought,
    )
    asyncio.run(what.run())
    run = what.runs["c"]
    frame = what.compactions("c")
    compacted = [s.number for s in run.prepared if s.compaction is not None]
    assert compacted and list(frame["request"]) == compacted
    at = [session.times.get(s.index) for s in run.prepared]
    life = what.rules.lifetime
    assert life == 300.0
    for n, row in enumerate(frame.itertuples()):
        record = run.prepared[row.request].compaction
        assert record is not None
        end = compacted[n + 1] if n + 1 < len(compacted) else len(run.prepared)
        cost, saved, paid = recomputed(
            run.costs, at, row.request, record.tokens_before - record.tokens_after, end, life
        )
        assert math.isclose(row.cost, cost, rel_tol=1e-9, abs_tol=1e-12)
        assert math.isclose(row.saved, saved, rel_tol=1e-9, abs_tol=1e-12)
        assert (None if row.paid_back_at is _na() else row.paid_back_at) == paid
        gap = None if at[row.request] is None else at[row.request] - at[row.request - 1]  # type: ignore[operator]
        assert row.cold == (gap is not None and gap > life)


def _na() -> object:
    import pandas as pd

    return pd.NA
