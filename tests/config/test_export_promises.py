"""What the exports and ``from_`` promise, asserted on the value written or read: the Anthropic
export writes the trigger the user set (tool uses or tokens) and names a custom placeholder in
``dropped``; the Agents SDK export passes ``trimmable_tools`` to the SDK's trimmer, which then
leaves the other tools' outputs whole; an Inspect export of a thinking-only config clears no
tool result in Inspect; ``from_`` reads LangChain's fractional trigger as ``trigger_ratio`` and
``clear_thinking``'s ``keep: "all"`` as ``keep_turns=None``."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import ContextConfig
from ctxlab.config import ClearThinking, ClearToolUses, ProviderEdits, TrimToolOutputs
from ctxlab.exceptions import UsageError
from tests.config.histories import agents_outputs

DEFAULT_PLACEHOLDER = ClearToolUses().placeholder


def _clearing(edit: ClearToolUses, thinking: ClearThinking | None = None) -> ContextConfig:
    return ContextConfig.preset("anthropic_context_editing").merge(
        provider_edits=ProviderEdits(clear_tool_uses=edit, clear_thinking=thinking)
    )


def _tool_uses_edit(config: ContextConfig) -> dict[str, Any]:
    (edit,) = [
        e
        for e in config.export("anthropic").value["edits"]
        if e["type"] == "clear_tool_uses_20250919"
    ]
    return edit


def test_the_anthropic_export_writes_a_tool_use_trigger_the_user_set() -> None:
    config = _clearing(ClearToolUses(trigger_tool_uses=30, trigger_input_tokens=None, keep=4))
    assert _tool_uses_edit(config) == {
        "type": "clear_tool_uses_20250919",
        "keep": {"type": "tool_uses", "value": 4},
        "trigger": {"type": "tool_uses", "value": 30},
    }
    tokens = _clearing(ClearToolUses(trigger_input_tokens=45_000))
    assert _tool_uses_edit(tokens)["trigger"] == {"type": "input_tokens", "value": 45_000}


def test_a_custom_placeholder_is_named_in_dropped_and_the_default_is_not() -> None:
    custom = _clearing(ClearToolUses(placeholder="[gone]")).export("anthropic")
    assert [d for d in custom.dropped if "placeholder" in d] == [
        "provider_edits.clear_tool_uses.placeholder: the API writes its own"
    ]
    default = _clearing(ClearToolUses()).export("anthropic")
    assert not [d for d in default.dropped if "placeholder" in d]
    # The placeholder is not a field of the API's edit: it is never written into it.
    assert "placeholder" not in _tool_uses_edit(_clearing(ClearToolUses(placeholder="[gone]")))


edits = st.builds(
    lambda uses, tokens, keep, least, exclude, inputs, placeholder: ClearToolUses(
        trigger_tool_uses=uses,
        trigger_input_tokens=None if uses is not None else tokens,
        keep=keep,
        clear_at_least=least,
        exclude_tools=exclude,
        clear_tool_inputs=inputs,
        placeholder=placeholder,
    ),
    st.none() | st.integers(1, 500),
    st.integers(1, 1_000_000),
    st.integers(0, 50),
    st.integers(0, 100_000),
    st.lists(st.sampled_from(["memory", "bash", "read"]), max_size=2, unique=True).map(tuple),
    st.booleans()
    | st.lists(st.sampled_from(["bash", "grep"]), min_size=1, max_size=2, unique=True).map(tuple),
    st.sampled_from([DEFAULT_PLACEHOLDER, "[gone]", "(cleared)"]),
)


@settings(max_examples=80, deadline=None)
@given(edits)
def test_the_anthropic_export_writes_every_setting_and_reads_back(edit: ClearToolUses) -> None:
    config = _clearing(edit, ClearThinking(keep_turns=2))
    exported = config.export("anthropic")
    written = _tool_uses_edit(config)
    if edit.trigger_tool_uses is not None:
        assert written["trigger"] == {"type": "tool_uses", "value": edit.trigger_tool_uses}
    else:
        assert written["trigger"] == {"type": "input_tokens", "value": edit.trigger_input_tokens}
    assert written["keep"] == {"type": "tool_uses", "value": edit.keep}
    assert ("placeholder" in " ".join(exported.dropped)) == (
        edit.placeholder != DEFAULT_PLACEHOLDER
    )
    back = ContextConfig.from_(exported.value, "anthropic")
    assert back.provider_edits is not None
    assert back.provider_edits.clear_tool_uses == edit.model_copy(
        update={"placeholder": DEFAULT_PLACEHOLDER}
    )
    assert back.provider_edits.clear_thinking == ClearThinking(keep_turns=2)


def _agents_items(tools: list[str]) -> list[dict[str, Any]]:
    """The SDK's input items: the user, one long call per tool, then two more user turns."""
    items: list[dict[str, Any]] = [{"role": "user", "content": "Look around."}]
    for n, name in enumerate(tools):
        items.append(
            {
                "type": "function_call",
                "call_id": f"c{n}",
                "name": name,
                "arguments": "{}",
            }
        )
        items.append(
            {"type": "function_call_output", "call_id": f"c{n}", "output": f"{name} " + "x" * 900}
        )
    items += [{"role": "user", "content": "Next."}, {"role": "user", "content": "Last."}]
    return items


