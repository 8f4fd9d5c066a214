"""An independent bill: what Anthropic charges for a sequence of Messages API requests, from
the prompt-caching guide's rules alone — written for the tests, sharing no code with
``ctxlab/analysis/_cost.py``.

The rules (docs.anthropic.com, "Prompt caching"):

- a request is its blocks in the order tools → system → messages; ``cache_control`` marks a
  breakpoint on a block; the prefix up to each breakpoint is cached (written) when it holds at
  least the model's minimum (1,024 tokens for Sonnet);
- at each breakpoint "the system automatically checks for cache hits at all previous content
  block boundaries (up to approximately 20 blocks before your explicit breakpoint)" and uses
  the longest matching prefix: that prefix is read, what the request caches beyond it written;
- reads cost 0.1× the input price, 5-minute writes 1.25×, the rest 1×, output at its price.

The requests are rebuilt here as ctxlab's Anthropic adapter would send them (`payload`, the
breakpoints where it puts them), the summary calls as the documented agent behaviour builds
them: the last request again, then what arrived since and the instruction, when that fits the
call's limit; else the span alone under no System and no tools. A server's tool-use clear
(``clear_tool_uses_20250919``) is applied here from the context-editing guide (`Clearing`,
`server_cleared`) to the request sent whole: it is "applied server-side before the prompt
reaches Claude", and clearing "invalidates cached prompt prefixes when content is cleared" —
the edited request is what is billed and what the cache holds.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import anthropic

from ctxlab.manifest import ContextManifest
from ctxlab.messages import (
    AssistantMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.messages._request import ModelRequest
from ctxlab.models import AnthropicModel
from ctxlab.pipeline import SummaryRequest, summary_instruction
from ctxlab.tokens import TokenCache
from tests.helpers import Message

LOOKBACK = 20
MINIMUM = 1024
UNRECORDED = "unrecorded"
"""The fingerprint of the block standing for what a recording's harness sent first (its own
System prompt and tool schemas) and the file does not hold: the same in every request."""
CONTINUED = "(An earlier part of this conversation is summarized elsewhere; it goes on here.)"
"""What the agent opens a span with when it starts at an assistant turn (its documented
wording)."""


@dataclass(frozen=True)
class Block:
    """One content block as sent: what identifies it, its tokens, whether it is marked."""

    fingerprint: str
    tokens: int
    marked: bool


@dataclass(frozen=True)
class Bill:
    """One request's bill."""

    uncached: int
    written: int
    read: int
    output: int
    dollars: float


_ADAPTER: AnthropicModel | None = None


def _payload(request: ModelRequest) -> dict[str, Any]:
    global _ADAPTER
    if _ADAPTER is None:
        client = anthropic.AsyncAnthropic(api_key="offline", base_url="http://127.0.0.1:9")
        _ADAPTER = AnthropicModel("claude-sonnet-4-6", client=client, context_window=200_000)
    return _ADAPTER.payload(request)


def _plain(block: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in block.items() if k != "cache_control"}, sort_keys=True)


def _split(message: Message, total: int, cache: TokenCache) -> list[int]:
    """A message's ``total`` tokens by block: each block after the first its own count, the
    first the rest (the message's framing with it) — the provider finds a cached prefix at any
    block boundary, so a boundary inside a message must carry the tokens before it."""
    rest = [cache.block(b) for b in message.content[1:]]
    return [total - sum(rest), *rest]


def wire_blocks(
    request: ModelRequest,
    tool_tokens: Sequence[int],
    system_tokens: int,
    message_tokens: Sequence[int],
    cache: TokenCache,
) -> list[Block]:
    """``request`` as the blocks the adapter sends, each message's tokens split by block."""
    payload = _payload(request)
    blocks: list[Block] = []
    for tool, tokens in zip(payload.get("tools", []), tool_tokens, strict=True):
        blocks.append(Block("tool:" + _plain(tool), tokens, "cache_control" in tool))
    for block in payload.get("system", []):
        blocks.append(Block("system:" + _plain(block), system_tokens, "cache_control" in block))
    messages = payload["messages"]
    assert len(messages) == len(message_tokens)
    for number, (message, tokens) in enumerate(zip(messages, message_tokens, strict=True)):
        content = message["content"]
        split = _split(request.messages[number], tokens, cache)
        assert len(split) == len(content)
        for n, (block, count) in enumerate(zip(content, split, strict=True)):
            mark = f"{number}:{message['role']}:{n}:" + _plain(block)
            blocks.append(Block(mark, count, "cache_control" in block))
    return blocks


def message_tokens(manifest: ContextManifest) -> list[int]:
    """The tokens of each message of a reasoning request, as its manifest gives them (the
    per-request material one message)."""
    items = manifest.items
    per_message = [i.tokens for i in items if i.placement in ("summary", "conversation")]
    for placement in ("transient", "references"):
        here = [i.tokens for i in items if i.placement == placement]
        if here:
            per_message.append(sum(here))
    return per_message


