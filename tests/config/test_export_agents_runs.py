"""The pydantic-ai and OpenAI Agents SDK exports run in their libraries, differentially:

- pydantic-ai's own ``AnthropicModel``, given the exported settings (generated configs), sends the
  Messages API exactly the ``context_management`` ctxlab exports for Anthropic, with the beta
  headers its edits need — what the API then does is checked in ``test_export_anthropic_runs``;
- the Agents SDK's own ``ToolOutputTrimmer``, the run config's ``call_model_input_filter``, trims
  the same outputs of a generated history (in the SDK's input items) to the same text as
  ctxlab's reproduction does.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import ContextConfig
from ctxlab.config import ClearThinking, ClearToolUses, ProviderEdits, TrimToolOutputs
from ctxlab.pipeline._provider_edits import trim_tool_outputs
from tests.config.histories import TOOLS, Message, agents_outputs, histories, to_agents_items
from tests.helpers import results_of

configs = st.builds(
    lambda uses, keep, thinking, compact: ContextConfig.preset("anthropic_context_editing").merge(
        compaction={"trigger_tokens": compact, "enabled": compact is not None},
        provider_edits=ProviderEdits(
            clear_tool_uses=ClearToolUses(trigger_tool_uses=uses, trigger_input_tokens=None)
            if uses
            else ClearToolUses(keep=keep),
            clear_thinking=thinking,
        ),
    ),
    st.none() | st.integers(1, 20),
    st.integers(0, 5),
    st.none() | st.builds(ClearThinking, keep_turns=st.none() | st.integers(1, 3)),
    st.none() | st.integers(50_000, 300_000),
)


@settings(max_examples=12, deadline=None)
@given(configs)
async def test_pydantic_ai_sends_the_edits_ctxlab_exports(config: ContextConfig) -> None:
    pytest.importorskip("pydantic_ai", reason="the export is pydantic-ai's own model settings")
    from pydantic_ai import Agent
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    from tests.models.messages_api import MessagesAPI, message

    exported = config.export("pydantic_ai")
    anthropic = config.export("anthropic").value
    settings_: dict[str, Any] = dict(exported.value)
    if config.provider_edits and config.provider_edits.clear_thinking:
        # The thinking edit is taken only with thinking on (named in dropped).
        assert any("only with extended thinking on" in d for d in exported.dropped)
        settings_["anthropic_thinking"] = {"type": "enabled", "budget_tokens": 1024}
    with MessagesAPI([message("ok")]) as api:
        model = AnthropicModel(
            "claude-sonnet-4-6", provider=AnthropicProvider(api_key="k", base_url=api.url)
        )
        assert (await Agent(model, model_settings=settings_).run("hi")).output == "ok"
    (sent,) = api.requests
    assert sent["context_management"] == anthropic
    betas = set(api.headers[0].get("anthropic-beta", "").split(","))
    kinds = {e["type"] for e in anthropic["edits"]}
    if kinds & {"clear_tool_uses_20250919", "clear_thinking_20251015"}:
        assert "context-management-2025-06-27" in betas
    if "compact_20260112" in kinds:
        assert "compact-2026-01-12" in betas


trimmers = st.builds(
    TrimToolOutputs,
    recent_turns=st.integers(1, 4),
    max_output_chars=st.integers(1, 2_000),
    preview_chars=st.integers(0, 300),
    trimmable_tools=st.none() | st.lists(st.sampled_from(TOOLS), min_size=1, max_size=2).map(tuple),
)


@settings(max_examples=100, deadline=None)
@given(histories(), trimmers)
def test_the_agents_sdk_trimmer_trims_what_ctxlab_trims(
    messages: list[Message], trim: TrimToolOutputs
) -> None:
    pytest.importorskip("agents", reason="the export is the Agents SDK's own run config")
    config = ContextConfig.preset("openai_agents_trimmer").merge(
        provider_edits=ProviderEdits(trim_tool_outputs=trim)
    )
    sdk = agents_outputs(config, to_agents_items(messages))
    ours, _ = trim_tool_outputs(messages, trim)
    assert results_of(ours) == sdk


@pytest.mark.parametrize("length", [499, 500, 501, 520])
def test_the_trimmers_edge_agrees_to_the_character(length: int) -> None:
    """Outputs at, just under and just over ``max_output_chars`` (generated lengths rarely
    land on the edge)."""
    pytest.importorskip("agents", reason="the export is the Agents SDK's own run config")
    from ctxlab.messages import AssistantMessage, ToolResultBlock, ToolUseBlock, UserMessage

    messages: list[Message] = [UserMessage(content="One.")]
    for n in range(2):
        messages.append(
            AssistantMessage(content=(ToolUseBlock(id=f"c{n}", name="read", input={}),))
        )
        messages.append(
            UserMessage(content=(ToolResultBlock(tool_use_id=f"c{n}", content="x" * length),))
        )
        messages.append(UserMessage(content=f"Turn {n + 2}."))
    trim = TrimToolOutputs()
    config = ContextConfig(provider_edits=ProviderEdits(trim_tool_outputs=trim))
    sdk = agents_outputs(config, to_agents_items(messages))
    ours, _ = trim_tool_outputs(messages, trim)
    assert results_of(ours) == sdk
    assert sdk["c0"].startswith("[Trimmed") == (length > 500)
