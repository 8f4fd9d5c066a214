"""A replay that reuses an earlier one's first steps (`WhatIf.set_config`, `_resume`) is the
replay from the start: every request, compaction, state, summary call and figure the same, on
generated configs — the slider fields and any other field changed — and sessions."""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxlab import ApproximateCounter, ContextConfig, Transcript, WhatIf
from ctxlab.analysis._config_run import ConfigRun
from ctxlab.analysis._resume import first_decision
from ctxlab.config import ClearToolUses, ProviderEdits
from ctxlab.manifest import ProviderUsage, Thresholds
from ctxlab.messages import (
    AssistantMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.pipeline._compaction import NOTICE_ALLOWANCE
from tests.analysis.whatif_figures import figures

WINDOW = 8_000


def _session(turns: int, size: int, seed: int) -> Transcript:
    # Tool outputs of varied sizes (some over a tool_result_limit), a reply with text now and
    # then, a bill on every reply.
    messages: list[UserMessage | AssistantMessage] = [UserMessage(content="Fix src/app.py.")]
    usage = {}
    for n in range(turns):
        use = ToolUseBlock(id=f"c{n}", name="bash", input={"command": f"cat src/m{n}.py"})
        usage[len(messages)] = ProviderUsage(10, 5, 200 * n, 200)
        content: Any = (use,) if n % 3 else (TextBlock(text=f"Step {n}: reading m{n}."), use)
        messages.append(AssistantMessage(content=content))
        lines = size + (seed * 7 + n * 13) % size
        text = f"m{n}.py line {seed} value {1000 + n}\n" * lines
        messages.append(UserMessage(content=(ToolResultBlock(tool_use_id=f"c{n}", content=text),)))
    usage[len(messages)] = ProviderUsage(10, 5, 200 * turns, 200)
    messages.append(AssistantMessage(content="Done."))
    return Transcript(f"s{seed}", {}, "You fix code.", tuple(messages), usage=usage)


_ratios = st.floats(0.25, 0.9).map(lambda r: round(r, 2))
_reserves = st.floats(0.02, 0.5).map(lambda r: round(r, 2))


@st.composite
def _base(draw: st.DrawFn) -> dict[str, Any]:
    # What both configs of a pair share beyond the sliders, now and then: a tool-result limit
    # (cuts below the trigger), a preset, the provider's own edits, the compression tool.
    extra = draw(st.sampled_from(["", "", "tool_result_limit", "preset", "edits", "tool"]))
    if extra == "tool_result_limit":
        return {"tool_result_limit": draw(st.sampled_from([200, 400, 3_000]))}
    if extra == "preset":
        name = draw(st.sampled_from(["agentscope", "harness", "anthropic_context_editing"]))
        return ContextConfig.preset(name).model_dump()
    if extra == "edits":
        trigger = draw(st.sampled_from([1_500, 3_000, 5_000]))
        edits = ProviderEdits(clear_tool_uses=ClearToolUses(trigger_input_tokens=trigger, keep=2))
        return {"provider_edits": edits}
    if extra == "tool":
        return {"compression_tool_enabled": True, "context_buffer_ratio": 0.05}
    return {}


def _config(base: dict[str, Any], trigger: float, reserve: float) -> ContextConfig:
    fields = {**base, "trigger_ratio": trigger, "reserve_ratio": reserve}
    try:
        return ContextConfig.model_validate(fields)
    except ValueError:
        return ContextConfig(trigger_ratio=trigger)  # the sliders alone


@st.composite
def _pairs(draw: st.DrawFn) -> tuple[ContextConfig, ContextConfig]:
    """Two configs sharing a base (so that a resumed replay may reuse steps), the second now
    and then with another base (so that it must reuse none)."""
    base = draw(_base())
    first = _config(base, draw(_ratios), draw(_reserves))
    other = draw(st.sampled_from([base, base, base, draw(_base())]))
    return first, _config(other, draw(_ratios), draw(_reserves))


def _same_run(reused: ConfigRun, full: ConfigRun) -> None:
    assert len(reused.prepared) == len(full.prepared)
    for a, b in zip(reused.prepared, full.prepared, strict=True):
        assert (a.index, a.number) == (b.index, b.number)
        assert a.manifest == b.manifest
        assert a.compaction == b.compaction
        assert a.state == b.state
    assert reused.error == full.error
    assert reused.summary_requests == full.summary_requests
    # A summary call's manifest has a random id (two replays from the start differ there too).
    assert _calls(reused) == _calls(full)


def _calls(run: ConfigRun) -> dict[int, list[tuple[Any, Any]]]:
    return {
        at: [(dataclasses.replace(c.manifest, request_id=""), c.answer) for c in calls]
        for at, calls in run.summary_calls.items()
    }


@settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    pair=_pairs(),
    turns=st.integers(8, 40),
    size=st.integers(5, 60),
    seed=st.integers(0, 50),
)
async def test_a_replay_resumed_from_an_earlier_one_is_the_replay_from_the_start(
    pair: tuple[ContextConfig, ContextConfig], turns: int, size: int, seed: int
) -> None:
    first, second = pair
    session = _session(turns, size, seed)
    counter = ApproximateCounter()
    tuned = WhatIf(session, {"x": first}, context_window=WINDOW, counter=counter)
    await tuned.run()
    await tuned.set_config("x", second)
    fresh = WhatIf(session, {"x": second}, context_window=WINDOW, counter=tuned.cache)
    await fresh.run()
    _same_run(tuned.runs["x"], fresh.runs["x"])
    assert figures(tuned) == figures(fresh)


