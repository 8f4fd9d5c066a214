"""A tuned `ContextConfig` taken to where it runs, and back: ``config.export("anthropic")`` is the
Messages API's ``context_management`` (typed as anthropic 2.14.0's
``BetaContextManagementConfigParam``); ``ContextConfig.from_(value, "anthropic")`` reads one into
the nearest ctxlab config (`ctxlab.config._import`), so a user can replay what they run today.
The frameworks' targets are in `ctxlab.config._export_frameworks`. What a target cannot express
is named in `Exported.dropped`, never lost silently.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ctxlab.config._sections import ClearToolUses

if TYPE_CHECKING:
    from ctxlab.config._config import ContextConfig

__all__ = ["COMPACT_MINIMUM", "TARGETS", "Exported", "anthropic_edits", "unexported"]

TARGETS = ("anthropic", "anthropic_loop", "langchain", "pydantic_ai", "inspect", "openai_agents")

"""What `ContextConfig.export` knows."""

COMPACT_MINIMUM = 50_000
"""The lowest trigger ``compact_20260112`` takes, in input tokens."""


@dataclass(frozen=True)
class Exported:
    """A config in a target's terms."""

    target: str
    value: Any
    """What the target takes (for ``"anthropic"``: the ``context_management`` parameter)."""
    dropped: tuple[str, ...] = ()
    """ctxlab settings in force that the target cannot express, each with why."""


NO_THINKING_EDIT = (
    "thinking: with no clear_thinking edit the API applies its model's default — Claude Opus "
    "4.5+, Sonnet 4.6+, Haiku 5.5+, Fable and Mythos keep every turn's thinking, as ctxlab does "
    "here; Sonnet 4.5, Opus 4.1 and Haiku 4.5 and older keep only the last turn's (set "
    "provider_edits.clear_thinking, with thinking on, to say which)"
)
THINKING_NEEDS_THINKING = (
    "clear_thinking_20251015: the API takes it only with extended thinking on (thinking "
    "enabled or adaptive) and refuses the request otherwise"
)


def _tool_uses_edit(edit: ClearToolUses) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "clear_tool_uses_20250919",
        "keep": {"type": "tool_uses", "value": edit.keep},
    }
    # One trigger, as the API takes (ClearToolUses holds exactly one).
    if edit.trigger_tool_uses is not None:
        out["trigger"] = {"type": "tool_uses", "value": edit.trigger_tool_uses}
    elif edit.trigger_input_tokens is not None:
        out["trigger"] = {"type": "input_tokens", "value": edit.trigger_input_tokens}
    if edit.clear_at_least:
        out["clear_at_least"] = {"type": "input_tokens", "value": edit.clear_at_least}
    if edit.exclude_tools:
        out["exclude_tools"] = list(edit.exclude_tools)
    if edit.clear_tool_inputs:
        inputs = edit.clear_tool_inputs
        out["clear_tool_inputs"] = list(inputs) if isinstance(inputs, tuple) else True
    return out


def anthropic_edits(config: ContextConfig) -> Exported:
    """The Messages API's ``context_management`` for ``config``."""
    edits: list[dict[str, Any]] = []
    dropped: list[str] = []
    provider = config.provider_edits
    if provider is not None and provider.clear_thinking is not None:
        keep = provider.clear_thinking.keep_turns
        value: Any = "all" if keep is None else {"type": "thinking_turns", "value": keep}
        # The API requires the thinking edit first when both are given.
        edits.append({"type": "clear_thinking_20251015", "keep": value})
        dropped.append(THINKING_NEEDS_THINKING)
    if provider is not None and provider.clear_tool_uses is not None:
        edits.append(_tool_uses_edit(provider.clear_tool_uses))
        if provider.clear_tool_uses.placeholder != ClearToolUses().placeholder:
            dropped.append("provider_edits.clear_tool_uses.placeholder: the API writes its own")
        if provider.clear_thinking is None:
            dropped.append(NO_THINKING_EDIT)
    reference = type(config)()
    dropped.extend(unexported(config, "anthropic"))
    if config.on_demand is not None:
        dropped.append(
            "on_demand: the application asks for the summary, not context_management (export "
            "'anthropic_loop' for the SDK loop that does)"
        )
    trigger = config.compaction.trigger_tokens
    if config.compaction.enabled and trigger is not None:
        # An absolute trigger is what the server's compaction has: the summary moves there.
        if trigger < COMPACT_MINIMUM:
            dropped.append(
                f"compaction.trigger_tokens={trigger:,}: the API refuses a compaction trigger "
                f"below {COMPACT_MINIMUM:,}; exported at {COMPACT_MINIMUM:,}"
            )
            trigger = COMPACT_MINIMUM
        compact: dict[str, Any] = {
            "type": "compact_20260112",
            "trigger": {"type": "input_tokens", "value": trigger},
        }
        if config.compression_prompt != reference.compression_prompt:
            # The server's summary prompt, replaced by ctxlab's own wording.
            compact["instructions"] = config.compression_prompt
        edits.append(compact)
        dropped.append("summary_schema, summary_template: the server summarizes in its own words")
        if config.compaction.keep_messages not in (None, 1):
            dropped.append(
                f"compaction.keep_messages={config.compaction.keep_messages}: the server keeps "
                "nothing before its compaction block but the turn it answers"
            )
        if config.compaction.trigger_messages is not None:
            dropped.append("compaction.trigger_messages: the server's trigger counts tokens")
    elif config.compaction.enabled:
        dropped.append(
            "the summary compaction (trigger_ratio, summary_schema): ctxlab's, client-side; set "
            "compaction.trigger_tokens to export it as the server's compact_20260112"
        )
    return Exported("anthropic", {"edits": edits}, tuple(dropped))


def unexported(config: ContextConfig, target: str) -> list[str]:
    """ctxlab's passes in force in ``config`` that ``target`` has no place for, each with
    why: observation masking, compacting while idle, the tool-result limit, pruning before a
    summary, and the other providers' edits."""
    reference = type(config)()
    where = _WHERE[target]
    out: list[str] = []
    if config.compaction.mask is not None:
        out.append(f"compaction.mask: observation masking has no place in {where}")
    if config.compaction.idle_ratio is not None:
        out.append(f"compaction.idle_ratio: {where} cannot compact while idle")
    if config.tool_result_limit != reference.tool_result_limit:
        out.append(f"tool_result_limit: {where} does not truncate tool results")
    provider = config.provider_edits
    # Inspect runs one strategy: a summary only when no clearing is exported instead.
    clearing = provider is not None and (provider.clear_tool_uses or provider.clear_thinking)
    summarized = config.compaction.enabled and (
        target == "langchain" or (target == "inspect" and not clearing)
    )
    if summarized and config.compaction.prune is not None:
        out.append(
            f"compaction.prune: ctxlab prunes older tool output before it summarizes; "
            f"{where} summarizes it whole"
        )
    if provider is None:
        return out
    if target != "openai_agents":
        if provider.trim_tool_outputs is not None:
            out.append(
                "provider_edits.trim_tool_outputs: the Agents SDK's trimmer (export "
                "'openai_agents')"
            )
        if provider.openai_truncation:
            out.append(
                "provider_edits.openai_truncation: the OpenAI Responses API's (export "
                "'openai_agents')"
            )
    return out


_WHERE = {
    "anthropic": "the API",
    "pydantic_ai": "the API",
    "langchain": "LangChain",
    "inspect": "Inspect",
    "openai_agents": "the Agents SDK",
}
"""How `dropped` names where a target's setting would go."""
