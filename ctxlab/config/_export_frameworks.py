"""`ContextConfig.export` to the agent frameworks: LangChain 1.x middleware, pydantic-ai's model
settings, Inspect AI's compaction strategy and the OpenAI Agents SDK's run config — each built
with the framework's own classes (imported when asked for: they are optional) — and
`export_config`, which dispatches on the target.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ctxlab.config._export import TARGETS, Exported, anthropic_edits, unexported
from ctxlab.config._export_loop import on_demand_loop
from ctxlab.config._sections import ClearToolUses
from ctxlab.exceptions import UsageError
from ctxlab.manifest import Thresholds

if TYPE_CHECKING:
    from ctxlab.config._config import ContextConfig

CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27"
"""The beta the Messages API's clearing edits need (anthropic 2.14's header)."""

__all__ = [
    "export_config",
    "inspect_strategy",
    "langchain_middleware",
    "openai_agents_run_config",
    "pydantic_ai_settings",
]


def _summary_prompt(config: ContextConfig) -> str | None:
    """ctxlab's summary template in LangChain's form (str.format: every brace but the one
    ``{messages}`` written twice); None when ctxlab has none of its own."""
    template = config.compaction.summary_prompt
    if template is None:
        return None
    parts = template.split("{messages}")
    return "{messages}".join(p.replace("{", "{{").replace("}", "}}") for p in parts)


def _langchain_clear(edit: ClearToolUses, dropped: list[str]) -> Any:
    from langchain.agents.middleware import ClearToolUsesEdit

    inputs = edit.clear_tool_inputs
    if isinstance(inputs, tuple):
        dropped.append(
            "clear_tool_inputs by tool name: LangChain clears every cleared call's inputs or "
            "none; exported as none"
        )
    trigger = edit.trigger_input_tokens
    if trigger is None:
        trigger = ClearToolUsesEdit().trigger
        dropped.append(
            f"trigger_tool_uses={edit.trigger_tool_uses}: LangChain's edit triggers on tokens "
            f"only; exported with its default, {trigger:,} tokens"
        )
    dropped.append(
        "the trigger: LangChain compares its count of the messages alone (approximate unless "
        "given a token_counter); ctxlab and the API the whole request, System and tools too"
    )
    if edit.clear_at_least:
        dropped.append(
            f"clear_at_least={edit.clear_at_least:,}: LangChain's stops clearing once that many "
            "tokens are reclaimed, Anthropic's (and ctxlab's) clears only when that many can "
            "go; exported as 0 — LangChain clears whenever its trigger fires"
        )
    return ClearToolUsesEdit(
        trigger=trigger,
        clear_at_least=0,
        keep=edit.keep,
        clear_tool_inputs=inputs is True,
        exclude_tools=edit.exclude_tools,
        placeholder=edit.placeholder,
    )


def langchain_middleware(config: ContextConfig, model: Any, window: int | None) -> Exported:
    """LangChain 1.x middleware (``langchain.agents.middleware``): ``ContextEditingMiddleware``
    with a ``ClearToolUsesEdit`` for the tool-result clearing, ``SummarizationMiddleware`` for
    ctxlab's summary when ``model`` (its summarizer) is given — its lines as token counts of
    ``window`` when given (LangChain's fractions need the model's profile), the whole span
    summarized (``trim_tokens_to_summarize=None``: LangChain's default keeps only the latest
    4,000 tokens of it, and says "Previous conversation was too long to summarize." when no
    user message starts within them)."""
    from langchain.agents.middleware import ContextEditingMiddleware

    middleware: list[Any] = []
    dropped: list[str] = []
    provider = config.provider_edits
    edit = provider.clear_tool_uses if provider is not None else None
    if edit is not None:
        middleware.append(ContextEditingMiddleware(edits=[_langchain_clear(edit, dropped)]))
    if provider is not None and provider.clear_thinking is not None:
        dropped.append("clear_thinking: LangChain has no thinking edit")
    dropped.extend(unexported(config, "langchain"))
    if config.compaction.enabled and model is None:
        dropped.append("the summary compaction: pass model= (the summarizer) to export it")
    elif config.compaction.enabled:
        middleware.append(_langchain_summarization(config, model, window, dropped))
    return Exported("langchain", middleware, tuple(dropped))


def _langchain_tail(ratio: float, window: int | None) -> Any:
    """LangChain's ``keep`` for a tail of ``ratio`` of the window: a token count when the
    window is known, else the fraction. A count of 0 LangChain refuses (blaming its model, not
    the window): a window that small is refused here, naming the smallest that exports."""
    if not window:
        return ("fraction", ratio)
    tokens = int(ratio * window)
    if tokens < 1:
        smallest = math.ceil(1 / ratio)
        while int(ratio * smallest) < 1:  # float rounding: the first window that keeps one
            smallest += 1
        msg = (
            f"context_window={window} is too small to export to LangChain: the kept tail, "
            f"reserve_ratio={ratio} of it, is {tokens} tokens, and LangChain's "
            f"SummarizationMiddleware keeps at least 1. Pass the model's real context_window "
            f"(at least {smallest} tokens at this ratio), or keep a count of messages instead "
            "(compaction.keep_messages)"
        )
        raise UsageError(msg)
    return ("tokens", tokens)


def _langchain_summarization(
    config: ContextConfig, model: Any, window: int | None, dropped: list[str]
) -> Any:
    """LangChain's ``SummarizationMiddleware`` at ctxlab's lines, summarizing with ``model``."""
    from langchain.agents.middleware import SummarizationMiddleware

    passes = config.compaction
    # ctxlab compacts above its line, LangChain at its count: ctxlab's line L is LangChain's
    # L + 1. With a window, the line is the one ctxlab draws there (the lower of the share and
    # the count, within the input limit); without one, a count is not comparable with a share:
    # the count the user set is exported.
    line: Any = ("fraction", config.trigger_ratio)
    if window:
        line = ("tokens", Thresholds.compute(config, window).trigger_tokens + 1)
    elif passes.trigger_tokens is not None:
        line = ("tokens", passes.trigger_tokens + 1)
    trigger: Any = (
        [line, ("messages", passes.trigger_messages)]
        if passes.trigger_messages is not None
        else line
    )
    keep: Any = (
        ("messages", passes.keep_messages)
        if passes.keep_messages is not None
        else _langchain_tail(config.reserve_ratio, window)
    )
    options: dict[str, Any] = {"trim_tokens_to_summarize": None}
    prompt = _summary_prompt(config)
    if prompt is not None:
        options["summary_prompt"] = prompt
    try:
        summarizing = SummarizationMiddleware(model, trigger=trigger, keep=keep, **options)
    except (AttributeError, ImportError, TypeError, ValueError) as exc:
        msg = (
            f"model must be the LangChain chat model that summarizes (or a name LangChain's "
            f"init_chat_model knows, with its package installed); {model!r} is not: {exc}"
        )
        raise UsageError(msg) from exc
    if line[0] == "fraction":
        dropped.append(
            f"trigger_ratio={config.trigger_ratio}: LangChain summarizes at int(window × "
            "fraction) tokens, ctxlab above round(window × ratio) — up to 2 tokens apart; "
            "pass context_window= to export the exact line in tokens"
        )
    dropped.append("summary_schema: LangChain's summary is free text in its own prompt")
    dropped.append(
        "the pinned task: ctxlab keeps the first user message beside the summary; "
        "LangChain summarizes it with the rest"
    )
    if passes.keep_messages is not None:
        dropped.append(
            "keep_messages: LangChain counts each tool result as a message, ctxlab a turn's "
            "results as one"
        )
    return summarizing


def pydantic_ai_settings(config: ContextConfig) -> Exported:
    """pydantic-ai's ``AnthropicModelSettings`` carrying the edits
    (``anthropic_context_management``, pydantic-ai 2.x) and, for the clearing edits, their beta
    header (``anthropic_betas``: pydantic-ai adds only the compaction beta of its own); ctxlab's
    own compaction runs there as its history processor
    (`ctxlab.integrations.pydantic_ai.ContextProcessor`), not a setting."""
    from pydantic_ai.models.anthropic import AnthropicModelSettings

    anthropic = anthropic_edits(config)
    settings = AnthropicModelSettings(anthropic_context_management=anthropic.value)
    clearing = {"clear_tool_uses_20250919", "clear_thinking_20251015"}
    if any(e["type"] in clearing for e in anthropic.value["edits"]):
        # pydantic-ai adds only the compaction beta for anthropic_context_management; the
        # clearing edits need their own.
        settings["anthropic_betas"] = [CONTEXT_MANAGEMENT_BETA]
    dropped = [
        d
        if not d.startswith("the summary compaction")
        else "the summary compaction: run ctxlab's in pydantic-ai as its history processor "
        "(ContextProcessor(ObservedSession(config=...)))"
        for d in anthropic.dropped
    ]
    return Exported("pydantic_ai", settings, tuple(dropped))


def _threshold(config: ContextConfig, tokens: int | None, window: int | None) -> int | float:
    """Inspect's ``threshold``: a token count, or a share of the window."""
    if tokens is not None:
        return tokens
    return int(config.trigger_ratio * window) if window else config.trigger_ratio