async def test_the_slider_fields_reuse_the_steps_before_the_first_decision() -> None:
    # Not vacuous: a trigger moved reuses every step before the first compaction but one.
    session = _session(40, 30, 1)
    tuned = WhatIf(session, {"x": ContextConfig(trigger_ratio=0.8)}, context_window=20_000)
    await tuned.run()
    earlier = tuned.runs["x"]
    first = next(n for n, s in enumerate(earlier.prepared) if s.compaction)
    decision = first_decision(earlier, ContextConfig(trigger_ratio=0.7), 20_000)
    assert 1 < decision <= first
    run = await tuned.set_config("x", ContextConfig(trigger_ratio=0.7))
    assert run.reused == decision - 1
    fresh = WhatIf(session, {"x": ContextConfig(trigger_ratio=0.7)}, context_window=20_000)
    await fresh.run()
    _same_run(run, fresh.runs["x"])
    # Another field, or the compression tool's notice, reuses nothing.
    other = await tuned.set_config("x", ContextConfig(trigger_ratio=0.7, tool_result_limit=500))
    assert other.reused == 0
    tool = ContextConfig(trigger_ratio=0.7, compression_tool_enabled=True)
    assert first_decision(run, tool, 20_000) == 0


async def test_a_request_within_the_notice_allowance_of_a_line_is_a_decision() -> None:
    # The pipeline tests a request's size with the usage notice's allowance added: a step whose
    # size is below the new config's line, but not by that allowance, may already compact or
    # carry the notice there — it is not reused.
    session = _session(30, 20, 3)
    tuned = WhatIf(session, {"x": ContextConfig(trigger_ratio=0.9)}, context_window=WINDOW)
    await tuned.run()
    earlier = tuned.runs["x"]
    sizes = [s.manifest.estimated_input_tokens for s in earlier.prepared]
    decision = first_decision(earlier, ContextConfig(trigger_ratio=0.9), WINDOW)

    def line(ratio: float) -> int:
        lines = Thresholds.compute(ContextConfig(trigger_ratio=ratio), WINDOW)
        return min(lines.trigger_tokens, lines.notice_tokens)

    # A trigger whose line falls just above some step's size (within the allowance).
    found = [
        (step, ratio / 1000)
        for ratio in range(250, 900)
        for step, size in enumerate(sizes[:decision])
        if size < line(ratio / 1000) <= size + NOTICE_ALLOWANCE
    ]
    assert found, "no step lies within the allowance of any line: the test would be vacuous"
    step, ratio = min(found)
    new = ContextConfig(trigger_ratio=ratio)
    assert first_decision(earlier, new, WINDOW) <= step
    run = await tuned.set_config("x", new)
    fresh = WhatIf(session, {"x": new}, context_window=WINDOW)
    await fresh.run()
    _same_run(run, fresh.runs["x"])
