"""A tuned config taken to Anthropic and back: ``export("anthropic")`` is a ``context_management``
that the anthropic SDK's own param type accepts and that the SDK sends (to the local Messages API
server, with the beta header), what it cannot express is named; ``from_`` reads one back into the
same policy, and bad input is a `UsageError` naming the edit."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter

from ctxlab import ContextConfig
from ctxlab.config import ClearThinking, ClearToolUses, ProviderEdits
from ctxlab.exceptions import UsageError

TUNED = ContextConfig.preset("anthropic_context_editing").merge(
    provider_edits=ProviderEdits(
        clear_tool_uses=ClearToolUses(
            trigger_input_tokens=60_000,
            keep=5,
            clear_at_least=12_000,
            exclude_tools=("memory",),
            clear_tool_inputs=("bash",),
        ),
        clear_thinking=ClearThinking(keep_turns=2),
    )
)


def test_the_export_is_the_sdks_context_management() -> None:
    from anthropic.types.beta import (
        BetaClearThinking20251015EditParam,
        BetaClearToolUses20250919EditParam,
    )

    exported = TUNED.export("anthropic")
    assert exported.value == {
        "edits": [
            {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 2}},
            {
                "type": "clear_tool_uses_20250919",
                "keep": {"type": "tool_uses", "value": 5},
                "trigger": {"type": "input_tokens", "value": 60_000},
                "clear_at_least": {"type": "input_tokens", "value": 12_000},
                "exclude_tools": ["memory"],
                "clear_tool_inputs": ["bash"],
            },
        ]
    }
    # The SDK's own types take each edit as it is (and would refuse a wrong shape).
    thinking, tool_uses = exported.value["edits"]
    TypeAdapter(BetaClearThinking20251015EditParam).validate_python(thinking)
    assert TypeAdapter(BetaClearToolUses20250919EditParam).validate_python(tool_uses) == tool_uses
    # ctxlab's own summary has no Anthropic edit: said, not lost.
    assert any(d.startswith("the summary compaction") for d in exported.dropped)


def test_the_sdk_sends_it_with_the_beta_header() -> None:
    import anthropic

    from tests.models.messages_api import MessagesAPI, message

    with MessagesAPI([message("ok")]) as api:
        client = anthropic.Anthropic(api_key="k", base_url=api.url, max_retries=0)
        client.beta.messages.create(
            model="claude-sonnet-4-6",
            max_tokens=10,
            messages=[{"role": "user", "content": "hi"}],
            context_management=TUNED.export("anthropic").value,
            betas=["context-management-2025-06-27"],
        )
    assert api.requests[0]["context_management"] == TUNED.export("anthropic").value
    assert "context-management-2025-06-27" in api.headers[0]["anthropic-beta"]


def test_from_reads_it_back_into_the_same_policy() -> None:
    back = ContextConfig.from_(TUNED.export("anthropic").value, "anthropic")
    assert back.provider_edits == TUNED.provider_edits
    assert back.export("anthropic").value == TUNED.export("anthropic").value
    # The API's defaults: just the edit types.
    defaults = ContextConfig.from_(
        {"edits": [{"type": "clear_thinking_20251015"}, {"type": "clear_tool_uses_20250919"}]}
    )
    assert defaults.provider_edits == ProviderEdits(
        clear_tool_uses=ClearToolUses(), clear_thinking=ClearThinking()
    )
    by_uses = ContextConfig.from_(
        {
            "edits": [
                {"type": "clear_tool_uses_20250919", "trigger": {"type": "tool_uses", "value": 30}}
            ]
        }
    )
    assert by_uses.provider_edits.clear_tool_uses.trigger_tool_uses == 30  # type: ignore[union-attr]
    assert by_uses.provider_edits.clear_tool_uses.trigger_input_tokens is None  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ([], r"is \{'edits'"),
        (
            {"edits": [{"type": "clear_everything"}]},
            r"edits\[0\]: unknown or unsupported edit 'clear_everything'",
        ),
        # A type that is no name (a list: unhashable) is refused the same way, never a TypeError.
        ({"edits": [{"type": []}]}, r"edits\[0\]: unknown or unsupported edit \[\]"),
        ({"edits": [{"type": "clear_tool_uses_20250919", "keep": 3}]}, r"edits\[0\]\.keep must be"),
    ],
)
def test_what_cannot_be_read_says_which_edit(value: object, match: str) -> None:
    with pytest.raises(UsageError, match=match):
        ContextConfig.from_(value)


def test_an_unknown_target_is_named() -> None:
    with pytest.raises(UsageError, match="targets: anthropic"):
        TUNED.export("crewai")


def test_the_langchain_export_is_middleware_that_runs() -> None:
    pytest.importorskip("langchain.agents")
    from langchain.agents import create_agent
    from langchain.agents.middleware import ContextEditingMiddleware, SummarizationMiddleware
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langchain_core.tools import tool

    from tests.integrations.test_langchain import _Model

    config = ContextConfig.preset("anthropic_context_editing").merge(
        provider_edits=ProviderEdits(
            clear_tool_uses=ClearToolUses(trigger_input_tokens=200, keep=1, placeholder="[gone]")
        )
    )
    summarizer = _Model(messages=iter([AIMessage(content="summary")]), sent=[])
    exported = config.export("langchain", model=summarizer, context_window=32_000)
    editing, summarizing = exported.value
    assert isinstance(editing, ContextEditingMiddleware)
    (edit,) = editing.edits
    assert (edit.trigger, edit.keep, edit.placeholder) == (200, 1, "[gone]")
    assert isinstance(summarizing, SummarizationMiddleware)
    # ctxlab's line at 32k is its input limit (27,360: below 0.9 of the window); LangChain
    # summarizes at its count, ctxlab above its line: one more.
    assert summarizing.trigger == ("tokens", 27_361)
    assert any("summary_schema" in d for d in exported.dropped)

    @tool
    def read(chunk: int) -> str:
        """Read a chunk."""
        return f"chunk {chunk}: " + "data " * 200

    replies = [
        AIMessage(content="", tool_calls=[{"id": f"c{n}", "name": "read", "args": {"chunk": n}}])
        for n in range(3)
    ]
    model = _Model(messages=iter([*replies, AIMessage(content="Done.")]), sent=[])
    agent = create_agent(model, [read], middleware=[editing])
    agent.invoke({"messages": [HumanMessage("Read it all.")]})
    # The last request: all results but the latest one cleared by LangChain's own middleware.
    results = [m.content for m in model.sent[-1] if isinstance(m, ToolMessage)]
    assert results[:-1] == ["[gone]", "[gone]"] and results[-1].startswith("chunk 2")
    # Without a summarizer, the summary is named as dropped rather than exported.
    alone = config.export("langchain")
    assert len(alone.value) == 1 and any("pass model=" in d for d in alone.dropped)


def test_the_servers_compaction_round_trips() -> None:
    config = ContextConfig.preset("anthropic_compaction")
    exported = config.export("anthropic")
    assert exported.value == {
        "edits": [
            {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 150_000}}
        ]
    }
    from anthropic.types.beta import BetaCompact20260112EditParam

    (edit,) = exported.value["edits"]
    assert TypeAdapter(BetaCompact20260112EditParam).validate_python(edit) == edit
    back = ContextConfig.from_(
        {
            "edits": [
                {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 80_000}}
            ]
        }
    )
    assert back.compaction.trigger_tokens == 80_000 and back.provider_edits is None
    assert (
        ContextConfig.from_({"edits": [{"type": "compact_20260112"}]}).compaction.trigger_tokens
        == 150_000
    )
    low = config.merge(compaction={**config.compaction.model_dump(), "trigger_tokens": 20_000})
    exported = low.export("anthropic")
    # The API refuses a trigger below 50,000: exported at the minimum, and said.
    assert exported.value["edits"][0]["trigger"] == {"type": "input_tokens", "value": 50_000}
    assert any("below 50,000; exported at 50,000" in d for d in exported.dropped)


async def test_the_pydantic_ai_export_is_model_settings_its_anthropic_model_sends() -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    from tests.models.messages_api import MessagesAPI, message

    exported = TUNED.export("pydantic_ai")
    assert exported.value == {
        "anthropic_context_management": TUNED.export("anthropic").value,
        "anthropic_betas": ["context-management-2025-06-27"],
    }
    assert any("ContextProcessor" in d for d in exported.dropped)
    with MessagesAPI([message("ok")]) as api:
        model = AnthropicModel(
            "claude-sonnet-4-6", provider=AnthropicProvider(api_key="k", base_url=api.url)
        )
        agent = Agent(model, model_settings=exported.value)
        assert (await agent.run("hi")).output == "ok"
    # pydantic-ai's own Anthropic model sent the edits as they are, with the clearing edits'
    # beta beside the compaction beta it adds of its own.
    assert api.requests[0]["context_management"] == TUNED.export("anthropic").value
    betas = set(api.headers[0]["anthropic-beta"].split(","))
    assert "context-management-2025-06-27" in betas


def test_langchain_middleware_reads_back_into_the_same_policy() -> None:
    pytest.importorskip("langchain.agents")
    from langchain_core.messages import AIMessage

    from tests.integrations.test_langchain import _Model

    config = ContextConfig.preset("langchain").merge(
        trigger_ratio=0.7,
        compaction={"keep_messages": 12, "prune": None, "flush_before_compact": False},
        provider_edits=ProviderEdits(
            clear_tool_uses=ClearToolUses(
                trigger_input_tokens=50_000, keep=2, exclude_tools=("memory",)
            )
        ),
    )
    summarizer = _Model(messages=iter([AIMessage(content="s")]), sent=[])
    middleware = config.export("langchain", model=summarizer, context_window=200_000).value
    back = ContextConfig.from_(middleware, "langchain")
    assert back.provider_edits == config.provider_edits
    # A token trigger reads back as an absolute one: 0.7 of the 200k window it was made for.
    assert (back.compaction.trigger_tokens, back.compaction.keep_messages) == (140_000, 12)
    with pytest.raises(UsageError, match="middleware 0: str has no ctxlab equivalent"):
        ContextConfig.from_(["not middleware"], "langchain")
    with pytest.raises(UsageError, match="readable: anthropic, langchain, inspect"):
        ContextConfig.from_({}, "google_adk")
    with pytest.raises(UsageError, match="strategy has a numeric threshold"):
        ContextConfig.from_({}, "inspect")


def _inspect_history(calls: int) -> list[object]:
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser
    from inspect_ai.tool import ToolCall

    history: list[object] = [ChatMessageUser(content="Read it all.")]
    for n in range(calls):
        call = ToolCall(id=f"c{n}", function="read", arguments={"n": n})
        history.append(ChatMessageAssistant(content="", tool_calls=[call]))
        history.append(
            ChatMessageTool(
                content=f"chunk {n} " + "data " * 50, tool_call_id=f"c{n}", function="read"
            )
        )
    return history


async def test_the_inspect_export_is_a_compaction_strategy_inspect_runs() -> None:
    pytest.importorskip("inspect_ai")
    from inspect_ai.model import CompactionEdit, get_model

    exported = TUNED.export("inspect")
    strategy = exported.value
    assert isinstance(strategy, CompactionEdit)
    assert (strategy.threshold, strategy.keep_tool_uses, strategy.keep_thinking_turns) == (
        60_000,
        5,
        2,
    )
    assert strategy.exclude_tools == ["memory"]
    # What Inspect cannot say is named: the gate, and inputs cleared by tool name.
    assert any(d.startswith("clear_at_least") for d in exported.dropped)
    assert any(d.startswith("clear_tool_inputs") for d in exported.dropped)
    # Inspect's own code, run on its own messages, keeps the latest 5 results whole.
    edited, _ = await strategy.compact(get_model("mockllm/model"), _inspect_history(7), [])
    results = [m.text for m in edited if m.role == "tool"]
    assert [r.startswith("chunk") for r in results] == [False, False, True, True, True, True, True]


def test_inspect_strategies_read_back() -> None:
    pytest.importorskip("inspect_ai")
    from inspect_ai.model import CompactionEdit, CompactionNative, CompactionSummary, CompactionTrim

    back = ContextConfig.from_(TUNED.export("inspect").value, "inspect")
    assert back.provider_edits is not None and back.provider_edits.clear_tool_uses is not None
    clear = back.provider_edits.clear_tool_uses
    assert (clear.trigger_input_tokens, clear.keep, clear.exclude_tools) == (60_000, 5, ("memory",))
    assert back.provider_edits.clear_thinking == ClearThinking(keep_turns=2)
    # A share of the window needs the window to become the clearing's token trigger.
    with pytest.raises(UsageError, match="pass context_window="):
        ContextConfig.from_(CompactionEdit(), "inspect")
    edit = ContextConfig.from_(CompactionEdit(), "inspect", context_window=200_000).provider_edits
    assert edit is not None and edit.clear_tool_uses is not None
    assert edit.clear_tool_uses.trigger_input_tokens == 180_000
    native = ContextConfig.from_(CompactionNative(threshold=120_000), "inspect")
    assert native.compaction.trigger_tokens == 120_000
    assert native.export("inspect").value.threshold == 120_000
    assert ContextConfig.from_(CompactionSummary(threshold=0.7), "inspect").trigger_ratio == 0.7
    with pytest.raises(UsageError, match="CompactionTrim has no ctxlab equivalent"):
        ContextConfig.from_(CompactionTrim(), "inspect")


def test_the_openai_agents_export_is_a_run_config_with_the_sdks_trimmer() -> None:
    pytest.importorskip("agents")
    from agents import RunConfig
    from agents.extensions.tool_output_trimmer import ToolOutputTrimmer

    from ctxlab.config import TrimToolOutputs

    config = ContextConfig.preset("openai_agents_trimmer").merge(
        provider_edits=ProviderEdits(
            trim_tool_outputs=TrimToolOutputs(recent_turns=3, max_output_chars=800),
            openai_truncation=True,
        )
    )
    exported = config.export("openai_agents")
    run = exported.value
    assert isinstance(run, RunConfig)
    trimmer = run.call_model_input_filter
    assert isinstance(trimmer, ToolOutputTrimmer)
    assert (trimmer.recent_turns, trimmer.max_output_chars, trimmer.preview_chars) == (3, 800, 200)
    assert run.model_settings is not None and run.model_settings.truncation == "auto"
    assert any("OpenAIResponsesCompactionSession" in d for d in exported.dropped)
    # Anthropic's edits are not the SDK's: named, not exported.
    anthropic = ContextConfig.preset("anthropic_context_editing").export("openai_agents")
    assert anthropic.value.call_model_input_filter is None
    assert any(d.startswith("provider_edits.clear_tool_uses") for d in anthropic.dropped)
