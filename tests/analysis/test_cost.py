"""The cache and cost model on hand-made request sequences with known hits, and WhatIf."""

from __future__ import annotations

import math

import pytest

from ctxlab import ApproximateCounter, ContextConfig, Transcript
from ctxlab.analysis._cost import PRICES, CacheRules, Price, RequestShape, price_for, request_costs
from ctxlab.analysis._whatif import WhatIf
from ctxlab.messages import AssistantMessage, ToolResultBlock, ToolUseBlock, UserMessage
from tests.helpers import bash_loop, ctxlab_what_if

PRICE = Price(input=3.0, output=15.0, cache_write=3.75, cache_read=0.3, cache_write_1h=6.0)


def shape(*parts: tuple[str, int], points: tuple[int, ...], output: int = 0) -> RequestShape:
    return RequestShape(tuple(k for k, _ in parts), tuple(t for _, t in parts), points, output)


def test_anthropic_reads_what_earlier_breakpoints_wrote() -> None:
    sys, m1, m2 = ("sys", 2000), ("m1", 500), ("m2", 300)
    first = shape(sys, m1, points=(0, 1), output=100)
    second = shape(sys, m1, m2, ("notice", 50), points=(0, 2))  # material after the breakpoint
    third = shape(sys, ("summary", 400), ("m3", 200), points=(0, 2))  # after a compaction
    a, b, c = request_costs([first, second, third], PRICE, CacheRules.anthropic())
    assert (a.cache_read, a.cache_write, a.uncached, a.output) == (0, 2500, 0, 100)
    assert a.cost == pytest.approx((2500 * 3.75 + 100 * 15) / 1e6)
    assert (b.cache_read, b.cache_write, b.uncached) == (2500, 300, 50)
    assert b.cost == pytest.approx((2500 * 0.3 + 300 * 3.75 + 50 * 3) / 1e6)
    # Only tools + System survive a compaction; the rest is written again.
    assert (c.cache_read, c.cache_write, c.uncached) == (2000, 600, 0)


def test_short_prefixes_are_not_cached_and_the_1h_ttl_costs_more() -> None:
    small = shape(("sys", 300), ("m1", 200), points=(0, 1))
    (only,) = request_costs([small], PRICE, CacheRules.anthropic())
    assert (only.cache_write, only.uncached) == (0, 500)
    long = shape(("sys", 3000), points=(0,))
    five, hour = (
        request_costs([long], PRICE, CacheRules.anthropic(ttl=t))[0] for t in ("5m", "1h")
    )
    assert hour.cost / five.cost == pytest.approx(6.0 / 3.75)


def test_openai_caches_automatically_in_128_token_steps() -> None:
    first = shape(("sys", 1500), ("m1", 100), points=())
    second = shape(("sys", 1500), ("m1", 100), ("m2", 50), points=())
    gpt = PRICES["gpt-4.1"]
    a, b = request_costs([first, second], gpt, CacheRules.openai())
    assert (a.cache_read, a.uncached) == (0, 1600)
    assert (b.cache_read, b.cache_write, b.uncached) == (1536, 0, 114)
    (none,) = request_costs([first], gpt, CacheRules.none())
    assert none.uncached == 1600


def test_prices_match_dated_model_names() -> None:
    assert price_for("claude-sonnet-4-5-20250929") == PRICES["claude-sonnet-4-5"]
    assert price_for("claude-haiku-4-5") == PRICES["claude-haiku-4-5"]
    # A model no table knows is unpriced, never Sonnet's price (issue 50).
    unknown = price_for("some-local-model")
    assert not unknown.known and math.isnan(unknown.input)
    assert unknown.label == "unpriced (model 'some-local-model' has no known price)"


def _session(turns: int) -> Transcript:
    # Priced as its model (Sonnet 4.6): an unknown one is unpriced.
    calls = (
        (f"cat /var/log/app{n}.log", f"/var/log/app{n}.log: request {1000 + n} failed\n" * 60)
        for n in range(turns)
    )
    return bash_loop("logs", "Read every log.", calls, "All logs read.", system="You read logs.")


