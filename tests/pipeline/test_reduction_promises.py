"""Conversation reduction (stage 5) as the config promises it: a light pass runs at every request,
far below any trigger (observation masking masks what is older than its turns, with a control
that keeps them all); and a compaction whose latest turn is too large for the window cuts that
turn's tool results until the request fits (a property over result sizes and windows)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import ContextConfig
from ctxlab.config._sections import CompactionPasses, MaskConfig
from ctxlab.messages import AssistantMessage, ToolResultBlock, ToolUseBlock, UserMessage
from ctxlab.pipeline import CompactionOrder
from tests.helpers import prepared, results_of, tool_turn


def _session(turns: int) -> list[UserMessage | AssistantMessage]:
    messages: list[UserMessage | AssistantMessage] = [UserMessage(content="Look at the logs.")]
    for n in range(turns):
        messages.extend(tool_turn(f"c{n}", f"log {n}: " + "all good " * 20))
    return messages


async def test_masking_runs_far_below_the_trigger() -> None:
    config = ContextConfig(compaction=CompactionPasses(mask=MaskConfig(keep_turns=3)))
    prep = await prepared(_session(8), context_window=1_000_000, config=config)
    masked = [t.target for t in prep.manifest.transforms if t.kind == "observation_mask"]
    assert masked == [f"c{n}" for n in range(5)]
    results = list(results_of(prep.state.conversation).values())
    placeholder = MaskConfig().placeholder
    assert results[:5] == [placeholder] * 5
    assert all(r.startswith("log ") for r in results[5:])
    # Control: keeping more turns than there are masks nothing.
    whole = await prepared(
        _session(8),
        context_window=1_000_000,
        config=ContextConfig(compaction=CompactionPasses(mask=MaskConfig(keep_turns=8))),
    )
    assert [t for t in whole.manifest.transforms if t.kind == "observation_mask"] == []


async def _summary(request: object) -> dict[str, str]:
    return {"task_overview": "look at the logs", "current_state": "reading"}


@settings(max_examples=30, database=None, deadline=None)
@given(
    sizes=st.lists(st.integers(200, 6_000), min_size=1, max_size=4),
    window=st.sampled_from([6_000, 9_000, 16_000]),
)
async def test_a_latest_turn_too_large_is_cut_until_the_request_fits(
    sizes: list[int], window: int
) -> None:
    messages = _session(6)
    calls = tuple(
        ToolUseBlock(id=f"big{n}", name="read", input={"page": n}) for n in range(len(sizes))
    )
    results = tuple(
        ToolResultBlock(tool_use_id=f"big{n}", content=f"page {n}\n" + "data row\n" * size)
        for n, size in enumerate(sizes)
    )
    messages += [AssistantMessage(content=calls), UserMessage(content=results)]
    prep = await prepared(
        messages,
        context_window=window,
        config=ContextConfig(tool_result_limit=100_000),
        summarizer=_summary,
        compaction=CompactionOrder(force=True),
    )
    manifest = prep.manifest
    assert manifest.validation == "passed"
    assert manifest.estimated_input_tokens <= manifest.input_limit
    # The calls stay whole, every result answers its call.
    last = prep.state.conversation[-1]
    assert [r.tool_use_id for r in last.tool_results] == [f"big{n}" for n in range(len(sizes))]