def test_the_agents_sdk_export_passes_trimmable_tools_to_the_sdks_trimmer() -> None:
    pytest.importorskip("agents", reason="the export is the Agents SDK's own run config")
    config = ContextConfig.preset("openai_agents_trimmer").merge(
        provider_edits=ProviderEdits(trim_tool_outputs=TrimToolOutputs(trimmable_tools=("grep",)))
    )
    trimmer = config.export("openai_agents").value.call_model_input_filter
    assert trimmer.trimmable_tools == frozenset({"grep"})
    outputs = agents_outputs(config, _agents_items(["read", "grep"]))
    # The SDK itself trims only the named tool's output; the other stays whole.
    assert outputs["c0"] == "read " + "x" * 900
    assert outputs["c1"].startswith("[Trimmed: grep output")
    # The control: with every tool trimmable, both are trimmed.
    every = ContextConfig.preset("openai_agents_trimmer").merge(
        provider_edits=ProviderEdits(trim_tool_outputs=TrimToolOutputs())
    )
    both = agents_outputs(every, _agents_items(["read", "grep"]))
    assert set(both) == {"c0", "c1"}
    assert all(output.startswith("[Trimmed") for output in both.values())


async def test_an_inspect_export_of_a_thinking_only_config_clears_no_tool_result() -> None:
    pytest.importorskip("inspect_ai", reason="the export is Inspect AI's own strategy")
    from inspect_ai.model import CompactionEdit, get_model

    from tests.config.test_export import _inspect_history

    config = ContextConfig.preset("anthropic_context_editing").merge(
        provider_edits=ProviderEdits(clear_thinking=ClearThinking(keep_turns=1))
    )
    strategy = config.export("inspect").value
    assert isinstance(strategy, CompactionEdit) and strategy.keep_thinking_turns == 1
    # Run in Inspect, past its threshold: every tool result stays.
    strategy.threshold = 10
    history = _inspect_history(12)
    edited, _ = await strategy.compact(get_model("mockllm/model"), history, [])
    results = [m.text for m in edited if m.role == "tool"]
    assert len(results) == 12 and all(r.startswith("chunk") for r in results)
    # The control: a tool-result clearing of the default keep (3) clears the nine older ones.
    clearing = _clearing(ClearToolUses(), ClearThinking(keep_turns=1)).export("inspect").value
    clearing.threshold = 10
    edited, _ = await clearing.compact(get_model("mockllm/model"), _inspect_history(12), [])
    kept = [m.text.startswith("chunk") for m in edited if m.role == "tool"]
    assert kept == [False] * 9 + [True] * 3


def _summarizing(trigger: Any) -> Any:
    from langchain.agents.middleware import SummarizationMiddleware
    from langchain_core.messages import AIMessage

    from tests.integrations.test_langchain import _Model

    # A fraction needs the model's profile (its window), as LangChain checks.
    model = _Model(
        messages=iter([AIMessage(content="s")]), sent=[], profile={"max_input_tokens": 200_000}
    )
    return SummarizationMiddleware(
        model, trigger=trigger, keep=("messages", 6), trim_tokens_to_summarize=None
    )


@settings(max_examples=25, deadline=None)
@given(st.floats(0.3, 0.9).map(lambda r: round(r, 3)))
def test_from_reads_langchains_fractional_trigger_as_trigger_ratio(fraction: float) -> None:
    pytest.importorskip("langchain.agents", reason="LangChain's own middleware is read")
    back = ContextConfig.from_([_summarizing(("fraction", fraction))], "langchain")
    assert back.trigger_ratio == fraction
    assert back.compaction.trigger_tokens is None and back.compaction.keep_messages == 6
    # Beside a token line, each is kept: the fraction as the ratio, the tokens as tokens.
    both = ContextConfig.from_(
        [_summarizing([("fraction", fraction), ("tokens", 50_000)])], "langchain"
    )
    # (LangChain summarizes at 50,000, ctxlab above its line: 49,999.)
    assert (both.trigger_ratio, both.compaction.trigger_tokens) == (fraction, 49_999)


@pytest.mark.parametrize("keep", ["all", {"type": "all"}])
def test_from_reads_clear_thinking_keep_all_as_keep_turns_none(keep: object) -> None:
    back = ContextConfig.from_(
        {"edits": [{"type": "clear_thinking_20251015", "keep": keep}]},
        "anthropic",
        model="claude-sonnet-4-5",  # a model whose default would keep only the last turn
    )
    assert back.provider_edits is not None
    assert back.provider_edits.clear_thinking == ClearThinking(keep_turns=None)
    # Exported again, it is "all" again; a count stays a count.
    assert back.export("anthropic").value["edits"][0] == {
        "type": "clear_thinking_20251015",
        "keep": "all",
    }
    two = ContextConfig.from_(
        {
            "edits": [
                {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 2}}
            ]
        }
    )
    assert two.provider_edits is not None
    assert two.provider_edits.clear_thinking == ClearThinking(keep_turns=2)


