"""`ContextConfig.from_(strategy, "inspect")` field by field, on Inspect AI's own strategies: a
`CompactionEdit` as Anthropic's two clears at its threshold (tokens, or a share of the window
given one), its kept uses, thinking turns and excluded tools; `CompactionNative` and
`CompactionSummary` at their thresholds; what has no equivalent refused, saying what to write."""

from __future__ import annotations

import pytest

from ctxlab import ContextConfig
from ctxlab.config import ClearThinking, ClearToolUses, ProviderEdits
from ctxlab.exceptions import UsageError

pytest.importorskip("inspect_ai")

from inspect_ai.model import (
    CompactionEdit,
    CompactionNative,
    CompactionSummary,
)


def test_a_compaction_edit_is_anthropics_two_clears_at_its_threshold() -> None:
    edit = CompactionEdit(
        threshold=30_000, keep_thinking_turns=2, keep_tool_uses=5, exclude_tools=["memory"]
    )
    read = ContextConfig.from_(edit, "inspect")
    assert read.provider_edits == ProviderEdits(
        clear_tool_uses=ClearToolUses(
            trigger_input_tokens=30_000, keep=5, exclude_tools=("memory",)
        ),
        clear_thinking=ClearThinking(keep_turns=2),
    )
    # Every thinking turn kept: no turn limit; a share of the window needs the window.
    kept = ContextConfig.from_(
        CompactionEdit(threshold=0.5, keep_thinking_turns="all"), "inspect", context_window=64_000
    )
    assert kept.provider_edits is not None
    assert kept.provider_edits.clear_thinking == ClearThinking(keep_turns=None)
    assert kept.provider_edits.clear_tool_uses is not None
    assert kept.provider_edits.clear_tool_uses.trigger_input_tokens == 32_000
    assert kept.provider_edits.clear_tool_uses.exclude_tools == ()
    with pytest.raises(
        UsageError,
        match=r"CompactionEdit\(threshold=0.5\) is a share of the window: pass context_window=",
    ):
        ContextConfig.from_(CompactionEdit(threshold=0.5), "inspect")
    with pytest.raises(
        UsageError,
        match=r"keep_tool_inputs=False\) has no ctxlab equivalent.*read it with keep_tool_inputs=True",
    ):
        ContextConfig.from_(CompactionEdit(threshold=30_000, keep_tool_inputs=False), "inspect")


def test_native_and_summary_strategies_at_their_thresholds() -> None:
    native = ContextConfig.from_(CompactionNative(threshold=0.7), "inspect")
    assert native.trigger_ratio == 0.7
    assert native.provider_edits == ContextConfig.preset("anthropic_compaction").provider_edits
    # A share above ctxlab's cap reads as the cap; a count of tokens as the token trigger.
    assert ContextConfig.from_(CompactionSummary(threshold=0.95), "inspect").trigger_ratio == 0.9
    summary = ContextConfig.from_(CompactionSummary(threshold=12_000), "inspect")
    assert summary.compaction.trigger_tokens == 12_000
    assert summary.trigger_ratio == ContextConfig.preset("ctxlab").trigger_ratio
    for bad in (0, 1.5, True):
        with pytest.raises(UsageError):
            ContextConfig.from_(CompactionSummary(threshold=bad), "inspect")
