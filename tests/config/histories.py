"""Generated agent histories for the exports' differential tests, and each framework's form of
them — written here from the frameworks' documented message types, not with ctxlab's adapters:
a history a test hands to LangChain, Inspect AI or the Agents SDK is its own.

A history is a user task, then turns: the assistant (thinking sometimes, text sometimes, one to
three tool calls of a few tools), the results in one user message, and now and then the user
speaking again. It ends where a request is made: after results, or after the user spoke.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

from ctxlab import ContextConfig
from ctxlab.config import ClearToolUses
from ctxlab.messages import (
    AssistantMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from tests.helpers import Message

TOOLS = ("read", "bash", "memory")


@st.composite
def histories(
    draw: st.DrawFn, *, max_turns: int = 14, max_calls: int = 3, thinking: bool = True
) -> list[Message]:
    messages: list[Message] = [UserMessage(content="Fix the failing test in src/app.py.")]
    calls = 0
    for turn in range(draw(st.integers(1, max_turns))):
        blocks: list[Any] = []
        if thinking and draw(st.booleans()):
            blocks.append(ThinkingBlock(thinking=f"plan {turn}", signature=f"sig{turn}"))
        if draw(st.booleans()):
            blocks.append(TextBlock(text=f"Step {turn}."))
        uses = []
        for _ in range(draw(st.integers(1, max_calls))):
            name = draw(st.sampled_from(TOOLS))
            uses.append(ToolUseBlock(id=f"call{calls}", name=name, input={"arg": f"x{calls}"}))
            calls += 1
        messages.append(AssistantMessage(content=(*blocks, *uses)))
        results = [
            ToolResultBlock(
                tool_use_id=u.id,
                content=f"{u.name} {u.id}: " + "output line\n" * draw(st.integers(1, 120)),
            )
            for u in uses
        ]
        messages.append(UserMessage(content=tuple(results)))
        if draw(st.integers(0, 4)) == 0:
            messages.append(UserMessage(content=f"Now look at step {turn} again."))
    return messages


# -- LangChain (langchain_core.messages) ---------------------------------------------------------


def tool_use_clears(
    least: st.SearchStrategy[int],
    uses: st.SearchStrategy[int | None] | None = None,
    placeholder: st.SearchStrategy[str] | None = None,
) -> st.SearchStrategy[ClearToolUses]:
    """Tool-use clears over these histories' tools: triggered at a number of input tokens, or at
    a number of tool uses where ``uses`` draws one; keeping up to 6 uses, clearing at least
    ``least`` tokens, sparing up to two tools, clearing the inputs of none, all or bash's;
    the placeholder drawn by ``placeholder`` (the default one without)."""
    return st.builds(
        lambda tokens, uses, keep, least, exclude, inputs, placeholder: ClearToolUses(
            trigger_input_tokens=None if uses else tokens,
            trigger_tool_uses=uses,
            keep=keep,
            clear_at_least=least,
            exclude_tools=exclude,
            clear_tool_inputs=inputs,
            placeholder=placeholder,
        ),
        st.integers(1, 30_000),
        st.none() if uses is None else uses,
        st.integers(0, 6),
        least,
        st.lists(st.sampled_from(TOOLS), max_size=2, unique=True).map(tuple),
        st.sampled_from([False, True, ("bash",)]),
        st.just(ClearToolUses().placeholder) if placeholder is None else placeholder,
    )


def to_langchain(messages: Sequence[Message]) -> list[Any]:
    """HumanMessage for the user's words, AIMessage with its tool_calls, one ToolMessage per
    result (LangChain's own shape of a tool exchange)."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    names = {u.id: u.name for m in messages if isinstance(m, AssistantMessage) for u in m.tool_uses}
    out: list[Any] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
            calls = [{"id": u.id, "name": u.name, "args": dict(u.input)} for u in message.tool_uses]
            out.append(AIMessage(content=text, tool_calls=calls))
            continue
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                name = names[block.tool_use_id]
                out.append(
                    ToolMessage(content=block.text, tool_call_id=block.tool_use_id, name=name)
                )
            elif isinstance(block, TextBlock):
                out.append(HumanMessage(content=block.text))
    return out


# -- Inspect AI (inspect_ai.model) ---------------------------------------------------------------


def to_inspect(messages: Sequence[Message]) -> list[Any]:
    """ChatMessageUser, ChatMessageAssistant (reasoning as ContentReasoning, calls as
    ToolCall), one ChatMessageTool per result."""
    from inspect_ai._util.content import ContentReasoning, ContentText
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser
    from inspect_ai.tool import ToolCall

    names = {u.id: u.name for m in messages if isinstance(m, AssistantMessage) for u in m.tool_uses}
    out: list[Any] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            content: list[Any] = []
            for block in message.content:
                if isinstance(block, ThinkingBlock):
                    content.append(
                        ContentReasoning(reasoning=block.thinking, signature=block.signature)
                    )
                elif isinstance(block, TextBlock):
                    content.append(ContentText(text=block.text))
            calls = [
                ToolCall(id=u.id, function=u.name, arguments=dict(u.input))
                for u in message.tool_uses
            ]
            out.append(ChatMessageAssistant(content=content or "", tool_calls=calls or None))
            continue
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                out.append(
                    ChatMessageTool(
                        content=block.text,
                        tool_call_id=block.tool_use_id,
                        function=names[block.tool_use_id],
                    )
                )
            elif isinstance(block, TextBlock):
                out.append(ChatMessageUser(content=block.text))
    return out


# -- The OpenAI Agents SDK (Responses input items) -----------------------------------------------


def agents_outputs(config: ContextConfig, items: list[dict[str, Any]]) -> dict[str, str]:
    """The tool outputs, by call id, that the Agents SDK's input filter exported from
    ``config`` (its ``call_model_input_filter``) leaves of the input ``items``."""
    from agents import Agent
    from agents.run_config import CallModelData, ModelInputData

    trimmer = config.export("openai_agents").value.call_model_input_filter
    data = CallModelData(
        model_data=ModelInputData(input=items, instructions=None),  # type: ignore[arg-type]
        agent=Agent(name="a"),
        context=None,
    )
    kept = trimmer(data).input
    return {i["call_id"]: i["output"] for i in kept if i.get("type") == "function_call_output"}


def to_agents_items(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Responses input items: a user message per text, a ``function_call`` per call, a
    ``function_call_output`` per result, in the order the blocks come."""
    out: list[dict[str, Any]] = []
    for message in messages:
        for block in message.content:
            if isinstance(block, TextBlock):
                out.append({"role": message.role, "content": block.text})
            elif isinstance(block, ToolUseBlock):
                arguments = json.dumps(dict(block.input))
                out.append(
                    {
                        "type": "function_call",
                        "call_id": block.id,
                        "name": block.name,
                        "arguments": arguments,
                    }
                )
            elif isinstance(block, ToolResultBlock):
                out.append(
                    {
                        "type": "function_call_output",
                        "call_id": block.tool_use_id,
                        "output": block.text,
                    }
                )
    return out


def thinking_of(messages: Sequence[Message]) -> list[str]:
    """The thinking texts left, in order."""
    return [
        b.thinking
        for m in messages
        if isinstance(m, AssistantMessage)
        for b in m.content
        if isinstance(b, ThinkingBlock)
    ]
