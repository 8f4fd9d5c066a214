"""A tuned `ContextConfig` taken to where it runs, and back: ``config.export("anthropic")`` is the
Messages API's ``context_management`` (typed as anthropic 2.14.0's
``BetaContextManagementConfigParam``); ``ContextConfig.from_(value, "anthropic")`` reads one into
the nearest ctxlab config, so a user can replay what they run today. What the target cannot
express is named in `Exported.dropped`, never lost silently.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ctxlab.config._sections import ClearThinking, ClearToolUses, ProviderEdits
from ctxlab.exceptions import UsageError

if TYPE_CHECKING:
    from ctxlab.config._config import ContextConfig

__all__ = ["TARGETS", "Exported", "config_from", "export_config"]

TARGETS = ("anthropic", "langchain", "pydantic_ai")

COMPACT_MINIMUM = 50_000
"""The lowest trigger ``compact_20260112`` takes, in input tokens."""
"""What `ContextConfig.export` and `ContextConfig.from_` know."""


@dataclass(frozen=True)
class Exported:
    """A config in a target's terms."""

    target: str
    value: Any
    """What the target takes (for ``"anthropic"``: the ``context_management`` parameter)."""
    dropped: tuple[str, ...] = ()
    """ctxlab settings in force that the target cannot express, each with why."""


def _tool_uses_edit(edit: ClearToolUses) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "clear_tool_uses_20250919",
        "keep": {"type": "tool_uses", "value": edit.keep},
    }
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