def inspect_strategy(config: ContextConfig, window: int | None) -> Exported:
    """Inspect AI's compaction strategy (``inspect_ai.model``, read from 0.3.285), what its
    ``react(compaction=...)`` agent takes: one strategy, so the tool-result clearing
    (``CompactionEdit``) when one is in force, else the server's compaction
    (``CompactionNative``) for an absolute trigger, else a summary (``CompactionSummary``).
    Inspect edits the history once the threshold is reached and goes on from the edited
    history; the providers edit every request from the full one."""
    from inspect_ai.model import CompactionNative

    dropped: list[str] = list(unexported(config, "inspect"))
    provider = config.provider_edits
    strategy: Any
    if provider is not None and (
        provider.clear_tool_uses is not None or provider.clear_thinking is not None
    ):
        strategy = _inspect_edit(config, window, dropped)
        if config.compaction.enabled:
            dropped.append("the summary compaction: Inspect runs one strategy, the edit here")
    elif config.compaction.enabled and config.compaction.trigger_tokens is not None:
        strategy = CompactionNative(threshold=config.compaction.trigger_tokens)
        dropped.append("summary_schema, summary_template: the provider summarizes natively")
    else:
        strategy = _inspect_summary(config, window, dropped)
    return Exported("inspect", strategy, tuple(dropped))


