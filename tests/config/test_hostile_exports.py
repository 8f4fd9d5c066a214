"""`ContextConfig.from_` and `export` on hostile values (issue 39's reproductions, then
generated ones): a value of the wrong type or range, a key the target does not know, a value the
target refuses — each a `UsageError` naming it; nothing coerced ("false" is not True, "bash" is
not four tool names); whatever `from_` accepts exports to something the SDK's types take and
reads back the same."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter

from ctxlab import ContextConfig
from ctxlab.config import ClearToolUses, ProviderEdits
from ctxlab.exceptions import UsageError
from tests.strategies import SETTINGS, json_value

TOOL_USES = "clear_tool_uses_20250919"
THINKING = "clear_thinking_20251015"
COMPACT = "compact_20260112"


def _one(edit: dict[str, Any]) -> dict[str, Any]:
    return {"edits": [edit]}


@pytest.mark.parametrize(
    ("value", "match"),
    [
        (_one({"type": TOOL_USES, "keep": {"type": "tool_uses", "value": -1}}), r"keep\.value"),
        (
            _one({"type": TOOL_USES, "trigger": {"type": "input_tokens", "value": math.nan}}),
            r"trigger\.value must be a whole number",
        ),
        (
            _one({"type": TOOL_USES, "trigger": {"type": "input_tokens", "value": "5000"}}),
            r"trigger\.value must be a whole number from 1, got '5000'",
        ),
        (
            _one({"type": TOOL_USES, "keep": {"type": "tool_uses", "value": True}}),
            r"keep\.value must be a whole number",
        ),
        (
            _one({"type": TOOL_USES, "clear_tool_inputs": "false"}),
            r"clear_tool_inputs must be a list of tool names",
        ),
        (_one({"type": TOOL_USES, "exclude_tools": "bash"}), r"exclude_tools must be a list"),
        (_one({"type": TOOL_USES, "exclude_tools": ["bash", 3]}), r"must hold tool names"),
        (_one({"type": TOOL_USES, "keeep": 3}), r"has no key 'keeep' \(did you mean 'keep'\?\)"),
        (
            _one({"type": TOOL_USES, "trigger": {"type": "input_tokens", "value": 9, "x": 1}}),
            r"trigger has no key 'x'",
        ),
        ({"edits": [], "beta": True}, r"context_management has no key 'beta'"),
        (_one({"type": THINKING, "keep": {"type": "thinking_turns", "value": 0}}), r"from 1"),
        (
            _one({"type": COMPACT, "trigger": {"type": "input_tokens", "value": 20_000}}),
            r"refuses a compaction trigger below 50,000",
        ),
        (_one({"type": COMPACT, "instructions": 7}), r"instructions must be a string"),
        (_one({"type": COMPACT, "pause_after_compaction": "yes"}), r"must be true or false"),
        (
            _one({"type": COMPACT, "pause_after_compaction": True}),
            r"pause_after_compaction=true has no ctxlab equivalent",
        ),
        (
            {"edits": [{"type": TOOL_USES}, {"type": THINKING}]},
            r"requires the thinking edit first",
        ),
        ({"edits": [{"type": TOOL_USES}, {"type": TOOL_USES}]}, r"a second clear_tool_uses"),
    ],
)
def test_what_the_api_would_refuse_is_refused_by_name(value: Any, match: str) -> None:
    with pytest.raises(UsageError, match=match):
        ContextConfig.from_(value)


def test_what_the_api_takes_is_read_not_dropped() -> None:
    instructions = "Keep every file path and the failing test's name."
    read = ContextConfig.from_(
        _one({"type": COMPACT, "instructions": instructions, "pause_after_compaction": False})
    )
    assert read.compression_prompt == instructions
    assert read.export("anthropic").value["edits"][0]["instructions"] == instructions
    inputs = ContextConfig.from_(_one({"type": TOOL_USES, "clear_tool_inputs": False}))
    assert inputs.provider_edits is not None and inputs.provider_edits.clear_tool_uses is not None
    assert inputs.provider_edits.clear_tool_uses.clear_tool_inputs is False


@pytest.mark.parametrize(
    ("model", "kept"),
    [
        ("claude-sonnet-4-6", None),
        ("claude-opus-4-5-20251101", None),
        ("claude-sonnet-4-5-20250929", 1),
        ("claude-haiku-4-5", 1),
        ("claude-opus-4-1", 1),
    ],
)
def test_no_thinking_edit_reads_as_the_models_own_default(model: str, kept: int | None) -> None:
    """The context-editing guide's table: Opus 4.5+ and Sonnet 4.6+ keep all prior thinking;
    Sonnet 4.5, Opus 4.1 and Haiku 4.5 and older keep only the last turn's."""
    read = ContextConfig.from_(_one({"type": TOOL_USES}), model=model)
    assert read.provider_edits is not None
    thinking = read.provider_edits.clear_thinking
    assert (thinking.keep_turns if thinking is not None else None) == kept


def test_one_trigger_as_the_api_takes() -> None:
    by_uses = ClearToolUses(trigger_tool_uses=6)
    assert by_uses.trigger_input_tokens is None
    config = ContextConfig(provider_edits=ProviderEdits(clear_tool_uses=by_uses))
    (edit,) = config.export("anthropic").value["edits"]
    assert edit["trigger"] == {"type": "tool_uses", "value": 6}
    with pytest.raises(ValueError, match="one trigger"):
        ClearToolUses(trigger_tool_uses=6, trigger_input_tokens=50_000)
    with pytest.raises(ValueError, match="needs a trigger"):
        ClearToolUses(trigger_input_tokens=None)


