"""OpenAI Chat Completions messages: a list of them, or a request holding one (``messages``,
``tools``). Known by its ``role`` fields alone: asked after every other format."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxlab.io._format import SessionFormat
from ctxlab.io.formats._chat import from_openai, is_openai
from ctxlab.io.formats._messages import chat_messages, messages_reader


def _is_openai_request(value: Mapping[str, Any]) -> bool:
    messages = chat_messages(value)
    return messages is not None and is_openai(messages)


def _is_openai_list(value: list[Any]) -> bool:
    return all(isinstance(v, Mapping) and "role" in v for v in value[:50]) and is_openai(value)


FORMAT = SessionFormat(
    name="openai",
    tool="OpenAI Chat Completions messages (and requests holding them)",
    learned_from="the OpenAI API reference (chat.completions: messages, tool_calls)",
    priority=900,
    never="any format above it: asked last, by its role fields and OpenAI's own fields",
    document=_is_openai_request,
    records=_is_openai_list,
    read=messages_reader(from_openai),
    guess=True,
    census="messages",
    messages=True,
)
