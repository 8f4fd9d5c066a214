"""The blocks importers hand a `ConversationBuilder`, in the Anthropic shape: a recorded block
kept as ctxlab models it (or carried whole as a provider block), an image of a URL, a tool
result, and the small readers of records every importer shares."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxlab.messages import ANTHROPIC_BLOCK_TYPES, RESULT_PART_TYPES

__all__ = [
    "KEPT_BLOCKS",
    "anthropic_block",
    "as_mapping",
    "has_data",
    "image_block",
    "text_parts",
    "tool_result",
]

KEPT_BLOCKS = ANTHROPIC_BLOCK_TYPES | {"provider"}
# The fields of each modelled block; other keys (cache_control, citations, Claude Code's caller)
# are request annotations, not content.
_FIELDS = {
    "text": ("text",),
    "image": ("source",),
    "tool_use": ("id", "name", "input"),
    "tool_result": ("tool_use_id", "content", "is_error"),
    "thinking": ("thinking", "signature"),
    "redacted_thinking": ("data",),
    "document": ("source", "title", "context", "citations"),
}


def anthropic_block(block: Mapping[str, Any]) -> dict[str, Any]:
    """A block recorded in the Anthropic format, for `ConversationBuilder.add`: a type ctxlab
    has no model of (server tool use and results, MCP blocks, ...) is wrapped as a provider
    block, kept losslessly; a tool result's parts likewise."""
    kind = block.get("type")
    fields = _FIELDS.get(kind) if isinstance(kind, str) else None
    if fields is None:
        return {"type": "provider", "data": dict(block)}
    out = {"type": kind, **{f: block[f] for f in fields if f in block and block[f] is not None}}
    if kind == "tool_result" and isinstance(out.get("content"), list):
        out["content"] = [
            anthropic_block(p)
            if isinstance(p, Mapping) and p.get("type") in RESULT_PART_TYPES
            else {"type": "provider", "data": dict(p) if isinstance(p, Mapping) else {"value": p}}
            for p in out["content"]
        ]
    return out


def image_block(url: str) -> dict[str, Any]:
    """An image block of a URL: a ``data:`` URL's bytes as a base64 source, else the link."""
    if url.startswith("data:") and ";base64," in url:
        media, data = url[5:].split(";base64,", 1)
        return {"type": "image", "source": {"type": "base64", "media_type": media, "data": data}}
    return {"type": "image", "source": {"type": "url", "url": url}}


def has_data(image: Mapping[str, Any]) -> bool:
    """Whether an image block carries its bytes or its link (a recording may keep an image's
    place without either); a source of another kind is the provider's to read."""
    source = image.get("source")
    if not isinstance(source, Mapping):
        return False
    kind = source.get("type")
    if kind == "base64":
        data, media = source.get("data"), source.get("media_type")
        return isinstance(data, str) and bool(data) and isinstance(media, str) and bool(media)
    if kind == "url":
        return isinstance(source.get("url"), str) and bool(source["url"])
    return False


def tool_result(
    call_id: str, text: str, *, is_error: bool = False, empty: str = "(no output)"
) -> dict[str, Any]:
    """A tool result block for `ConversationBuilder.add`: ``text`` (``empty`` when it is blank —
    a result the file recorded without output still answers its call)."""
    return {
        "type": "tool_result",
        "tool_use_id": call_id,
        "content": text if text.strip() else empty,
        "is_error": is_error,
    }


def as_mapping(value: Any) -> Mapping[str, Any]:
    """``value`` when it is a mapping, else an empty one (a record's optional object field)."""
    return value if isinstance(value, Mapping) else {}


def text_parts(content: Any) -> str | None:
    """A message's text: the string itself, or its ``type: text`` parts joined by newlines;
    None for content of any other kind (each importer says what that becomes)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, Mapping) and part.get("type") == "text"
        )
    return None
