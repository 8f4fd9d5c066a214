"""The messages of an OpenTelemetry LLM span, in the GenAI semantic conventions' shapes as
they changed: ``{role, parts}`` (``text``, ``tool_call``, ``tool_call_response``, ``blob``,
``reasoning``), the older ``{role, content}`` with OpenAI-style ``tool_calls`` (any-agent),
OpenLLMetry's indexed ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*`` attributes, and
OpenInference's flattened lists. `ctxlab.io.formats.otel.parse` turns them into a conversation."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

from ctxlab.messages import ProviderUsage, ToolSchema
from ctxlab.util._json import NOT_JSON, parse_json

__all__ = [
    "CallParts",
    "Turn",
    "as_text",
    "genai_turns",
    "indexed",
    "indexed_prompts",
    "json_value",
]

Turn = tuple[str, list[dict[str, Any]]]
"""A role and its blocks (Anthropic-shaped dicts, for the conversation builder)."""

CallParts = tuple[list[Turn], list[Turn], str, tuple[ToolSchema, ...], ProviderUsage | None]
"""One model call as a framework's span records it: inputs, outputs, System text, tool schemas
and usage (what each framework's span reader returns)."""


def json_value(value: Any) -> Any:
    # Structured attributes travel as JSON strings (OTel attributes are flat); a kvlist or array
    # exporter sends them decoded.
    if isinstance(value, str):
        parsed = parse_json(value)
        return value if parsed is NOT_JSON else parsed
    return value


def as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _part_block(part: Mapping[str, Any]) -> dict[str, Any]:
    kind = part.get("type")
    if kind == "text":
        return {"type": "text", "text": as_text(part.get("content", ""))}
    if kind == "tool_call":
        arguments = json_value(part.get("arguments"))
        return {
            "type": "tool_use",
            "id": str(part.get("id") or ""),
            "name": str(part.get("name") or "tool"),
            "input": arguments if isinstance(arguments, dict) else {"arguments": arguments},
        }
    if kind == "tool_call_response":
        result = part.get("response", part.get("result", ""))
        return {
            "type": "tool_result",
            "tool_use_id": str(part.get("id") or ""),
            "content": as_text(result),
        }
    if kind == "blob" and part.get("modality") == "image" and isinstance(part.get("content"), str):
        data = part["content"]
        try:
            base64.b64decode(data, validate=True)
        except ValueError:
            return {"type": "blob"}
        media = str(part.get("mime_type") or "image/png")
        return {"type": "image", "source": {"type": "base64", "media_type": media, "data": data}}
    if kind == "reasoning":
        return {"type": "thinking", "thinking": as_text(part.get("content", ""))}
    # uri, file, ...: counted as dropped by the builder.
    return {"type": f"otel:{kind}"}


def _parts_of(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A message's parts: the conventions' ``parts``, or the older ``{role, content}`` shape
    (any-agent, OpenLLMetry) with OpenAI-style ``tool_calls`` and ``tool`` results."""
    if isinstance(message.get("parts"), list):
        return [p for p in message["parts"] if isinstance(p, Mapping)]
    parts: list[Mapping[str, Any]] = []
    content = message.get("content")
    if message.get("role") == "tool":
        response = content if content is not None else message.get("result", "")
        return [
            {
                "type": "tool_call_response",
                "id": message.get("tool_call_id") or message.get("id"),
                "response": response,
            }
        ]
    if isinstance(content, str) and content:
        parts.append({"type": "text", "content": content})
    elif isinstance(content, list):
        for item in content:
            if isinstance(item, str):
                parts.append({"type": "text", "content": item})
            elif isinstance(item, Mapping) and isinstance(item.get("text"), str):
                parts.append({"type": "text", "content": item["text"]})
    for call in message.get("tool_calls") or ():
        if isinstance(call, Mapping):
            inner = call.get("function")
            function: Mapping[str, Any] = inner if isinstance(inner, Mapping) else call
            parts.append(
                {
                    "type": "tool_call",
                    "id": call.get("id"),
                    "name": function.get("name"),
                    "arguments": function.get("arguments"),
                }
            )
    return parts


def genai_turns(messages: Any) -> tuple[list[Turn], list[str]]:
    turns: list[Turn] = []
    system: list[str] = []
    if isinstance(messages, Mapping):  # one output message, not a list (any-agent's gen_ai.output)
        messages = [messages]
    if isinstance(messages, str) and messages:
        messages = [{"role": "assistant", "content": messages}]
    for message in messages if isinstance(messages, list) else ():
        if not isinstance(message, Mapping):
            continue
        role = message.get("role")
        parts = _parts_of(message)
        if role == "system":
            system.extend(as_text(p.get("content", "")) for p in parts if p.get("type") == "text")
            continue
        blocks = [_part_block(p) for p in parts]
        turns.append(("assistant" if role in ("assistant", "model") else "user", blocks))
    return turns, system


def indexed_prompts(attrs: dict[str, Any]) -> None:
    """OpenLLMetry's indexed attributes (``gen_ai.prompt.N.role`` / ``.content`` /
    ``.tool_calls.M.*``, ``gen_ai.completion.N.*``) and any-agent's ``gen_ai.output``, as the
    conventions' message lists (in place)."""
    for prefix, target in (
        ("gen_ai.prompt.", "gen_ai.input.messages"),
        ("gen_ai.completion.", "gen_ai.output.messages"),
    ):
        if target in attrs:
            continue
        messages = indexed(attrs, prefix)
        if messages:
            for message in messages:
                calls = [
                    {
                        "id": c.get("id"),
                        "function": {"name": c.get("name"), "arguments": c.get("arguments")},
                    }
                    for c in indexed(message, "tool_calls.")
                ]
                if calls:
                    message["tool_calls"] = calls
            attrs[target] = messages
    if "gen_ai.output.messages" not in attrs and "gen_ai.output" in attrs:
        output = json_value(attrs["gen_ai.output"])
        if output not in (None, ""):
            attrs["gen_ai.output.messages"] = output


def indexed(attrs: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """OpenInference's flattened lists: ``prefix.0.rest`` keys as a list of {rest: value}."""
    items: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        if not key.startswith(prefix):
            continue
        index, _, rest = key[len(prefix) :].partition(".")
        if index.isascii() and index.isdigit() and rest:
            items.setdefault(int(index), {})[rest] = value
    return [items[i] for i in sorted(items)]
