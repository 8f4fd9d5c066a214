"""The checks of arrived messages (images, decode notes, a result message over the limit, server
compaction blocks) are made in one place, `_scan._checked`, for the full scan (`_Arrived`) and
the common step (`plain_arrival`) alike: each finds what the checks find a pass per check (the
spelling the one pass replaced, below), each check finds its thing, and the common step makes
fewer calls per tool exchange than its own loop did (it runs at every step of a replay)."""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any

import pytest
from hypothesis import given

from ctxlab import ApproximateCounter, AssistantMessage, ContextConfig, TokenCache, UserMessage
from ctxlab.manifest import Transform
from ctxlab.messages import DECODE_NOTE, ProviderBlock
from ctxlab.pipeline._provider_edits import has_compaction_block
from ctxlab.pipeline._scan import _Arrived, _checked, _evicting, plain_arrival, scan_conversation
from tests.pipeline.test_plain_arrival import ARRIVALS, _arrivals, _exchange, arrival_case
from tests.pipeline.test_properties import image

_PREFIX = DECODE_NOTE.split("{", 1)[0]


def _each_check(messages: Any, limit: int, cache: TokenCache) -> tuple[Any, ...]:
    """What `_Arrived` holds, a pass per check (the spelling one pass replaced): images, decode
    notes, whether a message with results is over ``limit`` (looked up until one is), server
    compaction blocks."""
    users = [m for m in messages if isinstance(m, UserMessage)]
    notes = [
        Transform("tool_output_decoded", r.tool_use_id, r.text.partition("\n")[0])
        for m in users
        for r in m.tool_results
        if r.text.startswith(_PREFIX)
    ]
    over = any(cache.message(m) > limit for m in users if m.tool_results)
    images = sum(m.image_count for m in users)
    return images, notes, over, sum(map(has_compaction_block, messages))


def _plain(scan: Any, suffix: Any, config: ContextConfig, cache: TokenCache) -> Any:
    """What `plain_arrival` gives, from `_each_check`: None when a stage would act on the
    arrival, else (counts, tokens, images)."""
    counts = cache.message_counts(suffix)
    images, notes, over, compactions = _each_check(suffix, config.tool_result_limit, cache)
    images += scan.images
    if notes or over or compactions or images > config.max_image_num:
        return None
    return None if _evicting(suffix, config, None) else (counts, sum(counts), images)


@ARRIVALS
@given(case=_arrivals())
def test_both_callers_of_the_one_place_find_what_a_pass_per_check_finds(
    case: tuple[list[Any], list[Any], ContextConfig],
) -> None:
    before, suffix, config, cache = arrival_case(case)
    spec_cache = TokenCache(ApproximateCounter())
    scan, _ = scan_conversation(before, config, None, cache)
    limit = config.tool_result_limit
    # The full scan's: the same findings, and the same messages looked up (the cache's hits).
    arrived = _Arrived.of(suffix, limit, cache)
    found = (arrived.images, arrived.decoded, arrived.over, arrived.compactions)
    spec_cache.count_ahead(suffix)
    spec_cache.hits = cache.hits = 0
    assert _Arrived.of(suffix, limit, cache) == arrived
    assert found == _each_check(suffix, limit, spec_cache)
    assert cache.hits == spec_cache.hits
    # The common step's: the same verdict, counts and images.
    new = plain_arrival(scan, suffix, config, None, cache)
    old = _plain(scan, suffix, config, cache)
    assert (None if new is None else (new.counts, new.tokens, new.images)) == old


def test_each_check_finds_its_thing_for_both_callers() -> None:
    # One arrival holding each thing checked, and a result exactly at the limit (not over).
    cache = TokenCache(ApproximateCounter())
    compacted = ProviderBlock(data={"type": "compaction", "content": "so far"})
    decoded = _exchange(1, DECODE_NOTE.format(count=3) + "the rest")
    shown = [AssistantMessage(content="show me"), UserMessage(content=(image(4),))]
    at_limit = _exchange(2, "line of output " * 40)
    limit = cache.message(at_limit[1])
    suffix = (*decoded, *shown, AssistantMessage(content=(compacted,)), *at_limit)
    said = "[ctxlab: 3 undecodable bytes of this output were replaced by U+FFFD]"
    note = Transform("tool_output_decoded", "call_1", said)
    found = _Arrived.of(suffix, limit, cache)
    assert (found.images, found.decoded, found.over, found.compactions) == (1, [note], False, 1)
    assert _Arrived.of(suffix, limit - 1, cache).over is True
    # Counts are looked up until a message is over, and over stays so.
    over_first = (*_exchange(5, "line of output " * 400), *_exchange(6, "a short output"))
    cache.count_ahead(over_first)
    cache.hits = 0
    assert _Arrived.of(over_first, limit, cache).over is True
    assert cache.hits == 1
    config = ContextConfig(tool_result_limit=limit, max_image_num=1)
    scan = scan_conversation((UserMessage(content="start"),), config, None, cache)[0]
    plain = (*shown, *at_limit)
    arrival = plain_arrival(scan, plain, config, None, cache)
    assert arrival is not None and arrival.images == 1
    assert arrival.counts == [cache.message(m) for m in plain]
    for other in (decoded, [AssistantMessage(content=(compacted,))], [*shown, *shown]):
        assert plain_arrival(scan, tuple(other), config, None, cache) is None
    tight = ContextConfig(tool_result_limit=limit - 1, max_image_num=1)
    assert plain_arrival(scan, plain, tight, None, cache) is None


def _python_calls(call: Any) -> int:
    """How many Python functions ``call()`` runs (a steadier measure than its time)."""
    calls = 0

    def count(frame: FrameType, event: str, arg: object) -> None:
        nonlocal calls
        calls += event == "call"

    sys.setprofile(count)
    try:
        call()
    finally:
        sys.setprofile(None)
    return calls - 1  # the call of ``call`` itself


def test_the_common_step_makes_at_most_three_calls_per_tool_exchange() -> None:
    # Its own loop made five (a helper and its comprehension for the decode notes of each
    # result): the one place checks them inline.
    config = ContextConfig(tool_result_limit=300)
    cache = TokenCache(ApproximateCounter())
    scan = scan_conversation((UserMessage(content="start"),), config, None, cache)[0]
    one = tuple(_exchange(1, "a short output"))
    two = (*_exchange(2, "a short output"), *_exchange(3, "another output"))
    for suffix in (one, two):  # counted, and their messages' properties cached
        assert plain_arrival(scan, suffix, config, None, cache) is not None
    calls = [
        _python_calls(lambda s=s: plain_arrival(scan, s, config, None, cache)) for s in (one, two)
    ]
    assert calls[1] - calls[0] <= 3


def test_counts_that_do_not_match_the_messages_are_an_error() -> None:
    # The common step's loop zipped its counts strictly: a count missing would leave the
    # messages after it unchecked (here a result far over the limit), the arrival taken as
    # plain (i67-rev1). The full scan holds no counts: each is looked up.
    cache = TokenCache(ApproximateCounter())
    suffix = (*_exchange(1, "short"), *_exchange(2, "line of output " * 400))
    counts = cache.message_counts(suffix)
    assert _checked(suffix, counts, 100, cache)[2] is True
    for wrong in (counts[:2], [*counts, 1]):
        with pytest.raises(ValueError, match="zip"):
            _checked(suffix, wrong, 100, cache)
    assert _checked(suffix, None, 100, cache) == _checked(suffix, counts, 100, cache)
