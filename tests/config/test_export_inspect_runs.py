"""The Inspect AI export run in Inspect, differentially: the exported ``CompactionEdit``,
given a generated history in Inspect's own message types (Hypothesis), clears what ctxlab's
edits clear on the same history once both fire — or, where Inspect cannot do what ctxlab does,
differs only in the way `dropped` names: with excluded tools among the latest uses it clears
fewer results; within a tool loop it keeps the thinking of fewer messages."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import ApproximateCounter, ContextConfig
from ctxlab.config import ClearThinking, ClearToolUses, ProviderEdits
from ctxlab.pipeline._provider_edits import apply_provider_edits
from ctxlab.tokens import TokenCache
from tests.config.histories import TOOLS, Message, histories, thinking_of, to_inspect
from tests.helpers import results_of

pytest.importorskip("inspect_ai", reason="the export is Inspect AI's own strategy")

CACHE = TokenCache(ApproximateCounter())
REMOVED = "(Tool result removed)"  # Inspect's placeholder (inspect_ai 0.3.285, edit.py)


def _inspect_kept(messages: list[object]) -> tuple[set[str], list[str]]:
    """The call ids whose results Inspect left, and the reasoning it left, in order."""
    from inspect_ai._util.content import ContentReasoning
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool

    results = {
        m.tool_call_id for m in messages if isinstance(m, ChatMessageTool) and m.text != REMOVED
    }
    reasoning = [
        c.reasoning
        for m in messages
        if isinstance(m, ChatMessageAssistant) and not isinstance(m.content, str)
        for c in m.content
        if isinstance(c, ContentReasoning)
    ]
    return results, reasoning  # type: ignore[return-value]


@settings(max_examples=60, deadline=None)
@given(
    histories(),
    st.integers(0, 6),
    st.lists(st.sampled_from(TOOLS), max_size=2, unique=True).map(tuple),
    st.none() | st.integers(1, 4),
)
async def test_the_edit_clears_what_ctxlab_clears_or_what_dropped_says(
    messages: list[Message], keep: int, exclude: tuple[str, ...], keep_thinking: int | None
) -> None:
    from inspect_ai.model import CompactionEdit, get_model

    edit = ClearToolUses(trigger_input_tokens=1_000, keep=keep, exclude_tools=exclude)
    thinking = ClearThinking(keep_turns=keep_thinking)
    config = ContextConfig.preset("anthropic_context_editing").merge(
        provider_edits=ProviderEdits(clear_tool_uses=edit, clear_thinking=thinking)
    )
    exported = config.export("inspect")
    strategy = exported.value
    assert isinstance(strategy, CompactionEdit) and strategy.threshold == 1_000
    compacted, _ = await strategy.compact(get_model("mockllm/model"), to_inspect(messages), [])
    kept_results, kept_thinking = _inspect_kept(compacted)
    # ctxlab past the same threshold.
    sent, _ = apply_provider_edits(
        messages, ProviderEdits(clear_tool_uses=edit, clear_thinking=thinking), CACHE, 1_001
    )
    ours = {call for call, text in results_of(sent).items() if text != edit.placeholder}
    if ours != kept_results:
        # Inspect keeps the latest `keep` of the tools it may clear: more than ctxlab when
        # excluded tools are among the latest — said in dropped.
        assert exclude and ours < kept_results
        assert any(d.startswith("keep with exclude_tools") for d in exported.dropped)
    if thinking_of(sent) != kept_thinking:
        # Inspect counts each assistant message as a turn: within a tool loop it keeps less.
        assert keep_thinking is not None and set(kept_thinking) < set(thinking_of(sent))
        assert any(d.startswith("clear_thinking's turns") for d in exported.dropped)
    assert any(
        d.startswith("when it clears: Inspect edits the history once") for d in exported.dropped
    )


@settings(max_examples=60, deadline=None)
@given(histories(max_calls=1), st.integers(0, 6), st.none() | st.integers(1, 4))
async def test_without_excluded_tools_or_tool_loops_it_keeps_the_same(
    messages: list[Message], keep: int, keep_thinking: int | None
) -> None:
    """The control of the above: where `dropped` names no difference for the history — no
    excluded tool, one assistant message a turn — Inspect and ctxlab keep the same blocks."""
    from inspect_ai.model import get_model

    # One assistant message a turn: the user speaks after every result.
    single: list[Message] = []
    for message in messages:
        single.append(message)
        if message.role == "user" and message.tool_results:  # type: ignore[union-attr]
            from ctxlab.messages import UserMessage

            single.append(UserMessage(content="Go on."))
    edit = ClearToolUses(trigger_input_tokens=1_000, keep=keep)
    thinking = ClearThinking(keep_turns=keep_thinking)
    provider = ProviderEdits(clear_tool_uses=edit, clear_thinking=thinking)
    config = ContextConfig.preset("anthropic_context_editing").merge(provider_edits=provider)
    strategy = config.export("inspect").value
    compacted, _ = await strategy.compact(get_model("mockllm/model"), to_inspect(single), [])
    kept_results, kept_thinking = _inspect_kept(compacted)
    sent, _ = apply_provider_edits(single, provider, CACHE, 1_001)
    assert {c for c, t in results_of(sent).items() if t != edit.placeholder} == kept_results
    assert thinking_of(sent) == kept_thinking


def test_what_ctxlab_cannot_read_is_refused_by_name() -> None:
    from inspect_ai.model import CompactionEdit

    from ctxlab.exceptions import UsageError

    with pytest.raises(UsageError, match="keep_tool_inputs=False\\) has no ctxlab equivalent"):
        ContextConfig.from_(CompactionEdit(threshold=5_000, keep_tool_inputs=False), "inspect")
    with pytest.raises(UsageError, match="keep_tool_uses must be a whole number"):
        ContextConfig.from_(CompactionEdit(threshold=5_000, keep_tool_uses=-1), "inspect")
    with pytest.raises(UsageError, match="exclude_tools must be a list"):
        ContextConfig.from_(CompactionEdit(threshold=5_000, exclude_tools="bash"), "inspect")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="threshold must be a number above 0"):
        ContextConfig.from_(CompactionEdit(threshold=float("nan")), "inspect", context_window=9_000)