def _inspect_edit(config: ContextConfig, window: int | None, dropped: list[str]) -> Any:
    """Inspect's ``CompactionEdit`` for the provider edits in force; what it cannot say goes
    to ``dropped``."""
    from inspect_ai.model import CompactionEdit

    assert config.provider_edits is not None  # the caller checked
    tool_uses = config.provider_edits.clear_tool_uses
    thinking = config.provider_edits.clear_thinking
    edit = tool_uses or ClearToolUses()
    dropped.extend(_inspect_edit_differences(edit, tool_uses is not None, thinking))
    return CompactionEdit(
        threshold=_threshold(config, edit.trigger_input_tokens, window),
        keep_tool_uses=edit.keep if tool_uses is not None else 10**9,
        keep_thinking_turns=(
            "all" if thinking is None or thinking.keep_turns is None else thinking.keep_turns
        ),
        exclude_tools=list(edit.exclude_tools) or None,
        # ctxlab's edits neither warn the model nor clear its memory tool's content.
        memory=False,
    )


def _inspect_edit_differences(edit: ClearToolUses, clearing: bool, thinking: Any) -> list[str]:
    """Where Inspect's edit differs from ctxlab's ``edit`` (``clearing``: tool uses are
    cleared, not only thinking)."""
    dropped = []
    if clearing and edit.trigger_tool_uses is not None:
        dropped.append("trigger_tool_uses: Inspect's threshold counts tokens")
    if edit.clear_at_least:
        dropped.append("clear_at_least: Inspect clears whenever the threshold is reached")
    if edit.placeholder != ClearToolUses().placeholder:
        dropped.append("clear_tool_uses.placeholder: Inspect writes its own")
    if edit.clear_tool_inputs:
        dropped.append(
            "clear_tool_inputs: Inspect's keep_tool_inputs=False removes call and result "
            "whole; the calls are kept"
        )
    if clearing and edit.exclude_tools:
        dropped.append(
            "keep with exclude_tools: Inspect keeps the latest keep_tool_uses of the tools it "
            "may clear, ctxlab the latest keep of every tool use — Inspect clears fewer when "
            "excluded tools are among the latest"
        )
    if thinking is not None and thinking.keep_turns is not None:
        dropped.append(
            "clear_thinking's turns: Inspect counts each assistant message as a turn, ctxlab "
            "(and the API) a whole tool loop — within a tool loop Inspect clears more"
        )
    dropped.append(
        "when it clears: Inspect edits the history once past the threshold and goes on "
        "from the edited history; ctxlab and the API clear each request afresh"
    )
    return dropped


