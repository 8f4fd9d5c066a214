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
from ctxlab.messages import AssistantMessage, UserMessage
from ctxlab.messages._request import ModelRequest
from ctxlab.pipeline._provider_edits import (
    THINKING,
    assistant_turns,
    cleared_calls,
    without_thinking,
)
from ctxlab.pipeline._scan import message_items
from ctxlab.tokens import TokenCache

__all__ = ["as_reported", "reported_items"]

Message = UserMessage | AssistantMessage


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
    cleared = clearable[:count]
    named = edit.clear_tool_inputs
    inputs = {
        u.id for u in cleared if named is True or (isinstance(named, tuple) and u.name in named)
    }
    return cleared_calls(conversation, {u.id for u in cleared}, inputs, edit.placeholder)


def _clear_thinking(conversation: tuple[Message, ...], count: int) -> tuple[Message, ...]:
    turn_of = assistant_turns(conversation)
    with_thinking = sorted(
        {
            turn_of[i]
            for i, m in enumerate(conversation)
            if i in turn_of and any(isinstance(b, THINKING) for b in m.content)
        }
    )
    return without_thinking(conversation, set(with_thinking[:count]))[0]


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
