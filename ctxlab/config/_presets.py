"""Named starting points for `ContextConfig`, each taken from a public source it cites.

`ContextConfig.preset(name)` returns one; `PRESETS` lists them. They are approximations where a
source's policy is not ctxlab's: each docstring says what maps to what.
"""

from __future__ import annotations

from collections.abc import Callable

from ctxlab.config._config import PRESET_FACTORIES, ContextConfig
from ctxlab.config._harness_presets import HARNESS_PRESETS
from ctxlab.config._sections import (
    ClearThinking,
    ClearToolUses,
    CompactionPasses,
    MaskConfig,
    ProviderEdits,
    ToolResultEviction,
    TrimToolOutputs,
)

__all__ = ["PRESETS", "describe_config", "preset"]


def _ctxlab() -> ContextConfig:
    """ctxlab's defaults: AgentScope's ratios (trigger 0.8, reserve 0.1) with the reference
    harness's light passes (pruning older tool output within compaction, offloading results
    over 80,000 characters) and the extractive summary kept within the reserve."""

    return ContextConfig()


def _agentscope() -> ContextConfig:
    """AgentScope's Python defaults, from its "Compress Context" documentation (reference 002):
    ``trigger_ratio=0.8``, ``reserve_ratio=0.1``, ``tool_result_limit=3000``,
    ``max_image_num=5``, ``context_buffer_ratio=0.2``, no compression tool, fallback to
    truncation. AgentScope has no pruning pass and no offloading: both are off here."""

    return ContextConfig(
        trigger_ratio=0.8,
        reserve_ratio=0.1,
        tool_result_limit=3000,
        max_image_num=5,
        context_buffer_ratio=0.2,
        compaction=CompactionPasses(prune=None, flush_before_compact=False),
        tool_result_eviction=ToolResultEviction(enabled=False),
    )


def _harness() -> ContextConfig:
    """The reference Java harness's defaults (reference 000, "Budget and compaction
    defaults"): compaction at 50 messages or at the conversation's token allowance (the input
    limit: ``trigger_ratio`` at its 0.9 cap), a tail of about a quarter of the allowance
    (``reserve_ratio=0.2``; the harness bounds it to 2,000–8,000 tokens), pruning of older tool
    output (40,000 protected, 20,000 prunable, 2,000-character previews), offloading of results
    over 80,000 characters, ``flushBeforeCompact`` on."""

    return ContextConfig(
        trigger_ratio=0.9,
        reserve_ratio=0.2,
        compaction=CompactionPasses(trigger_messages=50),
    )


def _langchain() -> ContextConfig:
    """LangChain's ``SummarizationMiddleware`` (langchain 1.x, ``agents/middleware/
    summarization.py``): keeps the latest 20 messages (``keep=("messages", 20)``, its default)
    and triggers at 80 % of the model's input tokens (``trigger=("fraction", 0.8)``, the
    example of its docstring: it has no trigger by default). No pruning, no offloading."""

    return ContextConfig(
        trigger_ratio=0.8,
        compaction=CompactionPasses(keep_messages=20, prune=None, flush_before_compact=False),
        tool_result_eviction=ToolResultEviction(enabled=False),
    )


MASK_CLEAR_AT_LEAST = 8_000
"""Tokens the observation-masking preset clears at once (Anthropic's ``clear_at_least``): a
clear rewrites the cached prefix after it, so masking one output per step would rewrite the
cache at every step; batches of this size let the cache hold between clears."""


def _observation_masking() -> ContextConfig:
    """Observation masking (Lindenbauer et al., "The Complexity Trap: Simple Observation
    Masking Is as Efficient as LLM Summarization for Agent Context Management", JetBrains,
    arXiv 2508.21433): tool outputs older than the latest 10 turns become a placeholder at every
    request — in batches of at least `MASK_CLEAR_AT_LEAST` tokens, so that a prompt cache holds
    between clears — nothing is summarized; the paper found it halves cost and matches LLM
    summarization on SWE-bench agents. A summary remains only as the last resort at the 0.9
    cap, so that a session never overflows."""

    return ContextConfig(
        trigger_ratio=0.9,
        compaction=CompactionPasses(
            mask=MaskConfig(keep_turns=10, clear_at_least=MASK_CLEAR_AT_LEAST), prune=None
        ),
    )


def _anthropic_context_editing() -> ContextConfig:
    """Anthropic's server-side context editing as the API applies it by default (Messages API
    beta ``context-management-2025-06-27``, read from anthropic 2.14.0 and the context-editing
    guide): ``clear_tool_uses_20250919`` with its defaults (past 100,000 input tokens, the results
    of all but the latest 3 tool uses cleared) and ``clear_thinking_20251015`` (the latest turn's
    thinking kept), applied to what is sent. The provider does not summarize, so a summary
    remains only as the last resort at the 0.9 cap, so that a session never overflows."""

    return ContextConfig(
        trigger_ratio=0.9,
        compaction=CompactionPasses(prune=None),
        provider_edits=ProviderEdits(
            clear_tool_uses=ClearToolUses(), clear_thinking=ClearThinking()
        ),
    )


ANTHROPIC_COMPACTION_TRIGGER = 150_000
"""``compact_20260112``'s default trigger, in input tokens (its minimum is 50,000)."""