async def test_what_if_compares_configs_against_no_compaction() -> None:
    configs = {
        "ctxlab": ContextConfig.preset("ctxlab"),
        "agentscope": ContextConfig.preset("agentscope"),
        "masking": ContextConfig.preset("observation_masking"),
    }
    what = WhatIf(_session(30), configs, context_window=8_000, counter=ApproximateCounter())
    await what.run()
    table = what.table()
    assert list(table.index) == ["ctxlab", "agentscope", "masking"]
    assert (table["requests"] == 31).all()
    assert table.loc["ctxlab", "compactions"] > 0
    # Against the policy that can run at this window (drop the oldest turns to fit) compaction
    # is cheaper; against the whole session at every step (which a provider would reject)
    # it is not: the unlimited figure is kept, and says how many requests could not be sent.
    assert (
        table.loc["ctxlab", "cost_vs_baseline"] < 1 < table.loc["ctxlab", "cost_vs_no_compaction"]
    )
    references = what.references()
    assert references["over_limit"].tolist()[0] == 0
    limit = what.runs["ctxlab"].steps[0].manifest.input_limit
    history = 0
    over = 0
    for message in what.transcript.messages:
        if isinstance(message, AssistantMessage) and history + 8 > limit:  # + System
            over += 1
        history += what.cache.message(message)
    assert references["over_limit"].tolist()[1] == over > 0
    assert max(c.input_tokens for c in what.baseline) <= limit
    assert table.loc["ctxlab", "retention"] == 1.0
    # One call per compaction, or one per piece where the span did not fit a single request.
    asked = what.runs["ctxlab"].summary_requests
    assert table.loc["ctxlab", "summary_calls"] == sum(len(v) for v in asked.values())
    assert table.loc["ctxlab", "summary_calls"] >= table.loc["ctxlab", "compactions"]
    assert (table["errors"] == 0).all()
    steps = what.steps()
    ctx = steps[steps["config"] == "ctxlab"]
    assert ctx["cumulative_cost"].is_monotonic_increasing
    assert ctx["cost"].sum() == pytest.approx(table.loc["ctxlab", "cost"])
    # What one config sent at a step that the other did not.
    diff = what.diff("ctxlab", "masking", 30)
    assert set(diff["side"]) == {"only in ctxlab", "only in masking"}
    # A new config under an old name replays that one only.
    before = what.runs["agentscope"].steps
    run = await what.set_config("ctxlab", ContextConfig(trigger_ratio=0.5))
    assert what.runs["agentscope"].steps is before
    assert len([s for s in run.steps if s.compaction]) >= table.loc["ctxlab", "compactions"]


async def _ctxlab_what_if() -> WhatIf:
    """The 30-turn log session under ctxlab's preset at an 8,000-token window (it compacts)."""
    return await ctxlab_what_if(_session(30), 8_000)


def test_the_baseline_drops_the_oldest_turns_whole_and_keeps_the_first_message() -> None:
    from ctxlab.analysis._references import fit_from as _fit_from

    task = UserMessage(content="task")
    call = AssistantMessage(content=(ToolUseBlock(id="a", name="bash", input={}),))
    result = UserMessage(content=(ToolResultBlock(tool_use_id="a", content="x"),))
    messages = [task, call, result, call, result, call]
    tokens = [100, 50, 50, 50, 50, 50]
    # 100 + 4 x 50 = 300 > 260: the oldest turn (call and result) goes, never half of it.
    assert _fit_from(messages, tokens, 0, 5, 0, 260) == 3
    assert _fit_from(messages, tokens, 0, 5, 0, 300) == 1
    # A dropped turn stays dropped (the cached prefix is not rebuilt backwards).
    assert _fit_from(messages, tokens, 0, 5, 3, 300) == 3
    # Not even the latest turn fits beside the first message: the request cannot be sent.
    assert _fit_from(messages, tokens, 0, 5, 0, 120) == -1


async def test_summary_calls_are_priced_from_the_request_they_send() -> None:
    import json

    from ctxlab.pipeline import summary_instruction

    what = await _ctxlab_what_if()
    run = what.runs["ctxlab"]
    calls = [c for c in run.costs if c.purpose == "summary"]
    asked = [
        pair for position in sorted(run.summary_requests) for pair in run.summary_requests[position]
    ]
    assert len(calls) == len(asked) >= 3
    for call, (request, answer) in zip(calls, asked, strict=True):
        # The answer is the JSON of the fields, not the rendered text.
        assert call.output == what.cache.text(json.dumps(answer, ensure_ascii=False))
        # Each call fits the window less its answer, and holds at least its span.
        assert call.input_tokens + call.output <= 8_000
        assert call.input_tokens >= what.cache.messages(request.messages)
    # A call after the first compaction re-sends the earlier summary in its instruction.
    later = next(r for r, _ in asked if r.previous_summary is not None)
    instruction = what.cache.text(summary_instruction(later))
    assert instruction > what.cache.text(later.previous_summary.text)  # type: ignore[union-attr]


async def test_the_retention_frame_sums_the_compactions_and_the_cost_splits() -> None:
    what = await _ctxlab_what_if()
    frame = what.retention().set_index("category")
    records = [s.compaction.retention for s in what.runs["ctxlab"].steps if s.compaction]
    commands = [r["commands"] for r in records if r is not None]
    assert frame.loc["commands", "items"] == sum(c.total for c in commands) > 0
    assert frame.loc["commands", "control"] == pytest.approx(
        sum(c.in_tail for c in commands) / sum(c.total for c in commands)
    )
    assert frame.loc["task", "kept"] == 1.0 and frame.loc["task", "control"] == 0.0
    row = what.table().loc["ctxlab"]
    outputs = sum(c.output for c in what.runs["ctxlab"].costs)
    assert row["output_cost"] == pytest.approx(outputs * what.price.output / 1e6)
    assert row["input_cost"] + row["output_cost"] == pytest.approx(row["cost"])
