"""Anthropic's ``context_management``, differentially: the edits cannot be run offline (the API
applies them), so each exported value is checked against the SDK's own types, and ctxlab's
reproduction of the edits against the context-editing guide's rules written here on their own,
on generated histories (Hypothesis) — what each keeps, to the block.

The guide's rules, as written here: ``clear_tool_uses_20250919`` — once the request passes its
trigger (input tokens, or tool uses), the results of all but the latest ``keep`` tool uses are
replaced by a placeholder, oldest first, never those of ``exclude_tools``; with
``clear_at_least``, only if that many tokens go; ``clear_tool_inputs`` empties the calls' inputs
too. ``clear_thinking_20251015`` — the thinking of all but the latest ``keep`` assistant turns
goes, a turn being everything the assistant does between two messages of the user. Where the
guide is silent (does ``keep`` count excluded tools?) the choice is ctxlab's documented one:
every tool use counts.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from ctxlab import ApproximateCounter, ContextConfig
from ctxlab.config import ClearThinking, ClearToolUses, ProviderEdits
from ctxlab.messages import (
    AssistantMessage,
    RedactedThinkingBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.pipeline._provider_edits import apply_provider_edits
from ctxlab.tokens import TokenCache
from tests.config.histories import Message, histories, thinking_of, tool_use_clears
from tests.helpers import results_of

CACHE = TokenCache(ApproximateCounter())


def guide_clear_tool_uses(
    messages: list[Message], edit: ClearToolUses, input_tokens: int
) -> list[Message]:
    uses = [u for m in messages if isinstance(m, AssistantMessage) for u in m.tool_uses]
    if edit.trigger_tool_uses is not None:
        fired = len(uses) > edit.trigger_tool_uses
    else:
        assert edit.trigger_input_tokens is not None
        fired = input_tokens > edit.trigger_input_tokens
    if not fired:
        return messages
    older = uses[: max(len(uses) - edit.keep, 0)]
    clear = {u.id for u in older if u.name not in edit.exclude_tools}
    inputs = edit.clear_tool_inputs
    empty_inputs = {
        u.id
        for u in older
        if u.id in clear and (inputs is True or (isinstance(inputs, tuple) and u.name in inputs))
    }
    # What a clear frees: the result's content, its framing stays (never below nothing: a
    # placeholder longer than the result frees none).
    freed = sum(
        max(CACHE.block(r) - CACHE.block(r.evolve(content=edit.placeholder)), 0)
        for m in messages
        if isinstance(m, UserMessage)
        for r in m.tool_results
        if r.tool_use_id in clear
    )
    freed += sum(
        CACHE.block(u) - CACHE.block(u.evolve(input={}))
        for m in messages
        if isinstance(m, AssistantMessage)
        for u in m.tool_uses
        if u.id in empty_inputs
    )
    if not clear or freed < edit.clear_at_least:
        return messages
    out: list[Message] = []
    for m in messages:
        if isinstance(m, UserMessage):
            out.append(
                UserMessage(
                    content=tuple(
                        b.evolve(content=edit.placeholder)
                        if isinstance(b, ToolResultBlock) and b.tool_use_id in clear
                        else b
                        for b in m.content
                    )
                )
            )
        else:
            out.append(
                AssistantMessage(
                    content=tuple(
                        b.evolve(input={})
                        if isinstance(b, ToolUseBlock) and b.id in empty_inputs
                        else b
                        for b in m.content
                    )
                )
            )
    return out


def guide_clear_thinking(messages: list[Message], keep: int | None) -> list[Message]:
    if keep is None:
        return messages
    turns: list[int] = []
    turn = 0
    for m in messages:
        if isinstance(m, UserMessage) and not m.tool_results:
            turn += 1
        turns.append(turn)
    assistant_turns = sorted(
        {t for m, t in zip(messages, turns, strict=True) if m.role == "assistant"}
    )
    kept = set(assistant_turns[-keep:])
    out: list[Message] = []
    for m, t in zip(messages, turns, strict=True):
        if isinstance(m, AssistantMessage) and t not in kept:
            left = tuple(
                b for b in m.content if not isinstance(b, ThinkingBlock | RedactedThinkingBlock)
            )
            if left:  # a turn of thinking alone is not sent (an empty text would be refused)
                out.append(AssistantMessage(content=left))
            continue
        out.append(m)
    return out


edits = tool_use_clears(st.sampled_from([0, 0, 200, 3_000]), uses=st.none() | st.integers(1, 12))


@settings(max_examples=100, deadline=None)
@given(
    histories(),
    edits,
    st.none() | st.integers(1, 4),
    st.integers(0, 40_000),
)
def test_ctxlabs_edits_keep_what_the_guide_says(
    messages: list[Message], edit: ClearToolUses, keep_thinking: int | None, tokens: int
) -> None:
    provider = ProviderEdits(
        clear_tool_uses=edit, clear_thinking=ClearThinking(keep_turns=keep_thinking)
    )
    sent, _ = apply_provider_edits(messages, provider, CACHE, tokens)
    # The API applies the thinking edit first (it must come first in the list).
    expected = guide_clear_tool_uses(guide_clear_thinking(messages, keep_thinking), edit, tokens)
    assert results_of(sent) == results_of(expected)
    assert thinking_of(sent) == thinking_of(expected)
    assert [m.role for m in sent] == [m.role for m in expected]
    inputs = {u.id: u.input for m in sent if isinstance(m, AssistantMessage) for u in m.tool_uses}
    assert inputs == {
        u.id: u.input for m in expected if isinstance(m, AssistantMessage) for u in m.tool_uses
    }
    # Nothing sent is an empty block the API would refuse.
    assert all(m.content for m in sent)


@settings(max_examples=100, deadline=None)
@given(edits, st.none() | st.integers(1, 4), st.integers(1, 400_000))
def test_each_export_is_the_sdks_type_and_reads_back_the_same(
    edit: ClearToolUses, keep_thinking: int | None, compact: int
) -> None:
    from anthropic.types.beta import (
        BetaClearThinking20251015EditParam as BetaThinking,
    )
    from anthropic.types.beta import (
        BetaClearToolUses20250919EditParam as BetaToolUses,
    )
    from anthropic.types.beta import (
        BetaCompact20260112EditParam as BetaCompact,
    )
    from anthropic.types.beta import BetaContextManagementConfigParam

    config = ContextConfig.preset("anthropic_context_editing").merge(
        compaction={"trigger_tokens": compact},
        provider_edits=ProviderEdits(
            clear_tool_uses=edit, clear_thinking=ClearThinking(keep_turns=keep_thinking)
        ),
    )
    exported = config.export("anthropic")
    value: dict[str, Any] = exported.value
    # The SDK's types take the whole and each edit as it is (its Iterable validates lazily).
    whole = TypeAdapter(BetaContextManagementConfigParam)  # held: its iterator reads it
    assert list(whole.validate_python(value)["edits"]) == value["edits"]
    for edit_value, kind in zip(
        value["edits"], (BetaThinking, BetaToolUses, BetaCompact), strict=True
    ):
        assert TypeAdapter(kind).validate_python(edit_value) == edit_value
    kinds = [e["type"] for e in value["edits"]]
    assert kinds == ["clear_thinking_20251015", "clear_tool_uses_20250919", "compact_20260112"]
    (trigger,) = [e["trigger"] for e in value["edits"] if e["type"] == "clear_tool_uses_20250919"]
    assert trigger["type"] == ("tool_uses" if edit.trigger_tool_uses else "input_tokens")
    compact_trigger = value["edits"][2]["trigger"]["value"]
    # A trigger the API refuses is raised to its minimum, and said.
    assert compact_trigger == max(compact, 50_000)
    assert (compact < 50_000) == any("below 50,000" in d for d in exported.dropped)
    back = ContextConfig.from_(value)
    assert back.provider_edits is not None
    assert back.provider_edits.clear_tool_uses == edit.model_copy(
        update={"placeholder": back.provider_edits.clear_tool_uses.placeholder}  # type: ignore[union-attr]
    )
    assert back.provider_edits.clear_thinking == config.provider_edits.clear_thinking  # type: ignore[union-attr]
    assert back.compaction.trigger_tokens == compact_trigger
