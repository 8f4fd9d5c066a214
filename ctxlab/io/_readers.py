"""Reading decoded data as a format (its declaration's reader: `ctxlab.io.formats`), the readers
of the chat formats (a list of messages, or a request holding one), and the `Transcript` every
reader ends in."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._build import ConversationBuilder
from ctxlab.io._census import Census
from ctxlab.io._chat import tool_schemas
from ctxlab.io._compactions import place_compactions
from ctxlab.io._format import Reader
from ctxlab.io._registry import format_named
from ctxlab.io._transcript import Transcript
from ctxlab.messages._request import ToolSchema

__all__ = ["built_transcript", "chat_messages", "from_data", "messages_reader"]


def built_transcript(
    name: str,
    builder: ConversationBuilder,
    meta: dict[str, Any],
    system: str,
    tools: tuple[ToolSchema, ...],
) -> Transcript:
    """The transcript of a finished builder: its messages, notes, usage and times, the
    recorded compactions placed (`MessageFormatError` when it holds no message)."""
    messages, notes, usage, times = builder.finish()
    if not messages:
        census = Census.from_meta(notes.get("census"))
        said = f" ({census})" if census is not None and census.read else ""
        msg = f"{builder.where}: no messages{said}"
        raise MessageFormatError(msg)
    place_compactions(meta, messages)
    return Transcript(
        name=name,
        meta={**meta, **notes},
        system=system,
        messages=tuple(messages),
        tools=tools,
        usage=usage,
        times=times,
    )


def from_data(data: Any, kind: str, where: str, name: str, episode: int) -> Transcript:
    """The transcript of decoded ``data`` read as ``kind`` (a registered format's reader)."""
    meta: dict[str, Any] = {"source": kind}
    declared = format_named(kind)
    if declared is None or declared.read is None:
        msg = f"{where}: format {kind!r} needs a file path"
        raise MessageFormatError(msg)
    return declared.read(data, where, name, episode, meta)


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
