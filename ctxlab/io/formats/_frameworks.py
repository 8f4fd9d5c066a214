"""Message histories of agent frameworks: LangChain (``messages_to_dict``: no time; usage with
langchain-anthropic's TTL split of the cache writes) and pydantic-ai
(``ModelMessagesTypeAdapter`` JSON: each response's ``timestamp`` dates its reply)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._block_shapes import has_data
from ctxlab.io._build import ConversationBuilder, as_mapping, image_block
from ctxlab.io.formats._chat import _text, _user_blocks, arguments_of
from ctxlab.messages import ProviderUsage
from ctxlab.messages._usage import count_or_none

__all__ = [
    "from_langchain",
    "from_pydantic_ai",
    "is_langchain",
    "is_pydantic_ai",
    "langchain_parts",
    "langchain_plain",
    "langchain_usage",
    "langchain_writes",
    "pydantic_ai_plain",
]

_LANGCHAIN_TYPES = {"human", "ai", "system", "tool", "function", "chat", "AIMessageChunk"}


def is_langchain(value: Sequence[Any]) -> bool:
    """Whether dicts look like LangChain's ``messages_to_dict`` output."""
    return all(
        isinstance(v, Mapping)
        and v.get("type") in _LANGCHAIN_TYPES
        and isinstance(v.get("data"), Mapping)
        for v in value[:20]
    )


def is_pydantic_ai(value: Sequence[Any]) -> bool:
    """Whether dicts look like pydantic-ai ``ModelMessage`` JSON."""
    return all(
        isinstance(v, Mapping)
        and v.get("kind") in ("request", "response")
        and isinstance(v.get("parts"), list)
        for v in value[:20]
    )


def from_langchain(messages: Sequence[Any], where: str) -> tuple[ConversationBuilder, str]:
    """The conversation and System text of LangChain message dicts."""
    builder = ConversationBuilder(where, unit="message")
    system: list[str] = []
    for index, message in enumerate(messages):
        data = message.get("data") if isinstance(message, Mapping) else None
        if not isinstance(data, Mapping):
            msg = f"{where} message {index}: expected {{'type': ..., 'data': {{...}}}}"
            raise MessageFormatError(msg)
        kind, content = message.get("type"), data.get("content")
        builder.record(f"{kind} message")
        if kind == "system":
            system.append(_text(content))
            builder.use()
        elif kind in ("human", "chat"):
            if not builder.add("user", langchain_parts(content)):
                builder.skip("message with nothing kept")
        elif kind in ("ai", "AIMessageChunk"):
            blocks: list[dict[str, Any]] = []
            if _text(content).strip():
                blocks.append({"type": "text", "text": _text(content)})
            for number, call in enumerate(data.get("tool_calls") or ()):
                if isinstance(call, Mapping):
                    blocks.append(
                        {
                            "type": "tool_use",
                            "id": str(call.get("id") or f"lc_{index}_{number}"),
                            "name": str(call.get("name") or "tool"),
                            "input": arguments_of(call.get("args")),
                        }
                    )
            usage = langchain_usage(data.get("usage_metadata"))
            if usage is not None:
                builder.cache_split(usage, langchain_writes(_details(data["usage_metadata"]))[2])
            if not builder.add("assistant", blocks, usage):
                builder.skip("empty reply")
        elif kind in ("tool", "function"):
            parts = langchain_parts(content) if isinstance(content, list) else []
            pictured = any(p["type"] == "image" for p in parts)
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": str(data.get("tool_call_id")),
                # A result that shows an image keeps it beside its text (it was read as text).
                "content": parts if pictured else _text(content),
            }
            if data.get("status") == "error":
                result["is_error"] = True
            builder.add("user", [result])
        else:
            msg = f"{where} message {index}: unknown LangChain message type {kind!r}"
            raise MessageFormatError(msg)
    return builder, "\n\n".join(system)


def langchain_parts(content: Any) -> list[dict[str, Any]]:
    """A LangChain human (or tool) message's content as blocks: its text, its images in each
    form LangChain carries them — its standard block (``{"type": "image", "base64" or "url",
    "mime_type"}``), 0.3's data block (``source_type``, ``data``), Anthropic's ``source``,
    OpenAI's ``image_url`` — and anything else kept as a provider block (`_user_blocks`).
    (Images were read as empty text: the model's request lost them once ctxlab rebuilt it.)"""
    if not isinstance(content, list):
        return _user_blocks(content)
    blocks: list[dict[str, Any]] = []
    for part in content:
        image = _langchain_image(part) if isinstance(part, Mapping) else None
        blocks.extend([image] if image is not None else _user_blocks([part]))
    return blocks


