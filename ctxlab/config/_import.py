"""`ContextConfig.from_`: a setting of the provider or framework a user runs today, read into
the nearest ctxlab config so that it can be replayed — an Anthropic ``context_management`` here,
LangChain middleware and Inspect AI strategies in `ctxlab.config._import_frameworks`. A setting
with no ctxlab equivalent, a key the target does not know, a value of the wrong type or one the
target itself refuses: each a `UsageError` that names it, never guessed or coerced.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ctxlab.config._export import COMPACT_MINIMUM
from ctxlab.config._import_frameworks import from_inspect, from_langchain
from ctxlab.config._read import (
    Refusals,
    built,
    check_keys,
    read_bool,
    read_count,
    read_names,
    read_text,
)
from ctxlab.config._sections import ClearThinking, ClearToolUses, ProviderEdits
from ctxlab.exceptions import UsageError

if TYPE_CHECKING:
    from ctxlab.config._config import ContextConfig

__all__ = ["READABLE", "config_from", "keeps_all_thinking"]

READABLE = ("anthropic", "langchain", "inspect")
"""What `ContextConfig.from_` reads."""

DEFAULT_MODEL = "claude-sonnet-4-6"
"""The model a ``context_management`` is read for when none is named (`AnthropicModel`'s)."""

_EDIT_KEYS = {
    "clear_tool_uses_20250919": (
        "type",
        "trigger",
        "keep",
        "clear_at_least",
        "exclude_tools",
        "clear_tool_inputs",
    ),
    "clear_thinking_20251015": ("type", "keep"),
    "compact_20260112": ("type", "trigger", "instructions", "pause_after_compaction"),
}
"""Each edit's keys, from anthropic 2.14's ``BetaClearToolUses20250919EditParam``,
``BetaClearThinking20251015EditParam`` and ``BetaCompact20260112EditParam``."""


def keeps_all_thinking(model: str) -> bool:
    """Whether ``model`` keeps every earlier turn's thinking when no ``clear_thinking`` edit
    says otherwise — the context-editing guide's table (platform.claude.com, "Thinking block
    clearing", as of the Claude 5 models): Claude Opus 4.5 and later, Sonnet 4.6 and later,
    Haiku 5.5 and later, and every Fable and Mythos model keep all; Opus 4.1, Sonnet 4.5, Haiku
    4.5 and older models keep only the last turn's. (The guide's 2025 text said the last turn's
    for every model; its table replaced that sentence.)"""
    name = model.lower()
    # A version is one or two digits: in claude-3-7-sonnet-20250219 the date is no version.
    found = re.search(r"(opus|sonnet|haiku)-(\d{1,2})(?:[-.](\d{1,2}))?(?!\d)", name)
    if found is None:
        # Claude 3.x names put the version first (claude-3-7-sonnet, claude-3-5-haiku): the
        # last turn's only; Fable, Mythos and later families keep all.
        return not re.search(r"claude-[23]", name)
    family, major, minor = found.group(1), int(found.group(2)), int(found.group(3) or 0)
    first = {"opus": (4, 5), "sonnet": (4, 6), "haiku": (5, 5)}[family]
    return (major, minor) >= first


def _value(item: Any, kinds: tuple[str, ...], where: str, minimum: int) -> tuple[str, int]:
    """A ``{"type": <kind>, "value": <count>}`` item: its kind and its count."""
    if not isinstance(item, Mapping) or item.get("type") not in kinds:
        shapes = " or ".join(f"{{'type': '{k}', 'value': <int>}}" for k in kinds)
        msg = f"{where} must be {shapes}, got {item!r}"
        raise UsageError(msg)
    check_keys(item, ("type", "value"), where)
    return str(item["type"]), read_count(item.get("value"), f"{where}.value", minimum=minimum)


def _clear_inputs(inputs: Any, where: str) -> bool | tuple[str, ...]:
    """``clear_tool_inputs``: a bool, or the tools whose inputs are cleared."""
    if isinstance(inputs, bool):
        return inputs
    # No tool named clears no inputs: False, as the export writes it (it leaves the key out).
    return read_names(inputs, f"{where}.clear_tool_inputs") or False


def _tool_uses(edit: Mapping[str, Any], where: str) -> ClearToolUses:
    """A ``clear_tool_uses_20250919`` edit, each key read on its own (every refusal named)."""
    refusals = Refusals()
    fields: dict[str, Any] = {}
    if "trigger" in edit:
        read = refusals.read(
            lambda: _value(edit["trigger"], ("input_tokens", "tool_uses"), f"{where}.trigger", 1)
        )
        if read is not None:
            kind, count = read
            fields["trigger_tool_uses" if kind == "tool_uses" else "trigger_input_tokens"] = count
    readers = {
        "keep": lambda v: _value(v, ("tool_uses",), f"{where}.keep", 0)[1],
        "clear_at_least": lambda v: _value(v, ("input_tokens",), f"{where}.clear_at_least", 0)[1],
        "exclude_tools": lambda v: read_names(v, f"{where}.exclude_tools"),
        "clear_tool_inputs": lambda v: _clear_inputs(v, where),
    }
    for key, reader in readers.items():
        # keep is no Optional in the SDK's type: a None there is refused, as the API would.
        if key in edit and (key == "keep" or edit[key] is not None):
            value = refusals.read(reader, edit[key])
            if value is not None:
                fields[key] = value
    refusals.raise_any()
    return built(ClearToolUses, where, **fields)


def _thinking(edit: Mapping[str, Any], where: str) -> ClearThinking:
    keep = edit.get("keep", {"type": "thinking_turns", "value": 1})
    if keep == "all" or (isinstance(keep, Mapping) and keep.get("type") == "all"):
        if isinstance(keep, Mapping):
            check_keys(keep, ("type",), f"{where}.keep")
        return ClearThinking(keep_turns=None)
    return ClearThinking(keep_turns=_value(keep, ("thinking_turns",), f"{where}.keep", 1)[1])


def _pause(edit: Mapping[str, Any], where: str) -> None:
    """``pause_after_compaction``: false (or absent) is the only value ctxlab can replay."""
    if edit.get("pause_after_compaction") is not None and read_bool(
        edit["pause_after_compaction"], f"{where}.pause_after_compaction"
    ):
        msg = (
            f"{where}.pause_after_compaction=true has no ctxlab equivalent: after the pause your "
            "client chooses what to send after the compaction block, which the setting does not "
            "say — read it without the key and set compaction.keep_messages to the messages "
            "your client keeps"
        )
        raise UsageError(msg)


def _compact_trigger(edit: Mapping[str, Any], where: str) -> int:
    """The server compaction's trigger in input tokens (150,000 when the edit names none)."""
    if edit.get("trigger") is None:
        return 150_000
    trigger = _value(edit["trigger"], ("input_tokens",), f"{where}.trigger", 1)[1]
    if trigger < COMPACT_MINIMUM:
        msg = (
            f"{where}.trigger is {trigger:,} input tokens; the API refuses a compaction "
            f"trigger below {COMPACT_MINIMUM:,}"
        )
        raise UsageError(msg)
    return trigger


def _instructions(edit: Mapping[str, Any], where: str) -> str | None:
    """The summary prompt the edit gives (None: the server's own)."""
    instructions = edit.get("instructions")
    if instructions is None:
        return None
    instructions = read_text(instructions, f"{where}.instructions")
    if not instructions.strip():
        msg = (
            f"{where}.instructions is empty: give the summary prompt, or leave the key out "
            "for the server's own"
        )
        raise UsageError(msg)
    return instructions


def _compact(edit: Mapping[str, Any], where: str) -> tuple[int, str | None]:
    """The server compaction's trigger, and its ``instructions`` (None: its own prompt). Each
    key is read on its own, so that a refusal names every key that cannot be honoured."""
    refusals = Refusals()
    refusals.read(lambda: _pause(edit, where))
    trigger = refusals.read(lambda: _compact_trigger(edit, where))
    instructions = refusals.read(lambda: _instructions(edit, where))
    refusals.raise_any()
    assert trigger is not None  # raise_any raised otherwise
    return trigger, instructions


def _edit(edit: Any, where: str, seen: list[str]) -> tuple[str, Any]:
    """One edit of a ``context_management``: its kind and what it reads as."""
    kind = edit.get("type") if isinstance(edit, Mapping) else None
    if not isinstance(edit, Mapping) or not isinstance(kind, str) or kind not in _EDIT_KEYS:
        msg = (
            f"{where}: unknown or unsupported edit {kind!r} (ctxlab reads "
            "clear_tool_uses_20250919, clear_thinking_20251015 and compact_20260112)"
        )
        raise UsageError(msg)
    if kind in seen:
        msg = f"{where}: a second {kind} edit; the API takes each edit once"
        raise UsageError(msg)
    seen.append(kind)
    check_keys(edit, _EDIT_KEYS[kind], where)
    if kind == "clear_tool_uses_20250919":
        return kind, _tool_uses(edit, where)
    if kind == "clear_thinking_20251015":
        if "clear_tool_uses_20250919" in seen[:-1]:
            msg = (
                f"{where}: clear_thinking_20251015 after clear_tool_uses_20250919; the API "
                "requires the thinking edit first"
            )
            raise UsageError(msg)
        return kind, _thinking(edit, where)
    return kind, _compact(edit, where)


def _from_anthropic(cls: type[ContextConfig], value: Any, model: str | None) -> ContextConfig:
    if not isinstance(value, Mapping) or not isinstance(value.get("edits"), list):
        msg = f"an Anthropic context_management is {{'edits': [...]}}, got {value!r}"
        raise UsageError(msg)
    check_keys(value, ("edits",), "context_management")
    tool_uses: ClearToolUses | None = None
    thinking: ClearThinking | None = None
    compact: tuple[int, str | None] | None = None
    seen: list[str] = []
    refusals = Refusals()  # every edit read, so that every edit refused is named
    for number, edit in enumerate(value["edits"]):
        read = refusals.read(_edit, edit, f"edits[{number}]", seen)
        if read is None:
            continue
        kind, setting = read
        if kind == "clear_tool_uses_20250919":
            tool_uses = setting
        elif kind == "clear_thinking_20251015":
            thinking = setting
        else:
            compact = setting
    refusals.raise_any()
    if thinking is None and not keeps_all_thinking(model or DEFAULT_MODEL):
        # No thinking edit: the model's own default, which for this one is the last turn's.
        thinking = ClearThinking(keep_turns=1)
    base = cls.preset("anthropic_compaction" if compact else "anthropic_context_editing")
    if compact is not None:
        trigger, instructions = compact
        base = base.merge(compaction={**base.compaction.model_dump(), "trigger_tokens": trigger})
        if instructions is not None:
            base = base.merge(compression_prompt=instructions)
    edits_in_force = (
        ProviderEdits(clear_tool_uses=tool_uses, clear_thinking=thinking)
        if tool_uses is not None or thinking is not None
        else None
    )
    return base.model_copy(update={"provider_edits": edits_in_force})


def config_from(
    cls: type[ContextConfig],
    value: Any,
    target: str,
    context_window: int | None = None,
    model: str | None = None,
) -> ContextConfig:
    """The nearest ctxlab config (of ``cls``) to ``value``, a ``target`` setting (see
    `READABLE`); ``context_window`` turns a share of the window into tokens where a ctxlab
    setting counts tokens; ``model`` (Anthropic's) decides what no thinking edit means."""
    if not isinstance(target, str):
        msg = f"target must be one of {', '.join(READABLE)}, got {target!r}"
        raise UsageError(msg)
    if target == "langchain":
        return from_langchain(cls, value, context_window)
    if target == "inspect":
        return from_inspect(cls, value, context_window)
    if target != "anthropic":
        msg = f"cannot read a config of {target!r}; readable: {', '.join(READABLE)}"
        raise UsageError(msg)
    if model is not None and not isinstance(model, str):
        msg = f"model must be a model name such as 'claude-sonnet-4-5', got {model!r}"
        raise UsageError(msg)
    return _from_anthropic(cls, value, model)
