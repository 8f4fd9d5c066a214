"""Chat-message lists: OpenAI Chat Completions (``tool_calls``, ``role: "tool"``, the legacy
``function_call``), Anthropic Messages, tau-bench episodes (OpenAI messages in ``traj``) and the
OpenAI Responses API's items."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._build import ConversationBuilder, anthropic_block, image_block
from ctxlab.messages import ProviderUsage
from ctxlab.messages._request import ToolSchema
from ctxlab.models._openai_usage import chat_usage
from ctxlab.util._json import NOT_JSON, parse_json

__all__ = [
    "arguments_of",
    "from_anthropic",
    "from_openai",
    "is_openai",
    "reasoning_blocks",
    "tool_schemas",
    "tool_use_of",
]


_OPENAI_PARTS = {"image_url", "input_audio", "file"}
"""Content part types only OpenAI's Chat Completions has."""


def is_openai(messages: Sequence[Any]) -> bool:
    """Whether role dicts use OpenAI's shape (a ``tool`` role, ``tool_calls``, a system role,
    an ``image_url`` part)."""
    return any(
        isinstance(m, Mapping)
        and (
            m.get("role") in ("tool", "function", "system", "developer")
            or "tool_calls" in m
            or "function_call" in m
            or (
                isinstance(m.get("content"), list)
                and any(
                    isinstance(p, Mapping) and p.get("type") in _OPENAI_PARTS for p in m["content"]
                )
            )
        )
        for m in messages
    )


def _user_blocks(content: Any) -> list[dict[str, Any]]:
    """A user message's content parts as blocks: text, images (``image_url``: a data URL or a
    link), anything else kept as a provider block — never dropped."""
    if not isinstance(content, list):
        text = _text(content)
        return [{"type": "text", "text": text}] if text.strip() else []
    blocks: list[dict[str, Any]] = []
    for part in content:
        if isinstance(part, str):
            blocks.append({"type": "text", "text": part})
        elif not isinstance(part, Mapping):
            continue
        elif part.get("type") == "text" and isinstance(part.get("text"), str):
            if part["text"].strip():
                blocks.append({"type": "text", "text": part["text"]})
        elif part.get("type") == "image_url" and isinstance(part.get("image_url"), Mapping):
            blocks.append(image_block(str(part["image_url"].get("url") or "")))
        else:
            blocks.append({"type": "provider", "data": dict(part)})
    return blocks


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", "")) if isinstance(part, Mapping) else str(part)
            for part in content
        )
    return json.dumps(content, ensure_ascii=False)


def arguments_of(raw: Any) -> dict[str, Any]:
    """A tool call's arguments (an object, or its JSON text) as a dict; what does not parse is
    kept under ``_raw_arguments``."""
    if isinstance(raw, Mapping):
        return dict(raw)
    value = parse_json(raw) if isinstance(raw, str) and raw.strip() else {}
    if value is NOT_JSON:
        return {"_raw_arguments": raw}  # (nested too deeply counts as not parsing)
    return value if isinstance(value, dict) else {"_arguments": value}


def tool_use_of(call: Mapping[str, Any], fallback_id: str) -> dict[str, Any]:
    """An OpenAI-style tool call (``{"id", "function": {"name", "arguments"}}``) as a
    ``tool_use`` block; ``fallback_id`` when it has no id."""
    function = call.get("function")
    function = function if isinstance(function, Mapping) else {}
    return {
        "type": "tool_use",
        "id": str(call.get("id") or fallback_id),
        "name": str(function.get("name") or "tool"),
        "input": arguments_of(function.get("arguments")),
    }