def _langchain_image(part: Mapping[str, Any]) -> dict[str, Any] | None:
    kind = part.get("type")
    if kind == "image_url" and isinstance(part.get("image_url"), str):
        return image_block(part["image_url"])
    if kind != "image":
        return None
    source = part.get("source")
    if isinstance(source, Mapping):
        block = {"type": "image", "source": dict(source)}
        return block if has_data(block) else None
    media = part.get("mime_type")
    data = part.get("base64") or (part.get("data") if part.get("source_type") == "base64" else None)
    if isinstance(data, str) and data and isinstance(media, str) and media:
        return {"type": "image", "source": {"type": "base64", "media_type": media, "data": data}}
    url = part.get("url")
    return image_block(url) if isinstance(url, str) and url else None


def langchain_usage(usage: Any) -> ProviderUsage | None:
    """LangChain's ``usage_metadata`` as ctxlab's usage (the cache kept apart, the 1-hour
    cache writes of a TTL split that fits: `langchain_writes`)."""
    if not isinstance(usage, Mapping):
        return None
    details = _details(usage)
    writes, hour, _ = langchain_writes(details)
    # LangChain's input tokens include the cached ones (as OpenTelemetry's do).
    counted = ProviderUsage.with_cache_inside(
        usage.get("input_tokens"), usage.get("output_tokens"), details.get("cache_read"), writes
    )
    if 0 < hour <= counted.cache_creation_input_tokens:
        return replace(counted, cache_creation_1h_input_tokens=hour)
    return counted


def _details(usage: Mapping[str, Any]) -> Mapping[str, Any]:
    details = usage.get("input_token_details")
    return details if isinstance(details, Mapping) else {}


def from_pydantic_ai(messages: Sequence[Any], where: str) -> tuple[ConversationBuilder, str]:
    """The conversation and System text of pydantic-ai ``ModelRequest``/``ModelResponse`` JSON."""
    builder = ConversationBuilder(where, unit="part")
    system: list[str] = []
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping) or not isinstance(message.get("parts"), list):
            msg = f"{where} message {index}: expected {{'kind': ..., 'parts': [...]}}"
            raise MessageFormatError(msg)
        if not message["parts"]:
            builder.record(f"{message.get('kind')} message")
            builder.skip("message without parts")
        if message.get("kind") == "request":
            instructions = message.get("instructions")
            if isinstance(instructions, str) and instructions and instructions not in system:
                system.append(instructions)
            for part in message["parts"]:
                _request_part(part if isinstance(part, Mapping) else {}, builder, system)
        else:
            # One response is one reply: its parts are read together.
            builder.record("response part", len(message["parts"]))
            blocks: list[dict[str, Any]] = []
            for part in message["parts"]:
                part = part if isinstance(part, Mapping) else {}
                if part.get("part_kind") == "text":
                    blocks.append({"type": "text", "text": _text(part.get("content"))})
                elif part.get("part_kind") == "tool-call":
                    blocks.append(
                        {
                            "type": "tool_use",
                            "id": str(part.get("tool_call_id") or f"pai_{index}"),
                            "name": str(part.get("tool_name") or "tool"),
                            "input": arguments_of(part.get("args")),
                        }
                    )
                elif part.get("part_kind") == "thinking":
                    blocks.append(
                        {
                            "type": "thinking",
                            "thinking": _text(part.get("content")),
                            "signature": str(part.get("signature") or ""),
                        }
                    )
                else:
                    # Built-in tool calls and returns, files, ...: counted as dropped.
                    blocks.append({"type": f"pydantic_ai:{part.get('part_kind')}"})
            if builder.add("assistant", blocks, _pydantic_usage(message.get("usage"))):
                # ``ModelResponse.timestamp``: ISO 8601 (the provider's, where it gives one).
                builder.reply_time(message.get("timestamp"), replace=True)
            else:
                builder.skip("empty response")
    return builder, "\n\n".join(system)


