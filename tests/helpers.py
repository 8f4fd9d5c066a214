"""Builders of conversations for the pipeline tests."""

from __future__ import annotations

from ctxlab import AssistantMessage, ToolResultBlock, ToolUseBlock, UserMessage

Conversation = list[UserMessage | AssistantMessage]


def tool_turn(call_id: str, output: str, *, name: str = "bash", arg: str = "ls") -> Conversation:
    """An assistant tool call and the user message carrying its result."""
    return [
        AssistantMessage(content=(ToolUseBlock(id=call_id, name=name, input={"cmd": arg}),)),
        UserMessage(content=(ToolResultBlock(tool_use_id=call_id, content=output),)),
    ]


def session(turns: int, output_chars: int = 400, task: str = "Fix src/app.py") -> Conversation:
    """A user request followed by ``turns`` tool exchanges."""
    messages: Conversation = [UserMessage(content=task)]
    for i in range(turns):
        messages += tool_turn(f"call_{i}", f"line {i}\n" + "x" * output_chars, arg=f"cat f{i}.py")
    return messages
