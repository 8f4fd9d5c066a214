"""A load's census set against its file's inventory: what the file holds (a walk that knows no
format, `ctxlab.io._inventory`) beside what the reader placed and set aside (its census) — the
difference is *unaccounted*, by kind and JSON path, in ``meta["census"]``."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ctxlab.io._census import Census
from ctxlab.io._inventory import KINDS, Finding, Inventory, inventory_of
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

__all__ = ["account_for", "unplaced"]


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


def unplaced(
    held: Inventory,
    placed: Inventory,
    aside: Mapping[str, Collection[str]],
    accounted: Mapping[str, int],
    words: str = "",
) -> dict[str, int]:
    """What ``held`` (the file) finds that the reader neither placed nor set aside, as
    ``"<kind> at <path>"`` → count.

    What the reader set aside is known by its keys (``aside``, by kind). A tool call or
    reasoning is matched by key: placed when the transcript (``placed``, and its text
    ``words`` for reasoning) holds it. Usage and replies are counted: of those not set aside,
    ``accounted[kind]`` are placed (usage read, replies kept).
    """
    out: dict[str, int] = {}
    for kind in KINDS:
        apart = set(aside.get(kind, ()))  # (lists of thousands: asked of every finding)
        pool = [
            f
            for f in held.findings[kind].values()
            if f.key not in apart and not (f.alias and f.alias in apart)
        ]
        if kind in ("tool call", "reasoning"):
            missing = held.missing(placed, kind, words)
            kept = {f.key for f in missing}
            pool = [f for f in pool if f.key in kept]
            _attribute(out, kind, pool, len(pool))
        else:
            _attribute(out, kind, pool, len(pool) - accounted.get(kind, 0))
    return out


def _attribute(out: dict[str, int], kind: str, findings: list[Finding], excess: int) -> None:
    # ``excess`` of ``findings`` are unaccounted: named by the paths they were found at, the
    # rarest first — which of a counted kind were missed the count cannot say, and a field a
    # reader never handles is likelier one it met seldom than the one it reads on every reply.
    by_path: dict[str, int] = {}
    for finding in findings:
        by_path[finding.path] = by_path.get(finding.path, 0) + 1
    for path, count in sorted(by_path.items(), key=lambda kv: (kv[1], kv[0])):
        if excess <= 0:
            return
        taken = min(count, excess)
        out[f"{kind} at {path}"] = taken
        excess -= taken