def _request_part(part: Mapping[str, Any], builder: ConversationBuilder, system: list[str]) -> None:
    kind = part.get("part_kind")
    builder.record(f"request {kind}")
    if kind == "system-prompt":
        system.append(_text(part.get("content")))
        builder.use()
    elif kind == "user-prompt":
        if not builder.add("user", _prompt_blocks(part.get("content"))):
            builder.skip("empty prompt")
    elif kind == "retry-feedback" or (kind == "retry-prompt" and not part.get("tool_name")):
        # Feedback on a whole response (its output failed validation): the model reads it as
        # a user turn, answering no call.
        if not builder.text("user", _as_text(part.get("content"))):
            builder.skip("empty feedback")
    elif kind in ("tool-return", "retry-prompt"):
        failed = kind == "retry-prompt" or part.get("outcome") in _FAILED_OUTCOMES
        result = {
            "type": "tool_result",
            "tool_use_id": str(part.get("tool_call_id")),
            "content": _as_text(part.get("content")),
            "is_error": failed or None,
        }
        builder.add("user", [result])
    else:
        builder.skip(f"request part {kind}")


def _pydantic_usage(usage: Any) -> ProviderUsage | None:
    if not isinstance(usage, Mapping):
        return None

    def number(*keys: str) -> Any:
        return next((usage[k] for k in keys if usage.get(k) is not None), None)

    return ProviderUsage.with_cache_inside(
        number("input_tokens", "request_tokens"),
        number("output_tokens", "response_tokens"),
        usage.get("cache_read_tokens"),
        usage.get("cache_write_tokens"),
    )


_FAILED_OUTCOMES = ("failed", "denied", "interrupted", "retried")
"""A pydantic-ai tool return's outcomes (2.x) that are not the tool's output."""


def _as_text(content: Any) -> str:
    return (
        content
        if isinstance(content, str)
        else json.dumps(content, ensure_ascii=False, default=str)
    )


def _prompt_blocks(content: Any) -> list[dict[str, Any]]:
    """A pydantic-ai user prompt's content (text, or a list of text and files) as blocks:
    images kept (inline bytes or a link); other files named, since ctxlab does not model them."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    blocks: list[dict[str, Any]] = []
    for item in content if isinstance(content, list) else [content]:
        if isinstance(item, str):
            if item.strip():
                blocks.append({"type": "text", "text": item})
            continue
        item = as_mapping(item)
        media = str(item.get("media_type") or "")
        if item.get("kind") == "binary" and media.startswith("image/"):
            source = {"type": "base64", "media_type": media, "data": str(item.get("data", ""))}
            blocks.append({"type": "image", "source": source})
        elif item.get("kind") == "image-url" and isinstance(item.get("url"), str):
            blocks.append(image_block(item["url"]))
        elif item:
            # A document, audio or video: said in the conversation rather than lost.
            name = item.get("url") or item.get("identifier") or media or item.get("kind")
            blocks.append({"type": "text", "text": f"[{item.get('kind', 'file')}: {name}]"})
    return blocks


def langchain_plain(items: Sequence[Any]) -> Sequence[Any] | None:
    """LangChain message objects as ``messages_to_dict`` writes them (langchain imported only
    when its objects are given); None for other objects."""
    if not type(items[0]).__module__.startswith("langchain"):
        return None
    from langchain_core.messages import messages_to_dict

    return list(messages_to_dict(list(items)))


def pydantic_ai_plain(items: Sequence[Any]) -> Sequence[Any] | None:
    """pydantic-ai message objects as ``ModelMessagesTypeAdapter`` dumps them (imported only
    when its objects are given); None for other objects."""
    if not type(items[0]).__module__.startswith("pydantic_ai"):
        return None
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    return list(ModelMessagesTypeAdapter.dump_python(list(items), mode="json"))


_TTL_KEYS = ("ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens")


def langchain_writes(details: Mapping[str, Any]) -> tuple[Any, int, bool | None]:
    """The cache writes of LangChain's ``input_token_details`` (as recorded: a bad count is
    left for the usage's own check to name), their 1-hour part, and whether the split adds up
    (None: no split recorded). langchain-anthropic (``chat_models.py``
    ``_create_usage_metadata``, 2025–2026) copies Anthropic's TTL split there and, when either
    part is above 0, sets ``cache_creation`` to 0: the writes are then the split's sum."""
    generic = details.get("cache_creation")
    if not any(key in details for key in _TTL_KEYS):
        return generic, 0, None
    five, hour = (
        0 if details.get(key) is None else count_or_none(details.get(key)) for key in _TTL_KEYS
    )
    if five is None or hour is None:
        return generic, 0, False
    total = count_or_none(generic)
    if generic is not None and total is None:  # no count: the usage's own check names it
        return generic, 0, False
    if not total:  # missing, or 0 (langchain-anthropic's zeroing): the split is the writes
        return five + hour, hour, True
    return total, (hour if hour <= total else 0), five + hour == total