def reasoning_blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """An OpenAI-style reply's reasoning as thinking blocks: LiteLLM's ``thinking_blocks``
    (Anthropic's, with their signatures; redacted ones as they came), else the text of
    ``reasoning_content`` (LiteLLM, DeepSeek, vLLM) or ``reasoning`` (OpenRouter)."""
    blocks: list[dict[str, Any]] = []
    thinking = message.get("thinking_blocks")
    for block in thinking if isinstance(thinking, list) else ():
        block = block if isinstance(block, Mapping) else {}
        if block.get("type") == "thinking" and isinstance(block.get("thinking"), str):
            signature = block.get("signature")
            blocks.append(
                {
                    "type": "thinking",
                    "thinking": block["thinking"],
                    "signature": signature if isinstance(signature, str) else "",
                }
            )
        elif block.get("type") == "redacted_thinking" and isinstance(block.get("data"), str):
            blocks.append({"type": "redacted_thinking", "data": block["data"]})
    if blocks:
        return blocks  # (LiteLLM's reasoning_content beside them is their text again)
    for key in ("reasoning_content", "reasoning"):
        text = message.get(key)
        if isinstance(text, str) and text.strip():
            return [{"type": "thinking", "thinking": text}]
    return []


def openai_usage(usage: Any) -> ProviderUsage | None:
    """OpenAI-style usage (``prompt_tokens`` with cache reads and writes among them) as
    ctxlab's, read as `OpenAIModel` reads a live reply's (`ctxlab.models._openai_usage`)."""
    return chat_usage(usage) if isinstance(usage, Mapping) else None


def from_openai(messages: Sequence[Any], where: str) -> tuple[ConversationBuilder, str]:
    """The conversation and the System text of OpenAI chat messages."""
    builder = ConversationBuilder(where, unit="message")
    system: list[str] = []
    legacy = 0
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            msg = f"{where} message {index}: not an object with a role"
            raise MessageFormatError(msg)
        role = message.get("role")
        builder.record(f"{role} message")
        if role in ("system", "developer"):
            system.append(_text(message.get("content")))
            builder.use()
        elif role == "user":
            if not builder.add("user", _user_blocks(message.get("content"))):
                builder.skip("message with nothing kept")
        elif role == "assistant":
            blocks = reasoning_blocks(message)
            thinking = message.get("thinking_blocks")
            if isinstance(thinking, list) and len(thinking) > len(blocks):
                builder.leave_out("thinking block without its text", len(thinking) - len(blocks))
            if _text(message.get("content")).strip():
                blocks.append({"type": "text", "text": _text(message.get("content"))})
            calls = message.get("tool_calls") or ()
            for call in calls if isinstance(calls, list) else ():
                if not isinstance(call, Mapping):
                    msg = f"{where} message {index}: a tool call is not an object"
                    raise MessageFormatError(msg)
                blocks.append(tool_use_of(call, f"call_{index}"))
            if isinstance(message.get("function_call"), Mapping):
                legacy += 1
                function = message["function_call"]
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": f"function_{legacy}",
                        "name": str(function.get("name") or "function"),
                        "input": arguments_of(function.get("arguments")),
                    }
                )
            if not builder.add("assistant", blocks, openai_usage(message.get("usage"))):
                builder.skip("empty reply")
        elif role in ("tool", "function"):
            call_id = message.get("tool_call_id") if role == "tool" else f"function_{legacy}"
            builder.add(
                "user",
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": str(call_id),
                        "content": _text(message.get("content")),
                    }
                ],
            )
        else:
            msg = f"{where} message {index}: unknown role {role!r}"
            raise MessageFormatError(msg)
    return builder, "\n\n".join(s for s in system if s)


