"""The summary request a compaction sends, as it is sent: the cached form (the last reasoning
request again, then what arrived since and the instruction) when it fits the summary's limit,
else the span alone — and its manifest items, which share the last request's items wherever
the two requests hold the same thing, so the cost model sees the prefix they share.

The agent sends what `summary_call` returns; a what-if prices what it returns: one function, so
a replay's summary calls are the live agent's.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from ctxlab.manifest import ContextManifest, ManifestItem, Thresholds, Transform
from ctxlab.materials import SystemPart
from ctxlab.messages import UserMessage
from ctxlab.messages._request import ModelRequest
from ctxlab.models._base import cached_summary_request, summary_model_request
from ctxlab.pipeline import SummaryRequest, fixed_part, message_items
from ctxlab.tokens import TokenCache

__all__ = ["SummaryCall", "summary_call", "summary_manifest"]

INSTRUCTION_ID = "summary/instruction"
"""The item of a summary request's instruction when it ends a message that holds more: the
part of the request the last one never sent."""
# What a recording does not hold of its requests (a harness's System prompt and tool schemas)
# is sent with the summary call too: the same prefix.
_FIXED = ("unrecorded", "system", "tools")
_MESSAGES = ("summary", "conversation")


@dataclass(frozen=True)
class SummaryCall:
    """A summary request as it would be sent, itemized."""

    request: ModelRequest
    """What goes to the model."""
    items: tuple[ManifestItem, ...]
    """Its manifest items, in layout order (System, tools, then the messages)."""
    tokens: int
    """Its estimated input tokens."""
    limit: int
    """What it must fit."""
    cached: bool
    """Sent in the cached form (the last request again, then the instruction); False: the span
    alone, under no System and no tools."""

    @property
    def fits(self) -> bool:
        """Whether it can be sent (``tokens <= limit``)."""
        return self.tokens <= self.limit


def summary_call(
    summary: SummaryRequest,
    cache: TokenCache,
    limit: int,
    context: ModelRequest | None = None,
    context_items: Sequence[ManifestItem] = (),
) -> SummaryCall:
    """The request the agent sends for ``summary``: built on ``context`` (the last reasoning
    request, whose manifest items are ``context_items``) when that form fits ``limit`` — it
    reads the provider's cache, but is the larger one — else the span alone. A call that does
    not fit either way says so (`SummaryCall.fits`): it is never sent."""
    sent = cached_summary_request(summary, context)
    if sent is not None:
        # Given up once past the limit: the larger form, itemized whole only to be dropped.
        call = _itemized(sent, cache, limit, context, context_items, give_up=True)
        if call.fits:
            return call
    # The span alone (also when it does not continue ``context``: a piece of it), under no
    # System and no tools: nothing of the last request's prefix is sent again.
    return _itemized(summary_model_request(summary, None), cache, limit, None, ())


def _itemized(
    sent: ModelRequest,
    cache: TokenCache,
    limit: int,
    context: ModelRequest | None,
    context_items: Sequence[ManifestItem],
    *,
    give_up: bool = False,
) -> SummaryCall:
    """``sent`` itemized; with ``give_up``, a call that cannot fit is returned as soon as its
    items so far pass ``limit`` (items have no negative tokens): not itemized, not fitting."""
    fixed_items, earlier = _fixed_and_earlier(sent, cache, context, context_items)
    # A message the last request sent at the same place is the same part of the prefix (its
    # item, its tokens); the rest are new. ``earlier`` lines up with the last request's
    # messages (the summary's lead, then the conversation), its material left out.
    before = context.messages if context is not None else ()
    items: list[ManifestItem] = []
    seen: dict[str, int] = {}
    total = sum(i.tokens for i in fixed_items)
    *leading, last = sent.messages
    # The instruction is the last message's last block, added to the message it ends (or a
    # message of its own): that message without it is the part the last request sent — the
    # provider's cache finds a prefix at any block boundary — so it is priced as two parts.
    asked = UserMessage(content=last.content[:-1]) if len(last.content) > 1 else None
    for index, message in enumerate((*leading, asked) if asked is not None else sent.messages):
        # Identity first: the cached form holds the last request's own messages (a pydantic
        # comparison of each with itself walked every field of every message).
        if (
            index < len(earlier)
            and index < len(before)
            and (before[index] is message or before[index] == message)
        ):
            items.append(earlier[index])
        else:
            items.extend(message_items([message], cache, seen))
        total += items[-1].tokens  # one item a message, either way
        if give_up and total > limit:
            return SummaryCall(sent, (), total, limit, context is not None)
    if asked is not None:
        ask = last.content[-1]
        # A message's tokens are its framing plus its blocks' (`TokenCache.message`): the
        # instruction's share is its block's count, without hashing both whole messages.
        tokens = cache.block(ask)
        items.append(
            ManifestItem(
                INSTRUCTION_ID, "message", "conversation", tokens, ask.content_hash, role="user"
            )
        )
    every = (*fixed_items, *items)
    tokens = sum(i.tokens for i in every)
    return SummaryCall(sent, every, tokens, limit, context is not None)


def _fixed_and_earlier(
    sent: ModelRequest,
    cache: TokenCache,
    context: ModelRequest | None,
    context_items: Sequence[ManifestItem],
) -> tuple[tuple[ManifestItem, ...], list[ManifestItem]]:
    """The call's System and tool items, and the last request's message items (none without
    them)."""
    if context is not None and context_items:
        # The same System text and tools as the last request (with what its recording does not
        # hold of them): its items, as they were priced.
        fixed_items = tuple(i for i in context_items if i.placement in _FIXED)
        return fixed_items, [i for i in context_items if i.placement in _MESSAGES]
    if sent.system or sent.tools:
        parts = (SystemPart("system_prompt", sent.system),) if sent.system else ()
        fixed = fixed_part(parts, sent.tools, cache)
        return (*fixed.system_items, *fixed.tool_items), []
    return (), []


def summary_manifest(
    call: SummaryCall,
    model: str,
    cache: TokenCache,
    *,
    transforms: Sequence[Transform] = (),
    thresholds: Thresholds | None = None,
) -> ContextManifest:
    """``call``'s manifest, validated like any request: over its limit (the window less the
    summary's answer) it says ``budget_exceeded`` — a request that is never sent."""
    error = (
        None
        if call.fits
        else f"the summary request needs {call.tokens} tokens; its limit is {call.limit}"
    )
    return ContextManifest(
        request_id=uuid.uuid4().hex[:16],
        purpose="summary",
        model=model,
        estimated_input_tokens=call.tokens,
        input_limit=call.limit,
        counting_method=cache.method,
        exact=cache.exact,
        items=call.items,
        transforms=tuple(transforms),
        validation="passed" if call.fits else "budget_exceeded",
        context_size=thresholds.context_size if thresholds is not None else 0,
        thresholds=thresholds,
        error=error,
    )
