"""A transcript's blocks as plain values, for the importers' rule-by-rule tests: each block as
(role, (kind, the fields a user reads)), so that a test states a whole conversation in one
comparison."""

from __future__ import annotations

from typing import Any

from ctxlab.io._census import Census
from ctxlab.io._transcript import Transcript
from ctxlab.messages import ProviderUsage


def shown(transcript: Transcript) -> list[tuple[str, tuple[Any, ...]]]:
    """Every block of every message, in order: ``("text", text)``, ``("use", id, name, input)``,
    ``("result", call id, text, is_error)``, ``("thinking", text, signature)``, ``("redacted",
    data)``, ``("provider", data)``, ``("image", media type or None, data or url)``, else
    ``(type,)``."""
    out: list[tuple[str, tuple[Any, ...]]] = []
    for message in transcript.messages:
        for block in message.content:
            value: tuple[Any, ...]
            if block.type == "text":
                value = ("text", block.text)
            elif block.type == "tool_use":
                value = ("use", block.id, block.name, block.input)
            elif block.type == "tool_result":
                value = ("result", block.tool_use_id, block.text, bool(block.is_error))
            elif block.type == "thinking":
                value = ("thinking", block.thinking, block.signature)
            elif block.type == "redacted_thinking":
                value = ("redacted", block.data)
            elif block.type == "provider":
                value = ("provider", block.data)
            elif block.type == "image":
                source = block.source
                media = getattr(source, "media_type", None)
                value = (
                    "image",
                    media,
                    getattr(source, "data", None) or getattr(source, "url", None),
                )
            else:
                value = (block.type,)
            out.append((message.role, value))
    return out


def texts(transcript: Transcript, role: str = "assistant") -> list[str]:
    """The text blocks of one role's messages, in order."""
    return [b[1] for r, b in shown(transcript) if r == role and b[0] == "text"]


def calls(transcript: Transcript) -> dict[str, tuple[str, Any]]:
    """The replies' tool calls: id → (name, input)."""
    return {b[1]: (b[2], b[3]) for r, b in shown(transcript) if r == "assistant" and b[0] == "use"}


def added_up(transcript: Transcript) -> Census:
    """The transcript's census, which must add up (said with its problems where it does not)."""
    census = transcript.census
    assert census is not None and census.adds_up, census and census.problems()
    return census


def census_in(transcript: Transcript, unit: str) -> Census:
    """The transcript's census, which must add up and count in ``unit``."""
    census = added_up(transcript)
    assert census.unit == unit
    return census


def census_read(
    transcript: Transcript,
    unit: str,
    read: dict[str, int],
    skipped: dict[str, int] | None = None,
) -> Census:
    """The transcript's census, which must add up, count in ``unit`` and have read exactly
    ``read``; with ``skipped``, the transcript's ``meta["skipped"]`` must be exactly that."""
    census = census_in(transcript, unit)
    assert census.read == read
    if skipped is not None:
        assert transcript.meta["skipped"] == skipped
    return census


def billed(transcript: Transcript, usage: dict[int, ProviderUsage]) -> Census:
    """The transcript's usage, which must be exactly ``usage``, each read usage placed (none
    lost) in a census that adds up."""
    assert transcript.usage == usage
    census = added_up(transcript)
    assert census.usage_lost == {}
    return census