@pytest.mark.parametrize("window", [-1, 0, math.nan, "32000", True, 1e12])
def test_a_hostile_window_is_refused_by_export_and_from(window: Any) -> None:
    pytest.importorskip("inspect_ai", reason="the Inspect target is built with inspect_ai")
    config = ContextConfig.preset("ctxlab")
    with pytest.raises(UsageError, match="context_window must be a whole number"):
        config.export("inspect", context_window=window)
    with pytest.raises(UsageError, match="context_window must be a whole number"):
        ContextConfig.from_(_one({"type": TOOL_USES}), context_window=window)


def test_an_unknown_target_or_model_is_named() -> None:
    with pytest.raises(UsageError, match="targets: anthropic"):
        ContextConfig().export(["anthropic"])  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="model must be a model name"):
        ContextConfig.from_(_one({"type": TOOL_USES}), model=3)  # type: ignore[arg-type]


count = st.integers(-3, 300_000) | st.sampled_from([True, 1.5, math.nan, "7", None])
trigger = st.fixed_dictionaries(
    {"type": st.sampled_from(["input_tokens", "tool_uses", "tokens"]), "value": count}
)
tool_uses_edit = st.fixed_dictionaries(
    {"type": st.just(TOOL_USES)},
    optional={
        "trigger": trigger | json_value,
        "keep": st.fixed_dictionaries({"type": st.just("tool_uses"), "value": count}),
        "clear_at_least": st.fixed_dictionaries({"type": st.just("input_tokens"), "value": count}),
        "exclude_tools": st.lists(st.sampled_from(["bash", "read", ""]), max_size=3) | json_value,
        "clear_tool_inputs": st.booleans() | st.lists(st.sampled_from(["bash"])) | json_value,
    },
)
thinking_edit = st.fixed_dictionaries(
    {"type": st.just(THINKING)},
    optional={
        "keep": st.sampled_from(["all", {"type": "all"}])
        | st.fixed_dictionaries({"type": st.just("thinking_turns"), "value": count})
    },
)
compact_edit = st.fixed_dictionaries(
    {"type": st.just(COMPACT)},
    optional={
        "trigger": st.fixed_dictionaries({"type": st.just("input_tokens"), "value": count}),
        "instructions": st.text(max_size=20) | json_value,
        "pause_after_compaction": st.booleans() | json_value,
    },
)
edit = tool_uses_edit | thinking_edit | compact_edit | json_value
management = st.fixed_dictionaries({"edits": st.lists(edit, max_size=3)}) | json_value


@SETTINGS
@given(management, st.sampled_from([None, "claude-sonnet-4-5", "claude-opus-4-6"]))
def test_every_context_management_is_read_or_refused_and_what_is_read_goes_back(
    value: Any, model: str | None
) -> None:
    from anthropic.types.beta import BetaContextManagementConfigParam

    try:
        read = ContextConfig.from_(value, model=model)
    except UsageError as exc:
        assert str(exc).strip()
        return
    exported = read.export("anthropic")
    # The SDK's own type takes it, and reading it back (for the same model) is the same policy.
    TypeAdapter(BetaContextManagementConfigParam).validate_python(exported.value)
    again = ContextConfig.from_(exported.value, model=model)
    assert again.provider_edits == read.provider_edits
    assert again.compaction.trigger_tokens == read.compaction.trigger_tokens
    assert again.compression_prompt == read.compression_prompt
    # What was read was what was given: no edit the value did not hold.
    given_types = {e.get("type") for e in value["edits"]}
    assert {e["type"] for e in exported.value["edits"]} <= given_types | {THINKING}


@pytest.mark.parametrize("model", [5, "not-a-provider-model", object()])
def test_a_summarizer_langchain_cannot_use_is_named(model: Any) -> None:
    pytest.importorskip("langchain.agents", reason="the LangChain target is LangChain's middleware")
    with pytest.raises(UsageError, match="model must be the LangChain chat model"):
        ContextConfig.preset("langchain").export("langchain", model=model, context_window=32_000)


def test_a_framework_not_installed_is_an_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "agents", None)  # import agents → ModuleNotFoundError
    with pytest.raises(UsageError, match="pip install openai-agents"):
        ContextConfig.preset("openai_agents_trimmer").export("openai_agents")


@SETTINGS
@given(json_value, st.sampled_from(["anthropic", "langchain", "inspect", "crewai"]))
def test_anything_given_to_from_is_read_or_refused_with_a_usage_error(
    value: Any, target: str
) -> None:
    try:
        ContextConfig.from_(value, target, context_window=100_000)
    except UsageError as exc:
        assert str(exc).strip()


@pytest.mark.parametrize("instructions", ["", "   \n"])
def test_empty_compaction_instructions_are_a_usage_error_naming_the_key(instructions: str) -> None:
    # Found by the property above: an empty prompt was pydantic's ValidationError, not ctxlab's.
    value = {"edits": [{"type": "compact_20260112", "instructions": instructions}]}
    with pytest.raises(UsageError, match=r"edits\[0\]\.instructions is empty: give the summary"):
        ContextConfig.from_(value)
    # A prompt is read as the summary prompt.
    read = ContextConfig.from_(
        {"edits": [{"type": "compact_20260112", "instructions": "Keep the paths."}]}
    )
    assert read.compression_prompt == "Keep the paths."


def test_an_empty_list_of_tools_whose_inputs_clear_reads_as_none_and_goes_back() -> None:
    # Found by the property above: [] read as (), exported as nothing, read back as False.
    value = {"edits": [{"type": "clear_tool_uses_20250919", "clear_tool_inputs": []}]}
    read = ContextConfig.from_(value)
    assert read.provider_edits is not None and read.provider_edits.clear_tool_uses is not None
    assert read.provider_edits.clear_tool_uses.clear_tool_inputs is False
    again = ContextConfig.from_(read.export("anthropic").value)
    assert again.provider_edits == read.provider_edits