def reasoning_blocks(
    request: ModelRequest,
    manifest: ContextManifest,
    cache: TokenCache,
    messages: Sequence[int] | None = None,
) -> list[Block]:
    """A reasoning request's blocks, with the tokens its manifest gave each part (``messages``:
    each message's tokens instead, for a request the server edited)."""
    items = manifest.items
    tools = [i.tokens for i in items if i.placement == "tools"]
    system = sum(i.tokens for i in items if i.placement == "system")
    per_message = list(messages) if messages is not None else message_tokens(manifest)
    return wire_blocks(request, tools, system, per_message, cache)


@dataclass(frozen=True)
class Clearing:
    """``clear_tool_uses_20250919`` as the context-editing guide states it: once the prompt
    exceeds ``trigger`` input tokens, the oldest tool results, in chronological order, become
    ``placeholder`` — all but the latest ``keep`` tool uses ("number of tool uses to retain":
    counted over every tool use), never those of the ``exclude`` tools ("tool names whose uses
    are preserved from clearing") — and not at all unless ``clear_at_least`` tokens go
    ("minimum number of tokens that must be cleared when triggered"); ``inputs``: the calls'
    parameters are cleared with their results. The server applies it "before the prompt reaches
    Claude": the request is billed, and cached, as edited."""

    trigger: int
    keep: int
    clear_at_least: int
    exclude: tuple[str, ...]
    inputs: bool
    placeholder: str


def server_cleared(
    request: ModelRequest, tokens: Sequence[int], total: int, clearing: Clearing, cache: TokenCache
) -> tuple[ModelRequest, list[int]]:
    """``request`` (of ``total`` input tokens; ``tokens`` each message's) as the server edits
    it under ``clearing``, and each message's tokens after."""
    if total <= clearing.trigger:
        return request, list(tokens)
    uses = [
        block
        for message in request.messages
        if isinstance(message, AssistantMessage)
        for block in message.content
        if isinstance(block, ToolUseBlock)
    ]
    retained = len(uses) - clearing.keep
    due = {u.id for u in uses[: max(retained, 0)] if u.name not in clearing.exclude}
    answered = {
        block.tool_use_id
        for message in request.messages
        if isinstance(message, UserMessage)
        for block in message.content
        if isinstance(block, ToolResultBlock) and block.tool_use_id in due
    }
    edited: list[Message] = []
    for message in request.messages:
        if isinstance(message, UserMessage):
            message = UserMessage(
                content=tuple(
                    b.evolve(content=clearing.placeholder)
                    if isinstance(b, ToolResultBlock) and b.tool_use_id in answered
                    else b
                    for b in message.content
                )
            )
        elif clearing.inputs:
            message = AssistantMessage(
                content=tuple(
                    b.evolve(input={}) if isinstance(b, ToolUseBlock) and b.id in answered else b
                    for b in message.content
                )
            )
        edited.append(message)
    after = [
        count if new == old else cache.message(new)
        for old, new, count in zip(request.messages, edited, tokens, strict=True)
    ]
    if not answered or sum(tokens) - sum(after) < clearing.clear_at_least:
        return request, list(tokens)
    return dataclasses.replace(request, messages=tuple(edited)), after


def _with_ask(messages: list[Message], ask: str) -> list[Message]:
    """The instruction at the end: in the last message when it is the user's, else its own."""
    block = TextBlock(text=ask)
    if messages and isinstance(messages[-1], UserMessage):
        return [*messages[:-1], UserMessage(content=(*messages[-1].content, block))]
    return [*messages, UserMessage(content=(block,))]


def unrecorded_first(blocks: list[Block], unrecorded: int) -> list[Block]:
    """A request's ``blocks`` after the ``unrecorded`` tokens its harness sends first (none:
    as they are). That block is marked for the cache when the request sends no tools and no
    System of its own: the harness's own mark then ends its prefix."""
    if not unrecorded:
        return blocks
    own = any(b.fingerprint.startswith(("system:", "tool:")) for b in blocks)
    return [Block(UNRECORDED, unrecorded, not own), *blocks]