EDITING = ContextConfig.preset("anthropic_context_editing")
SERVER = ContextConfig.preset("anthropic_compaction")


def _server(**passes: Any) -> ContextConfig:
    return SERVER.merge(compaction={**SERVER.compaction.model_dump(), **passes})


@pytest.mark.parametrize(
    ("config", "named", "not_named"),
    [
        # No thinking edit: the model's default is said; with one, that it needs thinking on.
        (
            _clearing(ClearToolUses()),
            ["thinking: with no clear_thinking edit"],
            ["clear_thinking_"],
        ),
        (
            _clearing(ClearToolUses(), ClearThinking()),
            ["clear_thinking_20251015: the API takes it only with extended thinking on"],
            ["thinking: with no clear_thinking edit"],
        ),
        # The server's compaction: its minimum, what it keeps, what it counts.
        (_server(trigger_tokens=50_000), [], ["below 50,000", "keep_messages", "trigger_messages"]),
        (_server(trigger_tokens=49_999), ["compaction.trigger_tokens=49,999: the API refuses"], []),
        (_server(keep_messages=4), ["compaction.keep_messages=4: the server keeps"], []),
        (_server(trigger_messages=30), ["compaction.trigger_messages: the server's trigger"], []),
        # ctxlab's own passes the API has no place for.
        (
            EDITING.merge(compaction={"mask": {"keep_turns": 3}}),
            ["compaction.mask: observation masking has no place in the API"],
            [],
        ),
        (
            EDITING.merge(tool_result_limit=2_000),
            ["tool_result_limit: the API does not truncate tool results"],
            [],
        ),
        (
            EDITING.merge(provider_edits=ProviderEdits(trim_tool_outputs=TrimToolOutputs())),
            ["provider_edits.trim_tool_outputs: the Agents SDK's trimmer"],
            [],
        ),
        (
            EDITING.merge(provider_edits=ProviderEdits(openai_truncation=True)),
            ["provider_edits.openai_truncation: the OpenAI Responses API's"],
            [],
        ),
        (EDITING, [], ["compaction.mask", "tool_result_limit", "trim_tool_outputs"]),
    ],
)
def test_the_anthropic_export_names_what_it_cannot_express(
    config: ContextConfig, named: list[str], not_named: list[str]
) -> None:
    dropped = config.export("anthropic").dropped
    for words in named:
        assert any(d.startswith(words) for d in dropped), (words, dropped)
    for words in not_named:
        assert not any(words in d for d in dropped), (words, dropped)


def test_the_server_compaction_reads_back_into_its_preset() -> None:
    back = ContextConfig.from_(
        {
            "edits": [
                {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 50_000}}
            ]
        }
    )
    assert back.compaction == _server(trigger_tokens=50_000).compaction
    # At the minimum, not below it; a gate of 0 tokens is read as given.
    with pytest.raises(UsageError, match="below 50,000"):
        ContextConfig.from_(
            {
                "edits": [
                    {
                        "type": "compact_20260112",
                        "trigger": {"type": "input_tokens", "value": 49_999},
                    }
                ]
            }
        )
    zero = ContextConfig.from_(
        {
            "edits": [
                {
                    "type": "clear_tool_uses_20250919",
                    "clear_at_least": {"type": "input_tokens", "value": 0},
                }
            ]
        }
    )
    assert zero.provider_edits is not None and zero.provider_edits.clear_tool_uses is not None
    assert zero.provider_edits.clear_tool_uses.clear_at_least == 0


@pytest.mark.parametrize(
    ("model", "keep_turns"),
    [
        ("claude-3-7-sonnet-20250219", 1),
        ("claude-sonnet-4-5", 1),
        ("claude-haiku-4-5", 1),
        ("claude-opus-4-1", 1),
        ("claude-opus-4-5", None),
        ("claude-sonnet-4-6", None),
        # The guide's table as of the Claude 5 models: Haiku from 5.5, Fable and Mythos keep all.
        ("claude-haiku-5-5", None),
        ("claude-3-5-haiku-20241022", 1),
        ("claude-fable-5", None),
        ("claude-mythos-5", None),
    ],
)
def test_no_thinking_edit_reads_as_the_models_own_default(
    model: str, keep_turns: int | None
) -> None:
    back = ContextConfig.from_({"edits": [{"type": "clear_tool_uses_20250919"}]}, model=model)
    assert back.provider_edits is not None
    thinking = back.provider_edits.clear_thinking
    assert (thinking.keep_turns if thinking is not None else None) == keep_turns
    assert (thinking is None) == (keep_turns is None)
