"""Repairing a broken conversation: every tool_use answered, every result with its call, ids
unique, no empty message. Used by the agent (a stored state written broken) and the importers
(sessions recorded by other tools)."""

from __future__ import annotations

from typing import Any

from ctxlab.messages._blocks import ToolResultBlock, ToolUseBlock
from ctxlab.messages._messages import AssistantMessage, UserMessage

__all__ = ["repair_conversation"]

Conversation = tuple[UserMessage | AssistantMessage, ...]


def repair_conversation(conversation: Conversation) -> tuple[Conversation, list[str]]:
    """A valid copy of ``conversation`` and what was changed: results without their call (or
    answering an id twice) are dropped, calls without results get an error result (the last
    reply's calls too), repeated call ids are dropped, and messages left empty are removed."""
    notes: list[str] = []
    out: list[UserMessage | AssistantMessage] = []
    seen: set[str] = set()
    pending: list[str] = []
    for message in conversation:
        if isinstance(message, AssistantMessage):
            if pending:
                out.append(_error_results(pending, notes))
            blocks: list[Any] = []
            for block in message.content:
                if isinstance(block, ToolUseBlock):
                    if block.id in seen:
                        notes.append(f"dropped repeated tool_use id {block.id!r}")
                        continue
                    seen.add(block.id)
                blocks.append(block)
            if len(blocks) != len(message.content):
                message = AssistantMessage(content=tuple(blocks))
            pending = [u.id for u in message.tool_uses]
        else:
            kept: list[Any] = []
            for part in message.content:
                if isinstance(part, ToolResultBlock):
                    if part.tool_use_id not in pending:
                        notes.append(f"dropped tool_result for unknown id {part.tool_use_id!r}")
                        continue
                    pending.remove(part.tool_use_id)
                kept.append(part)
            if pending:
                kept[:0] = _error_results(pending, notes).content
            pending = []
            if tuple(kept) != message.content:
                message = UserMessage(content=tuple(kept))
        if message.content:
            out.append(message)
        else:
            notes.append("removed a message left empty")
    if pending:
        # A session cut off during a tool call: the call is answered so that every request
        # built from this conversation is valid.
        out.append(_error_results(pending, notes))
    return tuple(out), notes


def _error_results(pending: list[str], notes: list[str]) -> UserMessage:
    notes.extend(f"added an error result for unanswered tool_use {tid!r}" for tid in pending)
    results = tuple(
        ToolResultBlock(
            tool_use_id=tid, content="No result was recorded for this call.", is_error=True
        )
        for tid in pending
    )
    pending.clear()
    return UserMessage(content=results)
