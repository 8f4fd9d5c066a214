"""The what-if table's figures, each checked against the runs it summarizes: summary calls
only where summaries are bought, the worst compaction's retention, a replay that stopped."""

from __future__ import annotations

import pytest

from ctxlab import ApproximateCounter, ContextConfig, Transcript, WhatIf
from ctxlab.analysis._sync import run_sync
from ctxlab.messages import AssistantMessage, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage


def _session(turns: int, *, huge_at: int | None = None) -> Transcript:
    """Failing tests, module by module; every fifth turn the user adds a file and a port; at
    ``huge_at`` the user pastes more than any window holds."""
    messages: list[UserMessage | AssistantMessage] = [
        UserMessage(content="Fix the failing tests in the billing service.")
    ]
    for n in range(turns):
        use = ToolUseBlock(
            id=f"c{n}", name="bash", input={"command": f"pytest tests/test_mod{n}.py"}
        )
        thought = TextBlock(text=f"Next I check module {n}: value {7000 + n * 13}.")
        messages.append(AssistantMessage(content=(thought, use)))
        out = f"FAILED tests/test_mod{n}.py::test_case_{n} - AssertionError: {n * 31} != {n * 37}\n"
        out += f"src/pkg/mod{n}.py:{n + 10}: in compute\n" * 40
        messages.append(
            UserMessage(content=(ToolResultBlock(tool_use_id=f"c{n}", content=out, is_error=True),))
        )
        if n % 5 == 4:
            messages.append(AssistantMessage(content="Noted."))
            text = f"Also keep src/extra/part{n}.py in mind, and use port {9000 + n}."
            if n == huge_at:
                text += " " + "pasted log line\n" * 20_000
            messages.append(UserMessage(content=text))
    messages.append(AssistantMessage(content="Done."))
    meta = {"models": ["claude-sonnet-4-6"]}  # priced as its model: an unknown one is unpriced
    return Transcript(name="billing", meta=meta, system="You fix tests.", messages=tuple(messages))


CONFIGS = {"ctxlab": ContextConfig.preset("ctxlab")}


async def test_summary_calls_are_charged_only_when_summaries_are_bought() -> None:
    paid = WhatIf(_session(40), CONFIGS, context_window=8_000, counter=ApproximateCounter())
    free = WhatIf(
        _session(40),
        CONFIGS,
        context_window=8_000,
        counter=ApproximateCounter(),
        summary_calls=False,
    )
    await paid.run()
    await free.run()
    bought, offline = paid.table().loc["ctxlab"], free.table().loc["ctxlab"]
    assert bought["compactions"] == offline["compactions"] == 2
    assert bought["summary_calls"] >= 2 and offline["summary_calls"] == 0
    costs = free.runs["ctxlab"].costs
    assert [c.purpose for c in costs] == ["reasoning"] * int(offline["requests"])
    assert offline["cost"] == pytest.approx(sum(c.cost for c in costs))
    assert offline["cost"] < bought["cost"]


async def test_retention_min_is_the_worst_compaction_and_the_mean_between() -> None:
    what = WhatIf(_session(40), CONFIGS, context_window=8_000, counter=ApproximateCounter())
    await what.run()
    kept = [
        s.compaction.retention.core
        for s in what.runs["ctxlab"].steps
        if s.compaction is not None and s.compaction.retention is not None
    ]
    assert len(kept) == 2 and min(kept) < max(kept) < 1  # the summaries drop different things
    row = what.table().loc["ctxlab"]
    assert row["retention_min"] == min(kept)
    assert row["retention"] == pytest.approx(sum(kept) / 2)
    assert row["retention_min"] < row["retention"]


async def test_a_replay_that_stops_counts_as_an_error_and_keeps_its_requests() -> None:
    what = WhatIf(
        _session(12, huge_at=9), CONFIGS, context_window=8_000, counter=ApproximateCounter()
    )
    await what.run()
    run = what.runs["ctxlab"]
    assert run.error is not None and "input limit" in run.error
    row = what.table().loc["ctxlab"]
    # Every request up to the paste was prepared and passed; the paste stopped the replay.
    assert row["requests"] == len(run.steps) > 10
    assert all(s.manifest.validation == "passed" for s in run.steps)
    assert row["errors"] == 1


async def test_every_figure_of_a_row_is_its_runs_own() -> None:
    from ctxlab.analysis._cost import PRICES
    from ctxlab.messages import ToolSchema

    tool = ToolSchema("bash", "Run a command.", {"type": "object", "properties": {}})
    base = _session(40)
    transcript = Transcript(
        base.name, {"models": ["gpt-4o-2024-08-06"]}, base.system, base.messages, tools=(tool,)
    )
    what = WhatIf(transcript, CONFIGS, context_window=8_000, counter=ApproximateCounter())
    await what.run()
    assert what.price == PRICES["gpt-4o"]  # from the recording's model, dated name and all
    run, row = what.runs["ctxlab"], what.table().loc["ctxlab"]
    manifests = [s.manifest for s in run.steps]
    # The recording's System and tools are in every replayed request.
    assert all(m.totals["tools"] > 0 and m.totals["system"] > 0 for m in manifests)
    assert row["tokens_sent"] == sum(c.uncached + c.cache_write + c.cache_read for c in run.costs)
    assert row["peak"] == max(m.estimated_input_tokens for m in manifests)
    assert row["cost"] == pytest.approx(sum(c.cost for c in run.costs))
    assert row["cost_vs_baseline"] == pytest.approx(
        row["cost"] / sum(c.cost for c in what.baseline)
    )
    assert row["cost_vs_no_compaction"] == pytest.approx(
        row["cost"] / sum(c.cost for c in what.no_compaction)
    )
    controls = [
        s.compaction.retention.control_share()
        for s in run.steps
        if s.compaction is not None and s.compaction.retention is not None
    ]
    assert row["retention_control"] == pytest.approx(sum(controls) / len(controls))
    assert row["retention_control"] < row["retention"]  # the tail alone holds less
    assert 0 < row["replay_ms"] < 60_000 and row["errors"] == 0


async def test_a_run_says_what_it_did_in_a_line() -> None:
    # A notebook cell ending in ``await what.set_config(...)`` shows the run: one line, not
    # every request it prepared (Python 3.11's asyncio.run formatted it too, for seconds).
    what = WhatIf(_session(40), {"a": ContextConfig()}, context_window=4_000)
    run = await what.set_config("a", ContextConfig(trigger_ratio=0.5))
    compactions = sum(s.compaction is not None for s in run.steps)
    assert compactions > 0
    assert repr(run) == (
        f"ConfigRun('a', {len(run.steps)} requests, {compactions} compactions, ${run.cost:.2f})"
    )
    assert run_sync(what.set_config("b", ContextConfig())).name == "b"


def test_run_sync_gives_the_coroutines_result_outside_a_loop() -> None:
    what = WhatIf(_session(6), {"a": ContextConfig()}, context_window=4_000)
    assert run_sync(what.set_config("b", ContextConfig())).name == "b"
