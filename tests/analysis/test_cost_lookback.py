"""Anthropic's 20-block look-back: a breakpoint finds an earlier cached prefix only when that
prefix ends at most 20 content blocks before it (the prompt-caching guide: "the system
automatically checks for cache hits at all previous content block boundaries (up to
approximately 20 blocks before your explicit breakpoint)"). Bills worked out by hand."""

from __future__ import annotations

import pytest

from ctxlab.analysis._cost import (
    ANTHROPIC_LOOKBACK,
    CacheRules,
    Price,
    RequestShape,
    request_costs,
)
from ctxlab.analysis._references import reference_shapes
from ctxlab.messages import AssistantMessage, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage
from ctxlab.tokens import ApproximateCounter, TokenCache
from tests.helpers import manifest_of

PRICE = Price(input=3.0, output=15.0, cache_write=3.75, cache_read=0.3)


def _shape(parts: list[tuple[str, int, int]], points: tuple[int, ...]) -> RequestShape:
    keys = tuple(k for k, _, _ in parts)
    tokens = tuple(t for _, t, _ in parts)
    blocks = tuple(b for _, _, b in parts)
    return RequestShape(keys, tokens, points, blocks=blocks)


SYSTEM = ("system", 2000, 1)
OLD = ("m1", 3000, 1)


@pytest.mark.parametrize(("new_blocks", "read"), [(20, 5000), (21, 2000)])
def test_a_prefix_further_than_20_blocks_back_is_not_found(new_blocks: int, read: int) -> None:
    first = _shape([SYSTEM, OLD], points=(0, 1))
    # The next request adds one message of ``new_blocks`` blocks (a turn of parallel tool
    # results, say) and marks its end: 20 blocks back reaches the cached end of ``m1``, 21 not.
    second = _shape([SYSTEM, OLD, ("m2", 400, new_blocks)], points=(0, 2))
    _, costs = request_costs([first, second], PRICE, CacheRules.anthropic())
    assert costs.cache_read == read
    # What was not read is written again: the whole conversation when the look-back missed.
    assert costs.cache_write == 5400 - read
    assert costs.cost == pytest.approx((read * 0.3 + (5400 - read) * 3.75) / 1e6)


def test_blocks_are_counted_over_several_messages() -> None:
    first = _shape([SYSTEM, OLD], points=(0, 1))
    # Eleven messages of two blocks: the cached boundary is 22 blocks back — missed; ten of
    # them (20 blocks) — found.
    far = [(f"n{i}", 100, 2) for i in range(11)]
    near = far[:10]
    missed = request_costs(
        [first, _shape([SYSTEM, OLD, *far], points=(0, 12))], PRICE, CacheRules.anthropic()
    )[1]
    found = request_costs(
        [first, _shape([SYSTEM, OLD, *near], points=(0, 11))], PRICE, CacheRules.anthropic()
    )[1]
    assert (missed.cache_read, missed.cache_write) == (2000, 3000 + 1100)
    assert (found.cache_read, found.cache_write) == (5000, 1000)


def test_without_a_look_back_any_earlier_prefix_is_found() -> None:
    first = _shape([SYSTEM, OLD], points=(0, 1))
    second = _shape([SYSTEM, OLD, ("m2", 400, 50)], points=(0, 2))
    unlimited = CacheRules("anthropic", 1024, "5m", 1, None)
    assert request_costs([first, second], PRICE, unlimited)[1].cache_read == 5000
    assert CacheRules.anthropic().lookback == ANTHROPIC_LOOKBACK == 20


def test_the_references_count_each_messages_blocks() -> None:
    """The never-compacting reference: a turn of 12 parallel calls answered in one message of
    12 results puts 25 blocks between the request before it and its own breakpoint."""
    calls = tuple(
        ToolUseBlock(id=f"c{n}", name="read", input={"path": f"f{n}.py"}) for n in range(12)
    )
    results = tuple(
        ToolResultBlock(tool_use_id=f"c{n}", content="x = 1\n" * 200) for n in range(12)
    )
    messages = (
        UserMessage(content="Read the files. " + "context " * 800),
        AssistantMessage(content=(TextBlock(text="Reading."), *calls)),
        UserMessage(content=results),
        AssistantMessage(content="Done."),
    )
    cache = TokenCache(ApproximateCounter())
    fixed = (("system",), (1500,))
    shapes = reference_shapes(messages, cache, fixed, 10**6, None).shapes
    assert [s.blocks for s in shapes] == [(1, 1), (1, 1, 13, 12)]
    first, second = request_costs(shapes, PRICE, CacheRules.anthropic())
    assert first.cache_write == 1500 + cache.message(messages[0])
    # The first request's end is 25 blocks behind the second's breakpoint: only System is read.
    assert second.cache_read == 1500
    unlimited = CacheRules("anthropic", 1024, "5m", 1, None)
    assert request_costs(shapes, PRICE, unlimited)[1].cache_read == first.cache_write


def test_a_manifests_messages_carry_their_blocks_into_the_shape() -> None:
    from ctxlab.analysis._cost import shape_of
    from ctxlab.pipeline import message_items

    cache = TokenCache(ApproximateCounter())
    turn = AssistantMessage(
        content=(
            TextBlock(text="Two reads."),
            ToolUseBlock(id="a", name="read", input={}),
            ToolUseBlock(id="b", name="read", input={}),
        )
    )
    items = message_items([UserMessage(content="Go."), turn], cache)
    assert [i.blocks for i in items] == [1, 3]
    manifest = manifest_of(items, input_limit=10_000)
    assert shape_of(manifest).blocks == (1, 3)
