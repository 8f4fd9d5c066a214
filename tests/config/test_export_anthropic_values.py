"""The Anthropic export, value by value: the ``context_management`` written for every setting at
once and its ``dropped`` exactly (each entry with its numbers); the server's compaction at its
trigger (raised to the API's minimum, said), its ``instructions`` only for a prompt of the user's
own; what the other targets' passes are named as, and ``compaction.prune`` named only where a
summary is exported whole (LangChain; Inspect when no clearing is exported instead)."""

from __future__ import annotations

from typing import Any

import pytest

from ctxlab import ContextConfig
from ctxlab.config import ClearThinking, ClearToolUses, ProviderEdits, TrimToolOutputs
from ctxlab.config._export import COMPACT_MINIMUM, NO_THINKING_EDIT, THINKING_NEEDS_THINKING

SERVER_SAYS = "summary_schema, summary_template: the server summarizes in its own words"
CLIENT_SUMMARY = (
    "the summary compaction (trigger_ratio, summary_schema): ctxlab's, client-side; set "
    "compaction.trigger_tokens to export it as the server's compact_20260112"
)


def _everything(**compaction: Any) -> ContextConfig:
    return ContextConfig.preset("ctxlab").merge(
        tool_result_limit=1_000,
        compression_prompt="Mine.",
        compaction={
            "trigger_tokens": 20_000,
            "keep_messages": 4,
            "trigger_messages": 30,
            "mask": {"keep_turns": 3},
            **compaction,
        },
        provider_edits=ProviderEdits(
            clear_tool_uses=ClearToolUses(keep=2, placeholder="[gone]"),
            clear_thinking=ClearThinking(keep_turns=None),
            trim_tool_outputs=TrimToolOutputs(),
            openai_truncation=True,
        ),
    )


def test_the_anthropic_export_of_every_setting_and_what_it_drops() -> None:
    exported = _everything().export("anthropic")
    assert exported.target == "anthropic"
    assert exported.value == {
        "edits": [
            {"type": "clear_thinking_20251015", "keep": "all"},
            {
                "type": "clear_tool_uses_20250919",
                "keep": {"type": "tool_uses", "value": 2},
                "trigger": {"type": "input_tokens", "value": 100_000},
            },
            {
                "type": "compact_20260112",
                "trigger": {"type": "input_tokens", "value": COMPACT_MINIMUM},
                "instructions": "Mine.",
            },
        ]
    }
    assert exported.dropped == (
        THINKING_NEEDS_THINKING,
        "provider_edits.clear_tool_uses.placeholder: the API writes its own",
        "compaction.mask: observation masking has no place in the API",
        "tool_result_limit: the API does not truncate tool results",
        "provider_edits.trim_tool_outputs: the Agents SDK's trimmer (export 'openai_agents')",
        "provider_edits.openai_truncation: the OpenAI Responses API's (export 'openai_agents')",
        "compaction.trigger_tokens=20,000: the API refuses a compaction trigger below 50,000; "
        "exported at 50,000",
        SERVER_SAYS,
        "compaction.keep_messages=4: the server keeps nothing before its compaction block but "
        "the turn it answers",
        "compaction.trigger_messages: the server's trigger counts tokens",
    )


@pytest.mark.parametrize("trigger", [COMPACT_MINIMUM, 120_000])
@pytest.mark.parametrize("keep_messages", [None, 1])
def test_the_servers_compaction_at_its_trigger_says_only_its_own_words(
    trigger: int, keep_messages: int | None
) -> None:
    config = ContextConfig.preset("ctxlab").merge(
        compaction={"trigger_tokens": trigger, "keep_messages": keep_messages}
    )
    exported = config.export("anthropic")
    # The default compression prompt is the server's business: no instructions are sent.
    assert exported.value == {
        "edits": [
            {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": trigger}}
        ]
    }
    assert exported.dropped == (SERVER_SAYS,)


def test_the_client_side_summary_is_named_and_nothing_is_sent_for_it() -> None:
    exported = ContextConfig.preset("ctxlab").export("anthropic")
    assert exported.value == {"edits": []}
    assert exported.dropped == (CLIENT_SUMMARY,)
    off = ContextConfig.preset("ctxlab").merge(compaction={"enabled": False, "trigger_tokens": 9})
    assert (off.export("anthropic").value, off.export("anthropic").dropped) == ({"edits": []}, ())


def test_a_tool_use_edit_without_a_thinking_edit_names_the_models_default() -> None:
    config = ContextConfig.preset("ctxlab").merge(
        compaction={"enabled": False},
        provider_edits=ProviderEdits(clear_tool_uses=ClearToolUses()),
    )
    assert config.export("anthropic").dropped == (NO_THINKING_EDIT,)
    thinking = config.merge(
        provider_edits=ProviderEdits(clear_thinking=ClearThinking(keep_turns=3))
    ).export("anthropic")
    assert thinking.value == {
        "edits": [
            {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 3}}
        ]
    }
    assert thinking.dropped == (THINKING_NEEDS_THINKING,)


PRUNE = "compaction.prune: ctxlab prunes older tool output before it summarizes"


@pytest.mark.parametrize(
    ("target", "edits", "named"),
    [
        ("anthropic", {}, False),  # the server's summary or none: nothing pruned either way
        ("pydantic_ai", {}, False),
        ("openai_agents", {}, False),
        ("langchain", {}, True),
        ("langchain", {"clear_tool_uses": ClearToolUses()}, True),  # LangChain exports both
        ("inspect", {}, True),  # Inspect's summary
        ("inspect", {"clear_thinking": ClearThinking()}, False),  # Inspect's edit instead
        ("inspect", {"clear_tool_uses": ClearToolUses()}, False),
    ],
)
def test_pruning_is_named_where_a_summary_is_exported_whole(
    target: str, edits: dict[str, Any], named: bool
) -> None:
    pytest.importorskip("langchain.agents", reason="the LangChain target builds its middleware")
    pytest.importorskip("inspect_ai", reason="the Inspect target builds its strategy")
    pytest.importorskip("agents", reason="the Agents SDK target builds its run config")
    pytest.importorskip("pydantic_ai", reason="the pydantic-ai target builds its settings")
    from tests.config.test_export_framework_values import _summarizer

    config = ContextConfig.preset("ctxlab").merge(provider_edits=ProviderEdits(**edits))
    assert config.compaction.prune is not None
    options: dict[str, Any] = {"model": _summarizer(), "context_window": 200_000}
    dropped = config.export(target, **options).dropped
    assert [d for d in dropped if d.startswith(PRUNE)] == (
        [f"{PRUNE}; {'LangChain' if target == 'langchain' else 'Inspect'} summarizes it whole"]
        if named
        else []
    )
    # Without pruning, never named; nor when the compaction is off.
    for other in (
        config.merge(compaction={"prune": None}),
        config.merge(compaction={"enabled": False}),
    ):
        assert not [d for d in other.export(target, **options).dropped if d.startswith(PRUNE)]
