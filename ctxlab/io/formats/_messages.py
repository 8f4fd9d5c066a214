"""The reader the chat formats share (Anthropic, OpenAI Chat Completions and Responses,
LangChain, pydantic-ai): a list of the format's messages, or a request holding them with its
``system`` and ``tools``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._build import ConversationBuilder
from ctxlab.io._format import Reader
from ctxlab.io._readers import built_transcript
from ctxlab.io._transcript import Transcript
from ctxlab.io.formats._chat import tool_schemas
from ctxlab.messages._request import ToolSchema

__all__ = ["ChatReader", "chat_messages", "messages_reader"]


def chat_messages(value: Mapping[str, Any]) -> list[Any] | None:
    """The messages of a chat request (its ``messages``) or of one message (itself); None for
    an object that is neither."""
    if "messages" in value and isinstance(value["messages"], list):
        return value["messages"]
    return [value] if "role" in value else None


ChatReader = Callable[[list[Any], str], tuple[ConversationBuilder, str]]
"""A chat format's messages and where they came from → its builder and the System text found
among them."""


def messages_reader(read: ChatReader) -> Reader:
    """The reader of a chat format: a list of its messages, or a request holding them (with
    ``system`` and ``tools``)."""

    def reader(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
        tools: tuple[ToolSchema, ...] = ()
        system = ""
        messages = data
        if isinstance(data, Mapping):
            messages = data.get("messages", [data])
            system = _system(data.get("system"))
            tools = tool_schemas(data.get("tools"), where)
        if not isinstance(messages, list):
            msg = f"{where}: expected a list of messages"
            raise MessageFormatError(msg)
        builder, found = read(messages, where)
        system = "\n\n".join(s for s in (system, found) if s)
        return built_transcript(name, builder, meta, system, tools)

    return reader


def _system(value: Any) -> str:
    if isinstance(value, list):
        return "\n\n".join(str(b.get("text", "")) for b in value if isinstance(b, Mapping))
    return value if isinstance(value, str) else ""
