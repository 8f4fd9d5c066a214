"""`TokenCache.count_ahead` remembers each fresh message's count from its blocks' (issue 54: one
look-up per block, no call per message) with the bookkeeping `TokenCache.message` gives: the
count, one hit per block for a message first met, one hit for a message met again in the same
batch, and — when the bounded block table was cleared while the batch was counted — the
message counted through `message` as before."""

from __future__ import annotations

import pytest

from ctxlab.exceptions import UsageError
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


def test_a_batch_counted_before_is_answered_without_counting_or_hits() -> None:
    # A replay's step hands its few new messages (a tuple), all counted ahead: a look-up each,
    # nothing tokenized, the bookkeeping as the full path leaves it (no hit for known messages).
    counter = CountingCounter()
    cache = TokenCache(counter)
    messages = tuple(_messages())
    assert cache.count_ahead(messages) == 3
    calls, hits = len(counter.calls), cache.hits
    assert cache.count_ahead(messages) == 0
    assert cache.count_ahead(messages[1:]) == 0
    assert (len(counter.calls), cache.hits) == (calls, hits)


def test_what_is_not_a_message_is_refused_among_known_ones() -> None:
    cache = TokenCache(CountingCounter())
    messages = tuple(_messages())
    cache.count_ahead(messages)
    block = messages[0].content[0]
    # Even one whose hash the table knew (the look-up alone would let it pass as counted).
    cache._messages[block.content_hash] = 1
    with pytest.raises(UsageError, match="a token count is of a message"):
        cache.count_ahead((*messages, block))

    # A subclass of a message type takes the checked path and is counted as a message.
    class Mine(UserMessage):
        pass

    assert cache.count_ahead((*messages, Mine(content="abcdefgh abcd"))) == 1
