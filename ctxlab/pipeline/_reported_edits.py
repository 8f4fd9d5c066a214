"""The request as the provider edited it, from what it reported (Anthropic's
``context_management.applied_edits``: ``cleared_tool_uses``, ``cleared_thinking_turns``): a
live agent whose model edits on the server sends the whole request, is billed on the edited
one, and is told only how much was cleared — which, under the edit's documented order (the
oldest first; ``exclude_tools`` never), says what was.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ctxlab.config._sections import ProviderEdits
from ctxlab.manifest import ManifestItem
from ctxlab.messages import (
    AssistantMessage,
    RedactedThinkingBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.messages._request import ModelRequest
from ctxlab.pipeline._provider_edits import assistant_turns
from ctxlab.pipeline._results import replace_results
from ctxlab.pipeline._scan import message_items
from ctxlab.tokens import TokenCache

__all__ = ["as_reported", "reported_items"]

Message = UserMessage | AssistantMessage
_THINKING = (ThinkingBlock, RedactedThinkingBlock)


def _count(reported: Sequence[Mapping[str, Any]], kind: str, key: str) -> int:
    return sum(
        int(edit.get(key) or 0)
        for edit in reported
        if edit.get("type") == kind and isinstance(edit.get(key), int)
    )


def as_reported(
    conversation: Sequence[Message],
    edits: ProviderEdits,
    reported: Sequence[Mapping[str, Any]],
) -> tuple[Message, ...]:
    """``conversation`` with what the provider reported clearing cleared: the results (and,
    as configured, the inputs) of the oldest ``cleared_tool_uses`` tool uses it may clear, and
    the thinking of the oldest ``cleared_thinking_turns`` turns that hold some (a message left
    with nothing is not sent)."""
    out = tuple(conversation)
    uses = _count(reported, "clear_tool_uses_20250919", "cleared_tool_uses")
    if uses and edits.clear_tool_uses is not None:
        out = _clear_uses(out, edits, uses)
    turns = _count(reported, "clear_thinking_20251015", "cleared_thinking_turns")
    if turns:
        out = _clear_thinking(out, turns)
    return out


def _clear_uses(
    conversation: tuple[Message, ...], edits: ProviderEdits, count: int
) -> tuple[Message, ...]:
    edit = edits.clear_tool_uses
    assert edit is not None
    answered = {
        r.tool_use_id
        for m in conversation
        if isinstance(m, UserMessage)
        for r in m.tool_results
        if r.content != edit.placeholder
    }
    clearable = [
        u
        for m in conversation
        if isinstance(m, AssistantMessage)
        for u in m.tool_uses
        if u.name not in edit.exclude_tools and u.id in answered
    ]
    cleared = {u.id: u for u in clearable[:count]}
    inputs = edit.clear_tool_inputs

    def clear(result: ToolResultBlock) -> ToolResultBlock:
        return result.evolve(content=edit.placeholder) if result.tool_use_id in cleared else result

    def emptied(block: ToolUseBlock) -> bool:
        if block.id not in cleared:
            return False
        return inputs is True or (isinstance(inputs, tuple) and block.name in inputs)

    out: list[Message] = []
    for message in conversation:
        if isinstance(message, UserMessage):
            message = replace_results(message, clear)
        elif any(isinstance(b, ToolUseBlock) and emptied(b) for b in message.content):
            message = AssistantMessage(
                content=tuple(
                    b.evolve(input={}) if isinstance(b, ToolUseBlock) and emptied(b) else b
                    for b in message.content
                )
            )
        out.append(message)
    return tuple(out)


def _clear_thinking(conversation: tuple[Message, ...], count: int) -> tuple[Message, ...]:
    turn_of = assistant_turns(conversation)
    with_thinking = sorted(
        {
            turn_of[i]
            for i, m in enumerate(conversation)
            if i in turn_of and any(isinstance(b, _THINKING) for b in m.content)
        }
    )
    cleared = set(with_thinking[:count])
    out: list[Message] = []
    for index, message in enumerate(conversation):
        if turn_of.get(index) in cleared:
            left = tuple(b for b in message.content if not isinstance(b, _THINKING))
            if not left:
                continue
            message = AssistantMessage(content=left)
        out.append(message)
    return tuple(out)


def reported_items(
    items: Sequence[ManifestItem],
    request: ModelRequest,
    edits: ProviderEdits,
    reported: Sequence[Mapping[str, Any]],
    cache: TokenCache,
) -> tuple[ManifestItem, ...] | None:
    """The items of ``request`` (whose manifest items are ``items``) as the provider billed
    it after the edits it ``reported``; None when it reported clearing nothing."""
    if not (
        _count(reported, "clear_tool_uses_20250919", "cleared_tool_uses")
        or _count(reported, "clear_thinking_20251015", "cleared_thinking_turns")
    ):
        return None
    lead = 1 if any(i.placement == "summary" for i in items) else 0
    end = len(request.messages) - request.material_messages
    conversation = request.messages[lead:end]
    edited = as_reported(conversation, edits, reported)
    before = [i for i in items if i.placement in ("system", "tools", "summary")]
    after = [i for i in items if i.placement in ("transient", "references")]
    return (*before, *message_items(edited, cache), *after)