def _inspect_summary(config: ContextConfig, window: int | None, dropped: list[str]) -> Any:
    """Inspect's ``CompactionSummary`` at ctxlab's trigger."""
    from inspect_ai.model import CompactionSummary

    dropped.append("summary_schema, reserve_ratio: Inspect's summary has its own prompt")
    if config.compaction.flush_before_compact:
        dropped.append(
            "flush_before_compact: ctxlab writes the span's facts to MEMORY.md itself; "
            "Inspect's memory option (off here) asks the model to save notes with its "
            "memory tool"
        )
    if not config.compaction.enabled:
        dropped.append("compaction.enabled=False: an Inspect strategy always compacts")
    return CompactionSummary(threshold=_threshold(config, None, window), memory=False)


def openai_agents_run_config(config: ContextConfig) -> Exported:
    """The OpenAI Agents SDK's ``RunConfig`` (openai-agents 0.24.0): the ``ToolOutputTrimmer``
    as its ``call_model_input_filter``, the Responses API's ``truncation="auto"`` in its
    ``model_settings``. The SDK's compaction lives in a session
    (``OpenAIResponsesCompactionSession(session_id, underlying_session)``), not the run config:
    named in ``dropped``."""
    from agents import ModelSettings, RunConfig
    from agents.extensions.tool_output_trimmer import ToolOutputTrimmer

    dropped: list[str] = []
    provider = config.provider_edits
    keywords: dict[str, Any] = {}
    trim = provider.trim_tool_outputs if provider is not None else None
    if trim is not None:
        keywords["call_model_input_filter"] = ToolOutputTrimmer(
            recent_turns=trim.recent_turns,
            max_output_chars=trim.max_output_chars,
            preview_chars=trim.preview_chars,
            trimmable_tools=trim.trimmable_tools,
        )
    if provider is not None and provider.openai_truncation:
        keywords["model_settings"] = ModelSettings(truncation="auto")
    dropped.extend(unexported(config, "openai_agents"))
    if provider is not None and provider.clear_tool_uses is not None:
        dropped.append("provider_edits.clear_tool_uses: Anthropic's edit (export 'anthropic')")
    if provider is not None and provider.clear_thinking is not None:
        dropped.append("provider_edits.clear_thinking: Anthropic's edit (export 'anthropic')")
    if config.compaction.enabled:
        dropped.append(
            "the summary compaction: the SDK compacts in a session — wrap yours in "
            "OpenAIResponsesCompactionSession(session_id, session)"
        )
    return Exported("openai_agents", RunConfig(**keywords), tuple(dropped))


def export_config(
    config: ContextConfig, target: str, model: Any = None, context_window: int | None = None
) -> Exported:
    """``config`` in ``target``'s terms (see `TARGETS`); ``model`` is the summarizer a
    framework's summary middleware needs (LangChain), ``context_window`` turns ratios into
    token counts."""
    if target == "anthropic":
        return anthropic_edits(config)
    if target == "anthropic_loop":  # issue 56: compaction on demand, as SDK code
        return on_demand_loop(config)
    if not isinstance(target, str) or target not in _PACKAGES:
        msg = f"cannot export to {target!r}; targets: {', '.join(TARGETS)}"
        raise UsageError(msg)
    try:
        if target == "langchain":
            return langchain_middleware(config, model, context_window)
        if target == "pydantic_ai":
            return pydantic_ai_settings(config)
        if target == "inspect":
            return inspect_strategy(config, context_window)
        return openai_agents_run_config(config)
    except ModuleNotFoundError as exc:
        msg = (
            f"export({target!r}) builds the framework's own objects: pip install "
            f"{_PACKAGES[target]} ({exc})"
        )
        raise UsageError(msg) from exc


_PACKAGES = {
    "langchain": "langchain",
    "pydantic_ai": "pydantic-ai-slim[anthropic]",
    "inspect": "inspect-ai",
    "openai_agents": "openai-agents",
}
"""What each framework target needs installed."""
