"""`TokenCache.count_ahead` remembers each fresh message's count from its blocks' (issue 54: one
look-up per block, no call per message) with the bookkeeping `TokenCache.message` gives: the
count, one hit per block for a message first met, one hit for a message met again in the same
batch, and — when the bounded block table was cleared while the batch was counted — the
message counted through `message` as before."""

from __future__ import annotations

import pytest

from ctxlab.messages import AssistantMessage, TextBlock, ToolUseBlock, UserMessage
from ctxlab.tokens import MESSAGE_OVERHEAD, TOOL_BLOCK_OVERHEAD, TokenCache, _cache
from tests.helpers import CountingCounter


def _messages() -> list[UserMessage | AssistantMessage]:
    ask = UserMessage(content=(TextBlock(text="abcdefgh"), TextBlock(text="abcd")))
    call = AssistantMessage(
        content=(
            TextBlock(text="abcd"),
            ToolUseBlock(id="t1", name="bash", input={"command": "ls"}),
        )
    )
    return [ask, call, ask]  # ``ask`` twice: met again within the batch


def test_fresh_messages_get_their_blocks_counts_and_a_hit_per_block() -> None:
    cache = TokenCache(CountingCounter())
    ask, call, _ = messages = _messages()
    assert cache.count_ahead(messages) == 3  # "abcdefgh", "abcd" (twice: once), the call
    # ask: two block hits; call: two block hits; ask again: one message hit.
    assert cache.hits == 5
    hits = cache.hits
    count = CountingCounter().count_text
    call_tokens = count("abcd") + TOOL_BLOCK_OVERHEAD + count("bash") + count('{"command":"ls"}')
    assert cache.message(ask) == MESSAGE_OVERHEAD + count("abcdefgh") + count("abcd")
    assert cache.message(call) == MESSAGE_OVERHEAD + call_tokens
    assert cache.hits == hits + 2  # both served whole, as `message` serves a counted one


def test_a_table_cleared_mid_batch_counts_the_message_through_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Two entries at most: the third block counted clears the block table, so the first
    # message's blocks are gone when its total is made — it is counted again, block by block.
    monkeypatch.setattr(_cache, "_MAX_ENTRIES", 2)
    counter = CountingCounter()
    cache = TokenCache(counter)
    through: list[object] = []
    real = cache.message
    monkeypatch.setattr(cache, "message", lambda m: through.append(m) or real(m))
    ask, call, _ = _messages()
    cache.count_ahead([ask, call])
    assert through == [ask, call]  # neither found its blocks all in the cleared table
    fresh = TokenCache(CountingCounter())
    assert cache.message(ask) == fresh.message(ask) == MESSAGE_OVERHEAD + 3
    assert cache.message(call) == fresh.message(call)
