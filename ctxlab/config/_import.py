"""`ContextConfig.from_`: a setting of the provider or framework a user runs today, read into
the nearest ctxlab config so that it can be replayed — an Anthropic ``context_management``,
LangChain middleware, an Inspect AI compaction strategy. A setting with no ctxlab equivalent is
refused by name, never guessed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ctxlab.config._sections import ClearThinking, ClearToolUses, ProviderEdits
from ctxlab.exceptions import UsageError

if TYPE_CHECKING:
    from ctxlab.config._config import ContextConfig

__all__ = ["READABLE", "config_from"]

READABLE = ("anthropic", "langchain", "inspect")
"""What `ContextConfig.from_` reads."""


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


def _from_inspect(cls: type[ContextConfig], strategy: Any, window: int | None) -> ContextConfig:
    """The nearest config to an Inspect AI compaction strategy (inspect_ai 0.3.285):
    ``CompactionEdit`` as Anthropic's two clears at its threshold, ``CompactionNative`` as the
    server's compaction, ``CompactionSummary`` as ctxlab's summary at its threshold."""
    kind = type(strategy).__name__
    threshold = getattr(strategy, "threshold", None)
    if not isinstance(threshold, int | float) or isinstance(threshold, bool):
        msg = f"an Inspect compaction strategy has a numeric threshold; got {strategy!r}"
        raise UsageError(msg)
    ratio = float(threshold) if isinstance(threshold, float) else None
    tokens = threshold if isinstance(threshold, int) else None
    if kind == "CompactionEdit":
        if tokens is None and window is not None:
            tokens = int(threshold * window)
        if tokens is None:
            msg = (
                f"CompactionEdit(threshold={threshold}) is a share of the window: pass "
                "context_window= to read it as the clearing's token trigger"
            )
            raise UsageError(msg)
        keep_thinking = strategy.keep_thinking_turns
        edits = ProviderEdits(
            clear_tool_uses=ClearToolUses(
                trigger_input_tokens=tokens,
                keep=int(strategy.keep_tool_uses),
                exclude_tools=tuple(strategy.exclude_tools or ()),
            ),
            clear_thinking=ClearThinking(
                keep_turns=None if keep_thinking == "all" else int(keep_thinking)
            ),
        )
        return cls.preset("anthropic_context_editing").model_copy(update={"provider_edits": edits})
    if kind == "CompactionNative":
        base = cls.preset("anthropic_compaction")
    elif kind == "CompactionSummary":
        base = cls.preset("ctxlab")
    else:
        msg = (
            f"{kind} has no ctxlab equivalent (ctxlab reads CompactionEdit, CompactionNative "
            "and CompactionSummary)"
        )
        raise UsageError(msg)
    if ratio is not None:
        return base.merge(trigger_ratio=min(ratio, 0.9))
    return base.merge(compaction={**base.compaction.model_dump(), "trigger_tokens": tokens})


def config_from(
    cls: type[ContextConfig], value: Any, target: str, context_window: int | None = None
) -> ContextConfig:
    """The nearest ctxlab config (of ``cls``) to ``value``, a ``target`` setting (see
    `READABLE`); ``context_window`` turns a share of the window into tokens where a ctxlab
    setting counts tokens."""
    if target == "langchain":
        return _from_langchain(cls, value)
    if target == "inspect":
        return _from_inspect(cls, value, context_window)
    if target != "anthropic":
        msg = f"cannot read a config of {target!r}; readable: {', '.join(READABLE)}"
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
