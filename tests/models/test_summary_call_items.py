"""The summary call's items, as the cost model prices them (docs/concepts/cost.md): in the
cached form, the last request's own items wherever the call sends what it sent (its
unrecorded part, tools and System, then each message at the same place — the same objects, so
the prefix they share is seen as shared), new items for what arrived since, and the last
message priced as two parts: the message as it arrived, then the instruction
(``summary/instruction``). Without the last request's items, the System and tools are itemized
from the request. And `summary_manifest`: the call's manifest, field by field."""

from __future__ import annotations

import re

from ctxlab.manifest import ManifestItem, Thresholds, Transform
from ctxlab.messages import (
    AssistantMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.messages._request import ModelRequest
from ctxlab.models import summary_call, summary_manifest
from ctxlab.models._summary_call import SummaryCall
from ctxlab.pipeline import message_items
from ctxlab.tokens import ApproximateCounter, TokenCache
from tests.helpers import Message
from tests.models.test_summary_forms import SYSTEM, TOOLS, _ask


def _use(*ids: str) -> AssistantMessage:
    return AssistantMessage(
        content=tuple(ToolUseBlock(id=i, name="bash", input={"command": f"cat {i}"}) for i in ids)
    )


def _results(*ids: str) -> UserMessage:
    return UserMessage(
        content=tuple(ToolResultBlock(tool_use_id=i, content=f"{i}: ok\n" * 30) for i in ids)
    )


# The last request sent five messages; two arrived since, the last with two results.
MESSAGES: tuple[Message, ...] = (
    UserMessage(content="Fix the failing test."),
    _use("c0"),
    _results("c0"),
    _use("c1"),
    _results("c1"),
    _use("c2a", "c2b"),
    _results("c2a", "c2b"),
)
UNRECORDED = ManifestItem("unrecorded/harness", "unrecorded", "unrecorded", 18_800, "u")
TOOL = ManifestItem("tool/bash", "tool_schema", "tools", 120, "t")
SYSTEM_ITEM = ManifestItem("system/system_prompt", "system", "system", 500, "s")


def _item(message: Message, cache: TokenCache, item_id: str | None = None) -> ManifestItem:
    """A message's item, written here from the manifest's documented fields."""
    digest = message.content_hash
    return ManifestItem(
        item_id or f"message/{digest}",
        "message",
        "conversation",
        cache.message(message),
        digest,
        role=message.role,
        blocks=len(message.content),
    )


def test_the_cached_form_shares_the_last_requests_items_and_prices_the_instruction_apart() -> None:
    cache = TokenCache(ApproximateCounter())
    last = ModelRequest(system=SYSTEM, messages=MESSAGES[:5], tools=TOOLS)
    sent_before = message_items(list(MESSAGES[:5]), cache)
    context_items = (UNRECORDED, TOOL, SYSTEM_ITEM, *sent_before)
    call = summary_call(_ask(MESSAGES, kept=2), cache, 10**6, last, context_items)
    assert call.cached
    sent = call.request.messages
    assert sent[:6] == MESSAGES[:6]
    ends = sent[-1]
    assert isinstance(ends, UserMessage) and ends.content[:2] == MESSAGES[6].content
    instruction = ends.content[-1]
    assert isinstance(instruction, TextBlock)
    assert "except its last 2 messages" in instruction.text
    items = call.items
    assert len(items) == 3 + 5 + 1 + 2
    # The last request's own items, the same objects: its prefix, as the cost model keys it.
    assert all(a is b for a, b in zip(items[:8], context_items, strict=True))
    # What arrived since: the reply whole, the results as they arrived, then the instruction —
    # the tokens the results and the instruction add to each other.
    assert items[8] == _item(MESSAGES[5], cache)
    assert items[9] == _item(MESSAGES[6], cache)
    asked = cache.message(ends) - cache.message(MESSAGES[6])
    assert items[10] == ManifestItem(
        "summary/instruction",
        "message",
        "conversation",
        asked,
        instruction.content_hash,
        role="user",
    )
    assert call.tokens == 18_800 + 120 + 500 + sum(cache.message(m) for m in sent)


def _chat(*texts: str) -> tuple[Message, ...]:
    """The user's and the assistant's ``texts`` in turn, the user's first."""
    return tuple(
        UserMessage(content=t) if n % 2 == 0 else AssistantMessage(content=t)
        for n, t in enumerate(texts)
    )


def _call_after(
    messages: tuple[Message, ...], *, sent: int, kept: int, cache: TokenCache
) -> SummaryCall:
    """The summary call of ``messages`` (the last ``kept`` kept after it) where the last
    request, under the System prompt and tools, sent the first ``sent`` of them: its items known
    (the System prompt's and the messages')."""
    last = ModelRequest(system=SYSTEM, messages=messages[:sent], tools=TOOLS)
    context_items = (SYSTEM_ITEM, *message_items(list(messages[:sent]), cache))
    return summary_call(_ask(messages, kept=kept), cache, 10**6, last, context_items)


def test_a_message_repeated_among_the_new_ones_is_numbered() -> None:
    cache = TokenCache(ApproximateCounter())
    messages = (
        *_chat("Fix it.", "Looking.", "ok", "Done."),
        UserMessage(content=(TextBlock(text="ok"),)),
    )
    call = _call_after(messages, sent=2, kept=2, cache=cache)
    digest = messages[2].content_hash
    assert messages[4].content_hash == digest
    ids = [i.id for i in call.items]
    assert ids[3:] == [f"message/{digest}", ids[4], f"message/{digest}#2", "summary/instruction"]


def test_without_the_last_requests_items_its_system_and_tools_are_itemized() -> None:
    cache = TokenCache(ApproximateCounter())
    whole = _ask(MESSAGES, kept=2)
    system_only = ModelRequest(system=SYSTEM, messages=MESSAGES[:5], tools=())
    call = summary_call(whole, cache, 10**6, system_only, ())
    assert call.cached
    (system,) = [i for i in call.items if i.placement in ("system", "tools")]
    assert (system.id, system.kind) == ("system/system_prompt", "system")
    assert call.items[0] is system
    tools_only = ModelRequest(system="", messages=MESSAGES[:5], tools=TOOLS)
    call = summary_call(whole, cache, 10**6, tools_only, ())
    fixed = [(i.id, i.placement) for i in call.items if i.placement in ("system", "tools")]
    assert fixed == [("tool/bash", "tools")]
    # Either way, each message of the call is priced at its own count.
    assert call.tokens == call.items[0].tokens + sum(
        cache.message(m) for m in call.request.messages
    )


def test_the_summary_manifest_is_the_calls_field_by_field() -> None:
    cache = TokenCache(ApproximateCounter())
    last = ModelRequest(system=SYSTEM, messages=MESSAGES[:5], tools=TOOLS)
    call = summary_call(_ask(MESSAGES, kept=2), cache, 10**6, last, ())
    lines = Thresholds(50_000, 30_000, 40_000, 10_000, 45_000)
    moved = (Transform("tool_result_offload", "c0", "offload/c0.txt"),)
    manifest = summary_manifest(
        call, "claude-sonnet-4-6", cache, transforms=list(moved), thresholds=lines
    )
    assert re.fullmatch(r"[0-9a-f]{16}", manifest.request_id)
    assert (
        manifest.purpose,
        manifest.model,
        manifest.estimated_input_tokens,
        manifest.input_limit,
        manifest.counting_method,
        manifest.exact,
        manifest.items,
        manifest.transforms,
        manifest.validation,
        manifest.context_size,
        manifest.thresholds,
        manifest.error,
    ) == (
        "summary",
        "claude-sonnet-4-6",
        call.tokens,
        10**6,
        cache.method,
        cache.exact,
        call.items,
        moved,
        "passed",
        50_000,
        lines,
        None,
    )
    bare = summary_manifest(call, "m", cache)
    assert (bare.context_size, bare.thresholds, bare.transforms) == (0, None, ())
    assert bare.request_id != manifest.request_id


def test_an_instruction_in_a_message_of_its_own_is_that_messages_item() -> None:
    # After a reply, the instruction is a user message alone: one part, nothing to split off.
    cache = TokenCache(ApproximateCounter())
    messages = _chat("Fix it.", "Looking.", "Go on.", "Done.")
    call = _call_after(messages, sent=3, kept=0, cache=cache)
    assert call.cached
    asking = call.request.messages[-1]
    assert isinstance(asking, UserMessage) and len(asking.content) == 1
    assert call.items[4:] == (_item(messages[3], cache), _item(asking, cache))
    assert "summary/instruction" not in [i.id for i in call.items]


def test_the_cached_form_is_sent_up_to_its_exact_size_and_the_span_alone_below_it() -> None:
    # The cached form is given up as soon as its items pass the limit: what is sent must be
    # what itemizing it whole decides, at its size, one token under, and far under.
    cache = TokenCache(ApproximateCounter())
    last = ModelRequest(system=SYSTEM, messages=MESSAGES[:5], tools=TOOLS)
    context_items = (UNRECORDED, TOOL, SYSTEM_ITEM, *message_items(list(MESSAGES[:5]), cache))
    ask = _ask(MESSAGES, kept=2)
    whole = summary_call(ask, cache, 10**6, last, context_items)
    size = whole.tokens
    assert size == 18_800 + 120 + 500 + sum(cache.message(m) for m in whole.request.messages)
    at = summary_call(ask, cache, size, last, context_items)
    assert (at.cached, at.fits, at.tokens, at.items) == (True, True, size, whole.items)
    for limit in (size - 1, 18_000, 100):
        alone = summary_call(ask, cache, limit)  # no last request: the span alone
        # Itemized whole even when it does not fit (its size is said): each message at its
        # count, the last one's instruction apart.
        sent = alone.request.messages
        assert alone.tokens == sum(cache.message(m) for m in sent)
        assert len(alone.items) == len(sent) + 1
        under = summary_call(ask, cache, limit, last, context_items)
        assert not under.cached
        assert (under.tokens, under.items, under.fits) == (alone.tokens, alone.items, alone.fits)
        assert under.request == alone.request
    assert summary_call(ask, cache, size - 1).fits  # the span alone is smaller
    assert not summary_call(ask, cache, 100).fits
