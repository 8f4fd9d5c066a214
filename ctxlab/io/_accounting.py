"""A load's census set against its file's inventory: what the file holds (a walk that knows no
format, `ctxlab.io._inventory`) beside what the reader placed and set aside (its census) — the
difference is *unaccounted*, by kind and JSON path, in ``meta["census"]``."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import replace
from functools import cache
from typing import Any

from ctxlab.io._census import Census
from ctxlab.io._findings import may_be_alias
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
    accounted = {"usage": census.usage_read, "reply": census.replies}
    data = census.as_meta()
    data["held"] = held.counts()
    # What the transcript placed, asked only when the file holds a call or reasoning not set
    # aside (its text only when reasoning is not matched by key).
    messages = transcript.messages
    placed = cache(lambda: _placed(messages))  # (asked for calls, then for reasoning)
    found = unplaced(held, placed, census.aside_keys, accounted, lambda: _words(messages))
    data["unaccounted"] = {**census.unaccounted, **found}
    meta = {**transcript.meta, "census": data}
    if held.cut:
        meta["inventory_cut"] = "part of the file is nested too deeply to walk: not counted"
    return replace(transcript, meta=meta)


def _placed(messages: Sequence[UserMessage | AssistantMessage]) -> Inventory:
    """What the transcript holds as the inventory knows it: its calls, reasoning and provider
    blocks, as the blocks they are."""
    values: list[Any] = []
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
    # Walked straight (last): nothing asks for one block's inventory again.
    return inventory_of(values, last=True)


def _words(messages: Sequence[UserMessage | AssistantMessage]) -> str:
    """The transcript's text, whitespace folded (a reader may keep a thought as the words it
    is)."""
    words = [
        " ".join(block.text.split())
        for message in messages
        for block in message.content
        if isinstance(block, TextBlock)
    ]
    return "\n".join(words)


def unplaced(
    held: Inventory,
    placed: Inventory | Callable[[], Inventory],
    aside: Mapping[str, Collection[str]],
    accounted: Mapping[str, int],
    words: str | Callable[[], str] = "",
) -> dict[str, int]:
    """What ``held`` (the file) finds that the reader neither placed nor set aside, as
    ``"<kind> at <path>"`` → count.

    What the reader set aside is known by its keys (``aside``, by kind). A tool call or
    reasoning is matched by key: placed when the transcript (``placed``, and its text
    ``words`` for reasoning) holds it. Usage and replies are counted: of those not set aside,
    ``accounted[kind]`` are placed (usage read, replies kept). ``placed`` and ``words`` may be
    given as functions that make them: called only when asked for.
    """
    out: dict[str, int] = {}
    for kind in KINDS:
        apart = set(aside.get(kind, ()))  # (lists of thousands: asked of every finding)
        # A call's alias is asked only when something set aside may be one (an id-less
        # call's key: `may_be_alias`): most files set aside none (`Finding.alias`).
        aliased = kind != "tool call" or any(may_be_alias(k) for k in apart)
        pool = [
            f
            for f in held.findings[kind].values()
            if f.key not in apart and not (aliased and f.alias and f.alias in apart)
        ]
        if kind in ("tool call", "reasoning"):
            if pool:  # (else the transcript need not be asked)
                pool = _unmatched(
                    pool, (placed() if callable(placed) else placed).findings[kind], words
                )
            _attribute(out, kind, pool, len(pool))
        else:
            _attribute(out, kind, pool, len(pool) - accounted.get(kind, 0))
    return out


def _unmatched(
    pool: list[Finding], placed: Mapping[str, Finding], words: str | Callable[[], str]
) -> list[Finding]:
    # Of ``pool`` (a tool call or reasoning each), those ``placed`` (the transcript's of that
    # kind) does not hold: neither its key nor its alias, nor — for reasoning — its words (or
    # one of its parts) within placed reasoning or ``words``, joined only when asked.
    keys = set(placed)
    aliases: set[str] | None = None  # (made when a finding is not placed by its key)
    text: str | None = None
    out = []
    for finding in pool:
        # A call by its id, or (id-less: its key is its alias) by the name and arguments of
        # one a reader gave an id of its own; reasoning by its words' key or its opaque form.
        if finding.key in keys:
            continue
        if aliases is None:
            aliases = {f.alias for f in placed.values() if f.alias}
        if finding.key in aliases or (
            finding.kind != "tool call"
            and finding.alias
            and (finding.alias in keys or finding.alias in aliases)
        ):
            continue
        if finding.text or finding.parts:
            if text is None:
                text = "\n".join(
                    [
                        words() if callable(words) else words,
                        *(f.text for f in placed.values() if f.text),
                    ]
                )
            if (finding.text and finding.text in text) or any(p in text for p in finding.parts):
                continue
        out.append(finding)
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
