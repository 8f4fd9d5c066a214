"""A load's census set against its file's inventory: what the file holds (a walk that knows no
format, `ctxlab.io._inventory`) beside what the reader placed and set aside (its census) — the
difference is *unaccounted*, by kind and JSON path, in ``meta["census"]``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from ctxlab.io._census import Census
from ctxlab.io._inventory import Inventory, inventory_of, unplaced
from ctxlab.io._transcript import Transcript
from ctxlab.messages import (
    AssistantMessage,
    ProviderBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    UserMessage,
)

__all__ = ["account_for"]


def account_for(transcript: Transcript, values: Iterable[Any] | None) -> Transcript:
    """``transcript`` with its census set against the inventory of ``values`` (the file's
    decoded records; None when the file is not JSON: then no inventory is taken)."""
    census = Census.from_meta(transcript.meta.get("census"))
    if census is None or values is None:
        return transcript
    held = inventory_of(values, last=True)  # (a record set aside: walked then, not again)
    placed, words = _placed(transcript.messages)
    accounted = {"usage": census.usage_read, "reply": census.replies}
    data = census.as_meta()
    data["held"] = held.counts()
    found = unplaced(held, placed, census.aside_keys, accounted, words)
    data["unaccounted"] = {**census.unaccounted, **found}
    meta = {**transcript.meta, "census": data}
    if held.cut:
        meta["inventory_cut"] = "part of the file is nested too deeply to walk: not counted"
    return replace(transcript, meta=meta)


def _placed(messages: Sequence[UserMessage | AssistantMessage]) -> tuple[Inventory, str]:
    """What the transcript holds as the inventory knows it (its calls, reasoning and provider
    blocks, as the blocks they are), and its text, whitespace folded (a reader may keep a
    thought as the words it is)."""
    values: list[Any] = []
    words: list[str] = []
    for message in messages:
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                values.append({"type": "tool_use", "id": block.id, "name": block.name,
                               "input": block.input})  # fmt: skip
            elif isinstance(block, ThinkingBlock):
                values.append({"type": "thinking", "thinking": block.thinking})
            elif isinstance(block, RedactedThinkingBlock):
                values.append({"type": "redacted_thinking", "data": block.data})
            elif isinstance(block, ProviderBlock):
                values.append(block.data)
            elif isinstance(block, TextBlock):
                words.append(" ".join(block.text.split()))
    return inventory_of(values), "\n".join(words)