def summary_blocks(
    summary: SummaryRequest,
    previous: tuple[ModelRequest, ContextManifest] | None,
    cache: TokenCache,
    sent_tokens: Sequence[int] | None = None,
    unrecorded: int = 0,
) -> list[Block] | None:
    """The summary call the agent sends for ``summary`` after the reasoning request
    ``previous`` (``sent_tokens``: each of its messages' tokens as sent, when the server edited
    it): the cached form when it fits the call's limit, else the span alone; None when neither
    fits (never sent). ``unrecorded``: the tokens of what a recording's harness sent before its
    tools and System that the file does not hold — the cached form sends the last request's
    prefix again, so it carries them (`unrecorded_first`); the span alone does not."""
    assert summary.template is None, "a summary_prompt template is not rebuilt here"
    limit = summary.input_limit
    assert limit is not None
    if previous is not None:
        request, manifest = previous
        cached = _cached_form(summary, request)
        if cached is not None:
            per_message = message_tokens(manifest) if sent_tokens is None else sent_tokens
            conversation = len(request.messages) - request.material_messages
            before = dict(enumerate(per_message[:conversation]))
            tokens = [
                before[n]
                if n < len(request.messages) and request.messages[n] == m and n in before
                else cache.message(m)
                for n, m in enumerate(cached)
            ]
            tools = [i.tokens for i in manifest.items if i.placement == "tools"]
            system = sum(i.tokens for i in manifest.items if i.placement == "system")
            if unrecorded + sum(tools) + system + sum(tokens) <= limit:
                sent = ModelRequest(
                    system=request.system, messages=tuple(cached), tools=request.tools
                )
                blocks = wire_blocks(sent, tools, system, tokens, cache)
                return unrecorded_first(blocks, unrecorded)
    messages: list[Message] = list(summary.messages)
    if messages and isinstance(messages[0], AssistantMessage):
        messages.insert(0, UserMessage(content=CONTINUED))
    messages = _with_ask(messages, summary_instruction(summary))
    tokens = [cache.message(m) for m in messages]
    if sum(tokens) > limit:
        return None
    return wire_blocks(ModelRequest(system="", messages=tuple(messages)), [], 0, tokens, cache)


def _cached_form(summary: SummaryRequest, request: ModelRequest) -> list[Message] | None:
    """The last request's messages (its per-request material left out), then what arrived
    since, then the instruction to summarize all but the kept tail; None when the last request
    is not this conversation's (another summary leads it, or its turns are not these)."""
    sent = list(request.messages[: len(request.messages) - request.material_messages])
    earlier = summary.previous_summary
    if earlier is not None:
        lead_text = [b.text for b in sent[0].content if isinstance(b, TextBlock)] if sent else []
        if lead_text != [earlier.text]:
            return None
        conversation = sent[1:]
    else:
        conversation = sent
    full = [*summary.messages, *summary.kept]
    if len(conversation) > len(full):
        return None
    if any(a.role != b.role for a, b in zip(conversation, full, strict=False)):
        return None
    ask = (
        summary_instruction(summary)
        + f"\n\nSummarize the conversation above except its last {len(summary.kept)} messages, "
        "which stay in your context."
    )
    return _with_ask([*sent, *full[len(conversation) :]], ask)


def bill(
    requests: Sequence[tuple[list[Block], int]],
    *,
    input_price: float = 3.0,
    output_price: float = 15.0,
    lookback: int | None = LOOKBACK,
) -> list[Bill]:
    """Each request's bill (``requests``: its blocks and its output tokens), in order, each
    reading what the earlier ones cached. ``lookback`` None: a breakpoint finds any earlier
    prefix (the rule without the look-back, for controls)."""
    cached: dict[str, int] = {}  # prefix fingerprint -> its tokens
    bills: list[Bill] = []
    for blocks, output in requests:
        prints: list[str] = []
        totals: list[int] = []
        running, total = hashlib.sha256(), 0
        for block in blocks:
            running.update(block.fingerprint.encode() + b"\x00")
            prints.append(running.hexdigest())
            total += block.tokens
            totals.append(total)
        marks = [n for n, b in enumerate(blocks) if b.marked]
        read = 0
        for mark in marks:
            furthest = 0 if lookback is None else max(mark - lookback, 0)
            for boundary in range(mark, furthest - 1, -1):
                if prints[boundary] in cached:
                    read = max(read, totals[boundary])
                    break
        written_to = read
        for mark in marks:
            if totals[mark] >= MINIMUM:
                cached[prints[mark]] = totals[mark]
                written_to = max(written_to, totals[mark])
        written = written_to - read
        uncached = total - read - written
        dollars = (
            uncached * input_price
            + written * input_price * 1.25
            + read * input_price * 0.1
            + output * output_price
        ) / 1e6
        bills.append(Bill(uncached, written, read, output, dollars))
    return bills


def reference_blocks(
    keys: Sequence[str],
    tokens: Sequence[int],
    fixed: int,
    request: ModelRequest,
    by_hash: dict[str, Message],
    cache: TokenCache,
) -> list[Block]:
    """A reference policy's request (its parts: ``fixed`` tool and System parts, then messages
    by content hash, or a cut of the latest results) as the adapter sends it, on ``request``'s
    System and tools."""
    messages: list[Message] = []
    counts: list[int] = []
    for key, count in zip(keys[fixed:], tokens[fixed:], strict=True):
        message = by_hash.get(key)
        if message is None:  # the latest turn's results, cut to what was left
            message = UserMessage(content=f"[{key}: results cut to fit]")
        messages.append(message)
        counts.append(count)
    sent = ModelRequest(system=request.system, messages=tuple(messages), tools=request.tools)
    tool_tokens = list(tokens[: len(request.tools)])
    system_tokens = sum(tokens[len(request.tools) : fixed])
    return wire_blocks(sent, tool_tokens, system_tokens, counts, cache)