def _anthropic_compaction() -> ContextConfig:
    """Anthropic's server-side compaction, ``compact_20260112`` (Messages API beta
    ``compact-2026-01-12``, read from anthropic 2.14.0's ``beta_compact_20260112_edit_param.py``):
    past 150,000 input tokens the server summarizes the conversation into a compaction block and
    drops everything before it — so here everything but the latest turn (which the pipeline
    always keeps whole) is summarized at that line (or at 0.9 of a smaller window). The
    server's summary is opaque: ctxlab's offline summarizer stands in for it, so costs follow
    the server's shape and retention is ctxlab's."""

    return ContextConfig(
        trigger_ratio=0.9,
        compaction=CompactionPasses(
            trigger_tokens=ANTHROPIC_COMPACTION_TRIGGER,
            keep_messages=1,
            prune=None,
            flush_before_compact=False,
        ),
        tool_result_eviction=ToolResultEviction(enabled=False),
    )


def _openai_agents_trimmer() -> ContextConfig:
    """The OpenAI Agents SDK's ``ToolOutputTrimmer`` with its defaults (openai-agents 0.24.0,
    read from ``agents/extensions/tool_output_trimmer.py``: outputs over 500 characters before
    the 2nd user message from the end cut to a 200-character preview), as a run's
    ``call_model_input_filter`` applies it before each model call. The SDK does not summarize,
    so a summary remains only as the last resort at the 0.9 cap."""

    return ContextConfig(
        trigger_ratio=0.9,
        compaction=CompactionPasses(prune=None),
        provider_edits=ProviderEdits(trim_tool_outputs=TrimToolOutputs()),
    )


def _openai_truncation() -> ContextConfig:
    """The OpenAI Responses API's ``truncation: "auto"`` (openai 3.57.0, read from
    ``types/responses/response_create_params.py``): nothing is summarized; a request over the
    model's input limit drops items from the beginning of the conversation until it fits. ctxlab
    drops whole turns (no result without its call) and never from the working state, as the API
    applies it to each request it is sent."""

    return ContextConfig(
        compaction=CompactionPasses(enabled=False, prune=None, flush_before_compact=False),
        tool_result_eviction=ToolResultEviction(enabled=False),
        provider_edits=ProviderEdits(openai_truncation=True),
    )


def _openai_compaction() -> ContextConfig:
    """The OpenAI Responses API's server-side compaction (``context_management: [{"type":
    "compaction", "compact_threshold": N}]``, and ``POST /responses/compact``; read from openai
    3.57.0's ``types/responses/response_create_params.py`` and ``compacted_response.py``): past the
    threshold the server replaces the conversation with "all user messages, followed by a
    single compaction item" — so here every user message of the compacted span is pinned
    verbatim beside the summary (``pin_user_messages``) and only the latest turn stays whole.
    The compaction item is encrypted: ctxlab's offline summarizer stands in for it, so costs
    follow the server's shape and retention is ctxlab's. The SDK states no default threshold:
    the trigger is 0.9 of the window until ``compaction.trigger_tokens`` says your
    ``compact_threshold``."""

    return ContextConfig(
        trigger_ratio=0.9,
        compaction=CompactionPasses(
            keep_messages=1, prune=None, flush_before_compact=False, pin_user_messages=True
        ),
        tool_result_eviction=ToolResultEviction(enabled=False),
    )


PRESETS: dict[str, Callable[[], ContextConfig]] = {
    "ctxlab": _ctxlab,
    "agentscope": _agentscope,
    "harness": _harness,
    "langchain": _langchain,
    "observation_masking": _observation_masking,
    "anthropic_context_editing": _anthropic_context_editing,
    "anthropic_compaction": _anthropic_compaction,
    "openai_agents_trimmer": _openai_agents_trimmer,
    "openai_truncation": _openai_truncation,
    "openai_compaction": _openai_compaction,
    **HARNESS_PRESETS,
}
"""Preset name → factory; each factory's docstring cites its source."""
PRESET_FACTORIES.update(PRESETS)  # what ContextConfig.preset reads


def preset(name: str) -> ContextConfig:
    """The config named ``name`` (one of `PRESETS`)."""
    factory = PRESETS.get(name)
    if factory is None:
        msg = f"no preset {name!r}; choose one of {', '.join(PRESETS)}"
        raise ValueError(msg)
    return factory()


SHOWN_CHANGES = 4
"""Changed fields `describe_config` names before it counts the rest."""


def describe_config(config: ContextConfig) -> str:
    """``config`` in a few words, for a view's label: ``the defaults``, ``the preset
    'agentscope'``, or the fields that differ from the defaults (``trigger_ratio 0.6,
    reserve_ratio 0.2``; a changed section by its name)."""
    default = type(config)()
    if config == default:
        return "the defaults"
    for name, make in PRESETS.items():
        if make() == config:
            return f"the preset {name!r}"
    # A number or a short word by its value; a section, a schema or a prompt by its name.
    changed = [
        f"{name} {value}"
        if isinstance(value, int | float | bool) or (isinstance(value, str) and len(value) <= 24)
        else name
        for name in type(config).model_fields
        if (value := getattr(config, name)) != getattr(default, name)
    ]
    more = len(changed) - SHOWN_CHANGES
    return ", ".join(changed[:SHOWN_CHANGES]) + (f" and {more} more" if more > 0 else "")
