"""The OpenAI Chat Completions wire format, next to its adapter: a `ModelRequest` as
``messages``/``tools``, and a completion back as an assistant message."""

from __future__ import annotations

import json
from typing import Any

from ctxlab.exceptions import MalformedReply
from ctxlab.messages import (
    AssistantMessage,
    DocumentBlock,
    HintBlock,
    ImageBlock,
    TextBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.messages._request import ModelRequest, ToolSchema

__all__ = ["assistant_from_openai", "request_to_openai", "tool_to_openai"]


def tool_to_openai(tool: ToolSchema) -> dict[str, Any]:
    """One ``tools`` entry of a Chat Completions request."""
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.input_schema,
        },
    }


def _user_parts(message: UserMessage) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, HintBlock):
            parts.append({"type": "text", "text": block.rendered})
        elif isinstance(block, DocumentBlock) and block.text:
            # Chat Completions has no document part: a text document travels as its text.
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageBlock):
            source = block.source
            url = (
                f"data:{source.media_type};base64,{source.data}"
                if source.type == "base64"
                else source.url
            )
            parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts


def request_to_openai(request: ModelRequest) -> dict[str, Any]:
    """``messages`` (System first, tool results as ``role: "tool"``) and ``tools``."""
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    for message in request.messages:
        if isinstance(message, AssistantMessage):
            text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
            entry: dict[str, Any] = {"role": "assistant", "content": text or None}
            calls = [
                {
                    "id": b.id,
                    "type": "function",
                    "function": {"name": b.name, "arguments": b.input_json},
                }
                for b in message.content
                if isinstance(b, ToolUseBlock)
            ]
            if calls:
                entry["tool_calls"] = calls
            messages.append(entry)
            continue
        # Results first: they must follow the assistant message that made the calls.
        for result in message.tool_results:
            messages.append(
                {"role": "tool", "tool_call_id": result.tool_use_id, "content": result.text}
            )
        parts = _user_parts(message)
        if parts:
            messages.append({"role": "user", "content": parts})
    payload: dict[str, Any] = {"messages": messages}
    if request.tools:
        payload["tools"] = [tool_to_openai(t) for t in request.tools]
    return payload


def assistant_from_openai(message: Any) -> AssistantMessage:
    """An assistant message from a completion's ``choices[0].message`` (dict or SDK object).

    Raises `MalformedReply` for a reply that does not read as a message."""
    try:
        return _assistant_from_openai(message)
    # pydantic's ValidationError is a ValueError; a body of another shape (text, a list, an
    # arguments field that is no text) fails with the others.
    except (ValueError, RecursionError, TypeError, AttributeError, KeyError) as exc:
        msg = f"the model's reply could not be read as a message: {exc}"
        raise MalformedReply(msg) from exc


def _assistant_from_openai(message: Any) -> AssistantMessage:
    data = message if isinstance(message, dict) else message.model_dump(mode="json")
    blocks: list[Any] = []
    if data.get("content"):
        blocks.append(TextBlock(text=str(data["content"])))
    for call in data.get("tool_calls") or ():
        function = call.get("function") or {}
        raw = function.get("arguments") or "{}"
        try:
            arguments = json.loads(raw)
        except (json.JSONDecodeError, RecursionError):
            arguments = {"_raw_arguments": raw}
        if not isinstance(arguments, dict):
            arguments = {"_arguments": arguments}
        blocks.append(
            ToolUseBlock(id=str(call.get("id")), name=str(function.get("name")), input=arguments)
        )
    return AssistantMessage(content=tuple(blocks) or (TextBlock(text=""),))