def from_anthropic(
    messages: Sequence[Any],
    where: str,
    usage: Mapping[int, ProviderUsage] | None = None,
    label: str = "",
    times: Mapping[int, Any] | None = None,
) -> ConversationBuilder:
    """The conversation of Anthropic Messages dicts (string or block content). Results a harness
    wrote back as text (Cline and Roo Code: ``[read_file for 'x'] Result:`` then the output)
    become the tool results of the calls they answer. ``usage`` maps a reply's index in
    ``messages`` to what its request was billed (an importer that read it beside the
    messages), ``times`` to when it was recorded (epoch milliseconds, as Cline writes them);
    ``label`` names the file in the census's kinds (a format of several files)."""
    builder = ConversationBuilder(where, unit="message")
    billed = usage or {}
    pending: list[tuple[str, str]] = []  # (id, name) of the last reply's calls
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") not in ("user", "assistant"):
            msg = f"{where} message {index}: expected a dict with role 'user' or 'assistant'"
            raise MessageFormatError(msg)
        builder.record(f"{label}{message['role']} message")
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}] if content.strip() else []
        if not isinstance(content, list):
            msg = f"{where} message {index}: 'content' must be a string or a list of blocks"
            raise MessageFormatError(msg)
        blocks = [
            anthropic_block(b) if isinstance(b, Mapping) else {"type": "text", "text": str(b)}
            for b in content
        ]
        if message["role"] == "assistant":
            pending = [
                (str(b.get("id")), str(b.get("name"))) for b in blocks if b["type"] == "tool_use"
            ]
        elif pending and not any(b["type"] == "tool_result" for b in blocks):
            blocks, paired = _text_results(blocks, pending)
            if paired:
                builder.notes["text_results_paired"] = (
                    builder.notes.get("text_results_paired", 0) + paired
                )
            pending = []
        else:
            pending = []
        if not builder.add(message["role"], blocks, billed.get(index)):
            builder.skip("message with nothing kept")
        elif times and message["role"] == "assistant":
            builder.reply_time(times.get(index), "ms", replace=index in billed)
    return builder


_TEXT_RESULT = re.compile(r"^\[(?P<name>[\w.:-]+)(?: for [^\n]*?)?\] Result:[ \t]*\n?", re.DOTALL)


def _text_results(
    blocks: list[dict[str, Any]], pending: list[tuple[str, str]]
) -> tuple[list[dict[str, Any]], int]:
    """``blocks`` with each text-encoded result (a ``[name ...] Result:`` header, then its
    output up to the next header or the harness's ``<environment_details>``) as the tool result
    of the pending call of that name."""
    out: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    open_calls = list(pending)
    paired = 0
    for block in blocks:
        text = block.get("text") if block["type"] == "text" else None
        header = _TEXT_RESULT.match(text) if isinstance(text, str) else None
        if header is not None and open_calls:
            name = header.group("name")
            call = next((c for c in open_calls if c[1] == name), open_calls[0])
            open_calls.remove(call)
            current = {"type": "tool_result", "tool_use_id": call[0], "content": []}
            out.append(current)
            paired += 1
            rest = text[header.end() :] if isinstance(text, str) else ""
            if rest.strip():
                current["content"].append({"type": "text", "text": rest})
            continue
        ends = isinstance(text, str) and text.lstrip().startswith("<environment_details>")
        if current is not None and not ends and block["type"] in ("text", "image"):
            current["content"].append(block)
            continue
        current = None
        out.append(block)
    for result in out:
        if result["type"] == "tool_result" and not result["content"]:
            result["content"] = "(no output)"
    return out, paired


def tool_schemas(value: Any, where: str) -> tuple[ToolSchema, ...]:
    """Tool schemas in Anthropic (``input_schema``), OpenAI (``function.parameters``) or flat
    (``parameters``) shape."""
    if not value:
        return ()
    tools: list[ToolSchema] = []
    for index, tool in enumerate(value if isinstance(value, list) else []):
        if not isinstance(tool, Mapping):
            msg = f"{where} tool {index}: not an object"
            raise MessageFormatError(msg)
        inner = tool.get("function")
        function: Mapping[str, Any] = inner if isinstance(inner, Mapping) else tool
        schema = (
            function.get("input_schema")
            or function.get("parameters")
            or function.get("inputSchema")  # the Vercel AI SDK 5
            or {"type": "object"}
        )
        if not isinstance(schema, Mapping):
            name = function.get("name") or index
            msg = (
                f"{where} tool {name!r}: its input schema is {type(schema).__name__}, not an "
                "object (a JSON Schema): fix or remove that tool's schema in the file"
            )
            raise MessageFormatError(msg)
        tools.append(
            ToolSchema(
                str(function.get("name") or f"tool_{index}"),
                str(function.get("description") or ""),
                dict(schema),
            )
        )
    return tuple(tools)
