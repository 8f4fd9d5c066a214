"""The framework exports, value by value, without running the frameworks (the `*_runs.py` tests
run them): each setting ctxlab holds lands in the framework object's field that means it —
LangChain's ``ClearToolUsesEdit`` and ``SummarizationMiddleware``, Inspect's strategies, the Agents
SDK's trimmer and ``truncation``, pydantic-ai's settings and their beta — and ``dropped`` is
exactly what the target cannot express, each entry with its numbers, nothing more."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import ContextConfig
from ctxlab.config import ClearThinking, ClearToolUses, ProviderEdits, TrimToolOutputs
from ctxlab.exceptions import UsageError

pytest.importorskip("langchain.agents", reason="the LangChain target builds its middleware")
pytest.importorskip("inspect_ai", reason="the Inspect target builds its strategy")
pytest.importorskip("agents", reason="the Agents SDK target builds its run config")
pytest.importorskip("pydantic_ai", reason="the pydantic-ai target builds its settings")

WINDOW = 200_000


def _summarizer() -> Any:
    from langchain_core.messages import AIMessage

    from tests.integrations.test_langchain import _Model

    # A profile: LangChain refuses a fractional trigger or tail for a model without one.
    return _Model(
        messages=iter([AIMessage(content="s")]), sent=[], profile={"max_input_tokens": WINDOW}
    )


def _everything(**compaction: Any) -> ContextConfig:
    """Every setting a framework may not express, in force at once."""
    return ContextConfig.preset("anthropic_context_editing").merge(
        tool_result_limit=1_000,
        compaction={
            "trigger_tokens": 20_000,
            "keep_messages": 4,
            "trigger_messages": 30,
            "mask": {"keep_turns": 3},
            "prune": {},
            "summary_prompt": "Sum {it} up: {messages}",
            **compaction,
        },
        provider_edits=ProviderEdits(
            clear_tool_uses=ClearToolUses(
                trigger_tool_uses=5,
                trigger_input_tokens=None,
                keep=2,
                clear_at_least=300,
                exclude_tools=("memory",),
                clear_tool_inputs=("bash",),
                placeholder="[gone]",
            ),
            clear_thinking=ClearThinking(keep_turns=2),
            trim_tool_outputs=TrimToolOutputs(
                recent_turns=3, max_output_chars=800, preview_chars=150, trimmable_tools=("grep",)
            ),
            openai_truncation=True,
        ),
    )


def _edit_fields(edit: Any) -> dict[str, Any]:
    names = ("trigger", "clear_at_least", "keep", "clear_tool_inputs", "exclude_tools")
    return {name: getattr(edit, name) for name in (*names, "placeholder")}


# --- LangChain -------------------------------------------------------------------------------


def test_the_langchain_export_of_every_setting_and_what_it_drops() -> None:
    from langchain.agents.middleware import ContextEditingMiddleware, SummarizationMiddleware

    exported = _everything().export("langchain", model=_summarizer(), context_window=WINDOW)
    assert exported.target == "langchain"
    editing, summarizing = exported.value
    assert isinstance(editing, ContextEditingMiddleware)
    (edit,) = editing.edits
    assert _edit_fields(edit) == {
        "trigger": 100_000,  # LangChain's default: it has no tool-use trigger
        "clear_at_least": 0,
        "keep": 2,
        "clear_tool_inputs": False,  # by tool name: LangChain clears all inputs or none
        "exclude_tools": ("memory",),
        "placeholder": "[gone]",  # LangChain writes the user's placeholder
    }
    assert isinstance(summarizing, SummarizationMiddleware)
    # The lower of the two token lines (20,000 < 0.9 of the window), then the message count;
    # LangChain summarizes at its count, ctxlab above its line: one more.
    assert summarizing.trigger == [("tokens", 20_001), ("messages", 30)]
    assert summarizing.keep == ("messages", 4)
    assert summarizing.trim_tokens_to_summarize is None
    assert summarizing.summary_prompt == "Sum {{it}} up: {messages}"
    assert exported.dropped == (
        "clear_tool_inputs by tool name: LangChain clears every cleared call's inputs or none; "
        "exported as none",
        "trigger_tool_uses=5: LangChain's edit triggers on tokens only; exported with its "
        "default, 100,000 tokens",
        "the trigger: LangChain compares its count of the messages alone (approximate unless "
        "given a token_counter); ctxlab and the API the whole request, System and tools too",
        "clear_at_least=300: LangChain's stops clearing once that many tokens are reclaimed, "
        "Anthropic's (and ctxlab's) clears only when that many can go; exported as 0 — "
        "LangChain clears whenever its trigger fires",
        "clear_thinking: LangChain has no thinking edit",
        "compaction.mask: observation masking has no place in LangChain",
        "tool_result_limit: LangChain does not truncate tool results",
        "compaction.prune: ctxlab prunes older tool output before it summarizes; LangChain "
        "summarizes it whole",
        "provider_edits.trim_tool_outputs: the Agents SDK's trimmer (export 'openai_agents')",
        "provider_edits.openai_truncation: the OpenAI Responses API's (export 'openai_agents')",
        "summary_schema: LangChain's summary is free text in its own prompt",
        "the pinned task: ctxlab keeps the first user message beside the summary; LangChain "
        "summarizes it with the rest",
        "keep_messages: LangChain counts each tool result as a message, ctxlab a turn's results "
        "as one",
    )


def test_langchains_edit_takes_a_token_trigger_and_all_inputs_as_set() -> None:
    config = ContextConfig.preset("ctxlab").merge(
        compaction={"enabled": False},
        provider_edits=ProviderEdits(
            clear_tool_uses=ClearToolUses(trigger_input_tokens=42_000, clear_tool_inputs=True)
        ),
    )
    exported = config.export("langchain", model=_summarizer(), context_window=WINDOW)
    (editing,) = exported.value  # compaction off: no summary middleware
    (edit,) = editing.edits
    assert (edit.trigger, edit.clear_tool_inputs, edit.keep) == (42_000, True, 3)
    # Only the one difference every LangChain edit has: nothing else to name.
    assert exported.dropped == (
        "the trigger: LangChain compares its count of the messages alone (approximate unless "
        "given a token_counter); ctxlab and the API the whole request, System and tools too",
    )


def test_langchain_without_a_summarizer_names_the_summary_and_exports_none() -> None:
    config = ContextConfig.preset("ctxlab")
    exported = config.export("langchain", context_window=WINDOW)
    assert exported.value == []
    assert "the summary compaction: pass model= (the summarizer) to export it" in exported.dropped
    off = config.merge(compaction={"enabled": False}).export("langchain", context_window=WINDOW)
    assert (off.value, off.dropped) == ([], ())


def test_langchains_summary_lines_are_shares_without_a_window() -> None:
    config = ContextConfig.preset("ctxlab").merge(trigger_ratio=0.7, reserve_ratio=0.15)
    (summarizing,) = config.export("langchain", model=_summarizer()).value
    assert (summarizing.trigger, summarizing.keep) == (("fraction", 0.7), ("fraction", 0.15))
    tokens = config.merge(compaction={"trigger_tokens": 90_000})
    (summarizing,) = tokens.export("langchain", model=_summarizer()).value
    # A count is not comparable with a share: the count the user set is exported (LangChain's
    # summarizes at it, ctxlab above it: one more).
    assert summarizing.trigger == ("tokens", 90_001)


TEMPLATE_PIECES = st.sampled_from(["{", "}", "{messages}", "{{", "}}", "a", " ", "{x}", "\n"])


@settings(max_examples=60, deadline=None)
@given(st.lists(TEMPLATE_PIECES, max_size=6), st.lists(TEMPLATE_PIECES, max_size=6))
def test_langchains_summary_prompt_formats_back_to_ctxlabs_template(
    before: list[str], after: list[str]
) -> None:
    """LangChain str.formats the prompt with ``messages``: what it sends is ctxlab's template
    with the span in place of ``{messages}``, every other brace as written."""
    template = "".join(before) + "{messages}" + "".join(after)
    config = ContextConfig.preset("ctxlab").merge(compaction={"summary_prompt": template})
    (summarizing,) = config.export("langchain", model=_summarizer(), context_window=WINDOW).value
    span = "<the span>"
    assert summarizing.summary_prompt.format(messages=span) == template.replace("{messages}", span)


def test_without_a_template_of_its_own_langchain_keeps_its_prompt() -> None:
    from langchain.agents.middleware import SummarizationMiddleware

    config = ContextConfig.preset("ctxlab")
    assert config.compaction.summary_prompt is None
    (summarizing,) = config.export("langchain", model=_summarizer(), context_window=WINDOW).value
    default = SummarizationMiddleware(_summarizer()).summary_prompt
    assert summarizing.summary_prompt == default


# --- Inspect ---------------------------------------------------------------------------------


def test_the_inspect_export_of_every_setting_and_what_it_drops() -> None:
    from inspect_ai.model import CompactionEdit

    exported = _everything().export("inspect", context_window=WINDOW)
    assert exported.target == "inspect"
    strategy = exported.value
    assert isinstance(strategy, CompactionEdit)
    # No token trigger (it counts tool uses): the trigger ratio's share of the window.
    assert strategy.threshold == int(0.9 * WINDOW)
    assert (strategy.keep_tool_uses, strategy.keep_thinking_turns) == (2, 2)
    assert (strategy.exclude_tools, strategy.keep_tool_inputs, strategy.memory) == (
        ["memory"],
        True,
        False,
    )
    assert exported.dropped == (
        "compaction.mask: observation masking has no place in Inspect",
        "tool_result_limit: Inspect does not truncate tool results",
        "provider_edits.trim_tool_outputs: the Agents SDK's trimmer (export 'openai_agents')",
        "provider_edits.openai_truncation: the OpenAI Responses API's (export 'openai_agents')",
        "trigger_tool_uses: Inspect's threshold counts tokens",
        "clear_at_least: Inspect clears whenever the threshold is reached",
        "clear_tool_uses.placeholder: Inspect writes its own",
        "clear_tool_inputs: Inspect's keep_tool_inputs=False removes call and result whole; the "
        "calls are kept",
        "keep with exclude_tools: Inspect keeps the latest keep_tool_uses of the tools it may "
        "clear, ctxlab the latest keep of every tool use — Inspect clears fewer when excluded "
        "tools are among the latest",
        "clear_thinking's turns: Inspect counts each assistant message as a turn, ctxlab (and "
        "the API) a whole tool loop — within a tool loop Inspect clears more",
        "when it clears: Inspect edits the history once past the threshold and goes on from the "
        "edited history; ctxlab and the API clear each request afresh",
        "the summary compaction: Inspect runs one strategy, the edit here",
    )


def test_an_inspect_edit_of_defaults_names_only_when_it_clears() -> None:
    config = ContextConfig.preset("ctxlab").merge(
        compaction={"enabled": False},
        provider_edits=ProviderEdits(clear_tool_uses=ClearToolUses(trigger_input_tokens=70_000)),
    )
    exported = config.export("inspect", context_window=WINDOW)
    strategy = exported.value
    assert (strategy.threshold, strategy.keep_tool_uses, strategy.keep_thinking_turns) == (
        70_000,
        3,
        "all",  # no thinking edit: Inspect keeps every turn's thinking, as ctxlab does
    )
    assert strategy.exclude_tools is None
    assert exported.dropped == (
        "when it clears: Inspect edits the history once past the threshold and goes on from the "
        "edited history; ctxlab and the API clear each request afresh",
    )


@pytest.mark.parametrize("keep_turns", [None, 1])
def test_an_inspect_export_of_thinking_alone_keeps_every_tool_use(keep_turns: int | None) -> None:
    thinking = ClearThinking(keep_turns=keep_turns)
    config = ContextConfig.preset("ctxlab").merge(
        compaction={"enabled": False},
        provider_edits=ProviderEdits(clear_thinking=thinking),
    )
    exported = config.export("inspect", context_window=WINDOW)
    strategy = exported.value
    assert strategy.keep_tool_uses >= 10**6  # no tool-use edit: none is cleared
    assert strategy.keep_thinking_turns == ("all" if keep_turns is None else keep_turns)
    assert strategy.exclude_tools is None
    turns = [d for d in exported.dropped if d.startswith("clear_thinking's turns")]
    assert len(turns) == (keep_turns is not None)
    assert not [d for d in exported.dropped if d.startswith(("trigger_tool_uses", "keep with"))]


def test_inspects_native_compaction_for_an_absolute_trigger() -> None:
    from inspect_ai.model import CompactionNative

    exported = ContextConfig.preset("anthropic_compaction").export("inspect", context_window=WINDOW)
    assert isinstance(exported.value, CompactionNative)
    assert exported.value.threshold == 150_000
    assert exported.dropped == (
        "summary_schema, summary_template: the provider summarizes natively",
    )


@pytest.mark.parametrize("window", [None, WINDOW])
def test_inspects_summary_at_the_trigger_ratio(window: int | None) -> None:
    from inspect_ai.model import CompactionSummary

    config = ContextConfig.preset("ctxlab").merge(trigger_ratio=0.7)
    exported = config.export("inspect", context_window=window)
    assert isinstance(exported.value, CompactionSummary)
    assert exported.value.threshold == (0.7 if window is None else 140_000)
    assert exported.value.memory is False
    assert exported.dropped == (
        "compaction.prune: ctxlab prunes older tool output before it summarizes; Inspect "
        "summarizes it whole",
        "summary_schema, reserve_ratio: Inspect's summary has its own prompt",
        "flush_before_compact: ctxlab writes the span's facts to MEMORY.md itself; Inspect's "
        "memory option (off here) asks the model to save notes with its memory tool",
    )


def test_an_inspect_strategy_always_compacts_and_says_so() -> None:
    config = ContextConfig.preset("ctxlab").merge(
        compaction={"enabled": False, "trigger_tokens": 90_000, "flush_before_compact": False}
    )
    exported = config.export("inspect", context_window=WINDOW)
    # Compaction off: not the native compaction its trigger would export, a summary.
    assert type(exported.value).__name__ == "CompactionSummary"
    assert exported.value.threshold == int(0.8 * WINDOW)
    assert exported.dropped == (
        "summary_schema, reserve_ratio: Inspect's summary has its own prompt",
        "compaction.enabled=False: an Inspect strategy always compacts",
    )


# --- The Agents SDK --------------------------------------------------------------------------


def test_the_agents_sdk_export_of_every_setting_and_what_it_drops() -> None:
    exported = _everything().export("openai_agents")
    assert exported.target == "openai_agents"
    trimmer = exported.value.call_model_input_filter
    assert (
        trimmer.recent_turns,
        trimmer.max_output_chars,
        trimmer.preview_chars,
        set(trimmer.trimmable_tools),
    ) == (3, 800, 150, {"grep"})
    assert exported.value.model_settings.truncation == "auto"
    assert exported.dropped == (
        "compaction.mask: observation masking has no place in the Agents SDK",
        "tool_result_limit: the Agents SDK does not truncate tool results",
        "provider_edits.clear_tool_uses: Anthropic's edit (export 'anthropic')",
        "provider_edits.clear_thinking: Anthropic's edit (export 'anthropic')",
        "the summary compaction: the SDK compacts in a session — wrap yours in "
        "OpenAIResponsesCompactionSession(session_id, session)",
    )


def test_the_agents_sdk_export_of_nothing_in_force_is_an_empty_run_config() -> None:
    exported = ContextConfig.preset("ctxlab").merge(compaction={"enabled": False})
    run = exported.export("openai_agents")
    assert run.value.call_model_input_filter is None
    assert run.value.model_settings is None
    assert run.dropped == ()
    only_thinking = exported.merge(provider_edits=ProviderEdits(clear_thinking=ClearThinking()))
    assert only_thinking.export("openai_agents").dropped == (
        "provider_edits.clear_thinking: Anthropic's edit (export 'anthropic')",
    )
    truncating = exported.merge(provider_edits=ProviderEdits(openai_truncation=True))
    assert truncating.export("openai_agents").value.call_model_input_filter is None


# --- pydantic-ai -----------------------------------------------------------------------------


def test_pydantic_ai_settings_carry_the_clearing_beta_only_for_a_clearing_edit() -> None:
    clearing = ContextConfig.preset("anthropic_context_editing").export("pydantic_ai")
    assert clearing.target == "pydantic_ai"
    assert clearing.value["anthropic_betas"] == ["context-management-2025-06-27"]
    assert (
        clearing.value["anthropic_context_management"]
        == ContextConfig.preset("anthropic_context_editing").export("anthropic").value
    )
    for kind in ("clear_tool_uses", "clear_thinking"):
        edit = {"clear_tool_uses": ClearToolUses(), "clear_thinking": ClearThinking()}[kind]
        one = ContextConfig.preset("ctxlab").merge(provider_edits=ProviderEdits(**{kind: edit}))
        assert one.export("pydantic_ai").value["anthropic_betas"] == [
            "context-management-2025-06-27"
        ], kind
    compacting = ContextConfig.preset("anthropic_compaction").export("pydantic_ai")
    assert "anthropic_betas" not in compacting.value  # pydantic-ai adds the compaction beta


def test_pydantic_ai_names_its_history_processor_for_the_summary() -> None:
    config = ContextConfig.preset("ctxlab").merge(tool_result_limit=1_000)
    anthropic = config.export("anthropic").dropped
    dropped = config.export("pydantic_ai").dropped
    assert dropped == tuple(
        "the summary compaction: run ctxlab's in pydantic-ai as its history processor "
        "(ContextProcessor(ObservedSession(config=...)))"
        if d.startswith("the summary compaction")
        else d
        for d in anthropic
    )
    assert "tool_result_limit: the API does not truncate tool results" in dropped
    assert sum(d.startswith("the summary compaction") for d in anthropic) == 1


# --- Dispatch --------------------------------------------------------------------------------


def test_export_passes_the_window_and_names_the_targets() -> None:
    config = ContextConfig.preset("ctxlab").merge(trigger_ratio=0.5)
    assert config.export("inspect", context_window=100_000).value.threshold == 50_000
    with pytest.raises(UsageError) as caught:
        config.export("autogen")
    assert str(caught.value) == (
        "cannot export to 'autogen'; targets: anthropic, anthropic_loop, langchain, "
        "pydantic_ai, inspect, openai_agents"
    )