def _anthropic(config: ContextConfig) -> Exported:
    edits: list[dict[str, Any]] = []
    dropped: list[str] = []
    provider = config.provider_edits
    if provider is not None and provider.clear_thinking is not None:
        keep = provider.clear_thinking.keep_turns
        value: Any = "all" if keep is None else {"type": "thinking_turns", "value": keep}
        # The API requires the thinking edit first when both are given.
        edits.append({"type": "clear_thinking_20251015", "keep": value})
    if provider is not None and provider.clear_tool_uses is not None:
        edits.append(_tool_uses_edit(provider.clear_tool_uses))
        if provider.clear_tool_uses.placeholder != ClearToolUses().placeholder:
            dropped.append("provider_edits.clear_tool_uses.placeholder: the API writes its own")
    reference = type(config)()
    if config.compaction.mask is not None:
        dropped.append("compaction.mask: observation masking keeps turns, the API keeps tool uses")
    trigger = config.compaction.trigger_tokens
    if config.compaction.enabled and trigger is not None:
        # An absolute trigger is what the server's compaction has: the summary moves there.
        edits.append(
            {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": trigger}}
        )
        dropped.append("summary_schema, summary_template: the server summarizes in its own words")
        if trigger < COMPACT_MINIMUM:
            dropped.append(f"a trigger below {COMPACT_MINIMUM:,}: the API's minimum")
    elif config.compaction.enabled:
        dropped.append(
            "the summary compaction (trigger_ratio, summary_schema): ctxlab's, client-side; set "
            "compaction.trigger_tokens to export it as the server's compact_20260112"
        )
    if config.tool_result_limit != reference.tool_result_limit:
        dropped.append("tool_result_limit: the API does not truncate tool results")
    return Exported("anthropic", {"edits": edits}, tuple(dropped))


def _langchain(config: ContextConfig, model: Any, window: int | None) -> Exported:
    """LangChain 1.x middleware (``langchain.agents.middleware``): ``ContextEditingMiddleware``
    with a ``ClearToolUsesEdit`` for the tool-result clearing, ``SummarizationMiddleware`` for
    ctxlab's summary when ``model`` (its summarizer) is given — its ratios as token counts of
    ``window`` when given (LangChain's fractions need the model's profile)."""
    from langchain.agents.middleware import (
        ClearToolUsesEdit,
        ContextEditingMiddleware,
        SummarizationMiddleware,
    )

    middleware: list[Any] = []
    dropped: list[str] = []
    provider = config.provider_edits
    edit = provider.clear_tool_uses if provider is not None else None
    if edit is not None:
        inputs = edit.clear_tool_inputs
        if isinstance(inputs, tuple):
            dropped.append("clear_tool_inputs by tool name: LangChain clears all inputs or none")
        if edit.trigger_input_tokens is None:
            dropped.append("trigger_tool_uses: LangChain's edit triggers on tokens only")
        if edit.clear_at_least:
            dropped.append(
                "clear_at_least means another thing in LangChain: it stops clearing once that "
                "many tokens are reclaimed (Anthropic clears only when that many can go)"
            )
        clear = ClearToolUsesEdit(
            trigger=edit.trigger_input_tokens or 100_000,
            clear_at_least=edit.clear_at_least,
            keep=edit.keep,
            clear_tool_inputs=inputs is True,
            exclude_tools=edit.exclude_tools,
            placeholder=edit.placeholder,
        )
        middleware.append(ContextEditingMiddleware(edits=[clear]))
    if provider is not None and provider.clear_thinking is not None:
        dropped.append("clear_thinking: LangChain has no thinking edit")
    if config.compaction.enabled and model is None:
        dropped.append("the summary compaction: pass model= (the summarizer) to export it")
    elif config.compaction.enabled:
        passes = config.compaction

        def share(ratio: float) -> Any:
            return ("tokens", int(ratio * window)) if window else ("fraction", ratio)

        keep: Any = (
            ("messages", passes.keep_messages)
            if passes.keep_messages is not None
            else share(config.reserve_ratio)
        )
        middleware.append(
            SummarizationMiddleware(model, trigger=share(config.trigger_ratio), keep=keep)
        )
        dropped.append("summary_schema: LangChain's summary is free text in its own prompt")
    return Exported("langchain", middleware, tuple(dropped))


def _pydantic_ai(config: ContextConfig) -> Exported:
    """pydantic-ai's ``AnthropicModelSettings`` carrying the edits
    (``anthropic_context_management``, pydantic-ai 2.x); ctxlab's own compaction runs there as
    its history processor (`ctxlab.integrations.pydantic_ai.ContextProcessor`), not a setting."""
    from pydantic_ai.models.anthropic import AnthropicModelSettings

    anthropic = _anthropic(config)
    settings = AnthropicModelSettings(anthropic_context_management=anthropic.value)
    dropped = [
        d
        if not d.startswith("the summary compaction")
        else "the summary compaction: run ctxlab's in pydantic-ai as its history processor "
        "(ContextProcessor(ObservedSession(config=...)))"
        for d in anthropic.dropped
    ]
    return Exported("pydantic_ai", settings, tuple(dropped))


def export_config(
    config: ContextConfig, target: str, model: Any = None, context_window: int | None = None
) -> Exported:
    """``config`` in ``target``'s terms (see `TARGETS`); ``model`` is the summarizer a
    framework's summary middleware needs (LangChain), ``context_window`` turns ratios into
    token counts."""
    if target == "anthropic":
        return _anthropic(config)
    if target == "langchain":
        return _langchain(config, model, context_window)
    if target == "pydantic_ai":
        return _pydantic_ai(config)
    msg = f"cannot export to {target!r}; targets: {', '.join(TARGETS)}"
    raise UsageError(msg)


def _value(item: Any, kind: str, where: str) -> int:
    if (
        not isinstance(item, Mapping)
        or item.get("type") != kind
        or not isinstance(item.get("value"), int)
    ):
        msg = f"{where} must be {{'type': '{kind}', 'value': <int>}}, got {item!r}"
        raise UsageError(msg)
    return int(item["value"])


def _from_langchain(cls: type[ContextConfig], middleware: Any) -> ContextConfig:
    """The nearest config to a list of LangChain agent middleware: a ``ContextEditingMiddleware``'s
    ``ClearToolUsesEdit`` as the tool-result clearing, a ``SummarizationMiddleware``'s token or
    fraction trigger and kept messages as ctxlab's compaction (others are refused by name)."""
    config = cls.preset("langchain")
    passes = config.compaction.model_dump()
    updates: dict[str, Any] = {}
    for number, item in enumerate(
        middleware if isinstance(middleware, list | tuple) else [middleware]
    ):
        kind = type(item).__name__
        if kind == "ContextEditingMiddleware":
            for edit in getattr(item, "edits", ()):
                if type(edit).__name__ != "ClearToolUsesEdit":
                    msg = (
                        f"middleware {number}: edit {type(edit).__name__} has no ctxlab equivalent"
                    )
                    raise UsageError(msg)
                clear = ClearToolUses(
                    trigger_input_tokens=int(edit.trigger),
                    keep=int(edit.keep),
                    clear_tool_inputs=bool(edit.clear_tool_inputs),
                    exclude_tools=tuple(edit.exclude_tools),
                    placeholder=str(edit.placeholder),
                )
                updates["provider_edits"] = ProviderEdits(clear_tool_uses=clear)
        elif kind == "SummarizationMiddleware":
            for clause in getattr(item, "_trigger_conditions", None) or [item.trigger]:
                if clause and clause[0] == "fraction":
                    updates["trigger_ratio"] = float(clause[1])
                elif clause and clause[0] == "tokens":
                    passes["trigger_tokens"] = int(clause[1])
                elif clause and clause[0] == "messages":
                    passes["trigger_messages"] = int(clause[1])
            keep = item.keep
            if keep[0] == "messages":
                passes["keep_messages"] = int(keep[1])
            elif keep[0] == "fraction":
                updates["reserve_ratio"] = float(keep[1])
        else:
            msg = f"middleware {number}: {kind} has no ctxlab equivalent (ctxlab reads ContextEditingMiddleware and SummarizationMiddleware)"
            raise UsageError(msg)
    return config.merge(compaction=passes, **updates)


def config_from(cls: type[ContextConfig], value: Any, target: str) -> ContextConfig:
    """The nearest ctxlab config (of ``cls``) to ``value``, a ``target`` setting (see
    `TARGETS`)."""
    if target == "langchain":
        return _from_langchain(cls, value)
    if target != "anthropic":
        msg = f"cannot read a config of {target!r}; readable: anthropic, langchain"
        raise UsageError(msg)
    edits = value.get("edits") if isinstance(value, Mapping) else None
    if not isinstance(edits, list):
        msg = f"an Anthropic context_management is {{'edits': [...]}}, got {value!r}"
        raise UsageError(msg)
    tool_uses: ClearToolUses | None = None
    thinking: ClearThinking | None = None
    compact: int | None = None
    for number, edit in enumerate(edits):
        kind = edit.get("type") if isinstance(edit, Mapping) else None
        where = f"edits[{number}]"
        if kind == "clear_tool_uses_20250919":
            fields: dict[str, Any] = {}
            trigger = edit.get("trigger")
            if isinstance(trigger, Mapping) and trigger.get("type") == "tool_uses":
                fields.update(
                    trigger_input_tokens=None,
                    trigger_tool_uses=_value(trigger, "tool_uses", f"{where}.trigger"),
                )
            elif trigger is not None:
                fields["trigger_input_tokens"] = _value(trigger, "input_tokens", f"{where}.trigger")
            if edit.get("keep") is not None:
                fields["keep"] = _value(edit["keep"], "tool_uses", f"{where}.keep")
            if edit.get("clear_at_least") is not None:
                fields["clear_at_least"] = _value(
                    edit["clear_at_least"], "input_tokens", f"{where}.clear_at_least"
                )
            fields["exclude_tools"] = tuple(edit.get("exclude_tools") or ())
            inputs = edit.get("clear_tool_inputs")
            fields["clear_tool_inputs"] = (
                tuple(inputs) if isinstance(inputs, list) else bool(inputs)
            )
            tool_uses = ClearToolUses(**fields)
        elif kind == "clear_thinking_20251015":
            keep = edit.get("keep", {"type": "thinking_turns", "value": 1})
            turns = (
                None
                if keep == "all" or (isinstance(keep, Mapping) and keep.get("type") == "all")
                else _value(keep, "thinking_turns", f"{where}.keep")
            )
            thinking = ClearThinking(keep_turns=turns)
        elif kind == "compact_20260112":
            trigger = edit.get("trigger")
            compact = (
                150_000 if trigger is None else _value(trigger, "input_tokens", f"{where}.trigger")
            )
        else:
            msg = (
                f"{where}: unknown or unsupported edit {kind!r} (ctxlab reads "
                "clear_tool_uses_20250919, clear_thinking_20251015 and compact_20260112)"
            )
            raise UsageError(msg)
    base = cls.preset("anthropic_compaction" if compact else "anthropic_context_editing")
    if compact:
        base = base.merge(compaction={**base.compaction.model_dump(), "trigger_tokens": compact})
    edits_in_force = (
        ProviderEdits(clear_tool_uses=tool_uses, clear_thinking=thinking)
        if tool_uses is not None or thinking is not None
        else None
    )
    return base.model_copy(update={"provider_edits": edits_in_force})
