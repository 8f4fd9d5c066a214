"""The Anthropic Messages wire format, next to its adapter: lossless conversion of messages,
tool schemas and whole requests.

ctxlab's blocks mirror Anthropic's, so conversion renames nothing: text, images, tool use and
results, thinking and redacted thinking, documents. `HintBlock` travels as a text block wrapped
in ``<system-reminder>`` tags and is recognised on the way back; a block of any other type (server
tool use and results, MCP blocks, search results, types added after this release) is carried as a
`ProviderBlock` and written back exactly as it came. Anthropic's string shorthand for ``content``
is read as one text block.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.messages import (
    ANTHROPIC_BLOCK_TYPES,
    HINT_CLOSE,
    HINT_OPEN,
    MOVED,
    NOT_IN_ROLE,
    RESULT_PART_TYPES,
    AssistantMessage,
    HintBlock,
    ProviderBlock,
    TextBlock,
    ToolResultBlock,
    UserMessage,
    parse_messages,
)
from ctxlab.messages._request import WIRE_FORMATS, ModelRequest, ToolSchema
from ctxlab.util._checks import sequence_of, shown

__all__ = [
    "messages_from_anthropic",
    "messages_to_anthropic",
    "request_to_anthropic",
    "to_anthropic_block",
    "tool_to_anthropic",
]


def to_anthropic_block(block: Any) -> dict[str, Any]:
    """One ctxlab block as an Anthropic content block dict."""
    if isinstance(block, HintBlock):
        return {"type": "text", "text": block.rendered}
    if isinstance(block, ProviderBlock):
        return dict(block.data)
    if isinstance(block, ToolResultBlock) and not isinstance(block.content, str):
        data = block.model_dump(mode="json", exclude_none=True, exclude={"content"})
        data["content"] = [to_anthropic_block(part) for part in block.content]
        return data
    dumped: dict[str, Any] = block.model_dump(mode="json", exclude_none=True)
    return dumped


def messages_to_anthropic(
    messages: Iterable[UserMessage | AssistantMessage],
) -> list[dict[str, Any]]:
    """Messages as the ``messages`` list of an Anthropic request."""
    checked = sequence_of(
        messages, (UserMessage, AssistantMessage), "messages", "a list of messages"
    )
    return [
        {"role": m.role, "content": [to_anthropic_block(b) for b in m.content]} for m in checked
    ]


def tool_to_anthropic(tool: ToolSchema) -> dict[str, Any]:
    """One ``tools`` entry of an Anthropic request."""
    return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}


def request_to_anthropic(request: ModelRequest) -> dict[str, Any]:
    """``system``, ``messages`` and ``tools`` of an Anthropic Messages request."""
    payload: dict[str, Any] = {"messages": messages_to_anthropic(request.messages)}
    if request.system:
        payload["system"] = request.system
    if request.tools:
        payload["tools"] = [tool_to_anthropic(t) for t in request.tools]
    return payload


def _block_from_anthropic(
    block: Any, where: str, *, role: Any = None, in_result: bool = False
) -> Any:
    if not isinstance(block, Mapping):
        msg = f"{where} is {type(block).__name__}, expected a content block dict with a 'type'"
        raise MessageFormatError(msg)
    kind = block.get("type")
    if not isinstance(kind, str) or not kind:
        msg = f"{where} has no 'type'; every Anthropic content block names its type"
        raise MessageFormatError(msg)
    if kind not in (RESULT_PART_TYPES if in_result else ANTHROPIC_BLOCK_TYPES) or (
        isinstance(role, str) and kind in NOT_IN_ROLE.get(role, ())
    ):
        # Server tool blocks, search results, MCP blocks, newer types — and a modelled block
        # its role cannot hold (thinking a user line recorded): carried unchanged.
        return {"type": "provider", "data": dict(block)}
    if kind == "text":
        text = block.get("text")
        if isinstance(text, str) and text.startswith(HINT_OPEN) and text.endswith(HINT_CLOSE):
            return {"type": "hint", "hint": text[len(HINT_OPEN) : -len(HINT_CLOSE)]}
        # Citations and cache_control are request annotations, not content: not kept.
        return {"type": "text", "text": text}
    out = {k: v for k, v in block.items() if k != "cache_control"}
    content = out.get("content", "")
    if kind == "tool_result" and isinstance(content, list):
        out["content"] = [
            _block_from_anthropic(p, f"{where}.content[{i}]", in_result=True)
            for i, p in enumerate(content)
        ]
    return out


def messages_from_anthropic(
    messages: Iterable[Mapping[str, Any]],
) -> list[UserMessage | AssistantMessage]:
    """Read an Anthropic ``messages`` list. Raises `MessageFormatError` naming what is wrong."""
    if isinstance(messages, str | bytes | Mapping) or not isinstance(messages, Iterable):
        msg = f"an Anthropic messages list is a list of dicts with role/content, got {shown(messages)}"
        raise MessageFormatError(msg)
    converted: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            msg = f"message {index} is {type(message).__name__}, expected a dict with role/content"
            raise MessageFormatError(msg)
        content = message.get("content")
        if isinstance(content, str):
            blocks: list[Any] = [TextBlock(text=content)]
        elif isinstance(content, list):
            role = message.get("role")
            blocks = [
                _block_from_anthropic(b, f"message {index} content[{i}]", role=role)
                for i, b in enumerate(content)
            ]
        else:
            msg = f"message {index} has no 'content' string or list of blocks"
            raise MessageFormatError(msg)
        converted.append({"role": message.get("role"), "content": blocks})
    return parse_messages(converted)


# What the layers below offer without importing this module: the request type's `to_anthropic`
# and the deprecated ``ctxlab.messages`` aliases.
WIRE_FORMATS["anthropic_request"] = request_to_anthropic
WIRE_FORMATS["anthropic_tool"] = tool_to_anthropic
MOVED.update(
    messages_from_anthropic=messages_from_anthropic,
    messages_to_anthropic=messages_to_anthropic,
    to_anthropic_block=to_anthropic_block,
)
