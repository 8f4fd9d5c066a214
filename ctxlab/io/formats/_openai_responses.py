"""OpenAI Responses API items (``input`` lists: ``message``, ``function_call``,
``function_call_output``, ``reasoning``) as a conversation (`ctxlab.io.formats._chat` reads chat
messages)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._build import ConversationBuilder
from ctxlab.io.formats._chat import _text, arguments_of

__all__ = ["from_openai_responses", "is_openai_responses"]

_RESPONSES_TYPES = {"message", "function_call", "function_call_output", "reasoning"}


def is_openai_responses(items: Sequence[Any]) -> bool:
    """Whether a list holds OpenAI Responses API input/output items."""
    typed = [i for i in items[:50] if isinstance(i, Mapping) and "type" in i]
    return (
        bool(typed)
        and all(i.get("type") in _RESPONSES_TYPES for i in typed)
        and any(
            i.get("type") in ("function_call", "function_call_output")
            or (i.get("type") == "message" and "role" in i)
            for i in typed
        )
    )


def from_openai_responses(items: Sequence[Any], where: str) -> tuple[ConversationBuilder, str]:
    """The conversation and System text of Responses API items (``message``,
    ``function_call``, ``function_call_output``; ``reasoning`` and other items are counted as
    skipped)."""
    builder = ConversationBuilder(where, unit="item")
    system: list[str] = []
    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            msg = f"{where} item {index}: not an object"
            raise MessageFormatError(msg)
        kind = item.get("type", "message")
        builder.record(str(kind), raw=item)
        if kind == "message":
            role, text = item.get("role"), _text(item.get("content"))
            if role in ("system", "developer"):
                system.append(text)
                builder.use()
            elif role in ("user", "assistant"):
                if not builder.text(role, text):
                    builder.skip("message with nothing kept")
            else:
                msg = f"{where} item {index}: unknown role {role!r}"
                raise MessageFormatError(msg)
        elif kind == "function_call":
            builder.add(
                "assistant",
                [
                    {
                        "type": "tool_use",
                        "id": str(item.get("call_id") or item.get("id") or f"fc_{index}"),
                        "name": str(item.get("name") or "function"),
                        "input": arguments_of(item.get("arguments")),
                    }
                ],
            )
        elif kind == "function_call_output":
            output = item.get("output")
            builder.add(
                "user",
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": str(item.get("call_id")),
                        "content": output if isinstance(output, str) else _text(output),
                    }
                ],
            )
        else:
            builder.skip(str(kind))  # reasoning, ...
    return builder, "\n\n".join(system)
