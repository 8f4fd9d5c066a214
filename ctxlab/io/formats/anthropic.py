"""Anthropic Messages: a list of them, or a request holding one (``system``, ``messages``,
``tools``). Known by its ``role`` fields alone, and not OpenAI's: asked last of all."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxlab.io._format import SessionFormat
from ctxlab.io.formats._chat import from_anthropic
from ctxlab.io.formats._messages import chat_messages, messages_reader


def _is_request(value: Mapping[str, Any]) -> bool:
    return chat_messages(value) is not None


def _is_list(value: list[Any]) -> bool:
    return all(isinstance(v, Mapping) and "role" in v for v in value[:50])


def _read_anthropic(messages: list[Any], where: str) -> tuple[Any, str]:
    return from_anthropic(messages, where), ""


FORMAT = SessionFormat(
    name="anthropic",
    tool="Anthropic Messages API messages (and requests holding them)",
    learned_from="the Anthropic API reference (messages: content blocks, tool_use)",
    priority=910,
    never="OpenAI messages (asked before it)",
    document=_is_request,
    records=_is_list,
    read=messages_reader(_read_anthropic),
    guess=True,
    census="messages",
    messages=True,
)
