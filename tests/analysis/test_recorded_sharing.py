"""A recording's requests share what they hold: within a segment the messages and the manifest
items of each request are views of one tuple — the same values as built one by one, held once
(a 10,000-request recording opened in the Lab held them about n²/2 times: 18 GB)."""

from __future__ import annotations

from pathlib import Path

from ctxlab import load
from ctxlab.analysis._recorded import (
    RecordedItems,
    recorded_manifest,
    recorded_requests,
)
from ctxlab.pipeline._scan import message_items
from ctxlab.tokens import ApproximateCounter, TokenCache
from ctxlab.util._views import Prefix

FIXTURE = Path(__file__).parents[1] / "fixtures" / "sessions" / "claude_code_session.jsonl"


def test_requests_of_a_segment_are_views_of_one_tuple_with_the_values_of_slices() -> None:
    transcript = load(FIXTURE)
    requests = recorded_requests(transcript)
    by_segment: dict[int, set[int]] = {}
    for request in requests:
        assert isinstance(request.messages, Prefix)
        by_segment.setdefault(request.segment, set()).add(id(request.messages.base))
        if request.segment == 0:
            # Before any compaction: exactly the recording's messages up to the reply.
            expected = transcript.messages[request.start : request.reply]
            assert request.messages == tuple(expected)
    assert all(len(bases) == 1 for bases in by_segment.values())
    assert len(by_segment) == 2


def test_shared_items_are_the_items_built_one_request_at_a_time() -> None:
    transcript = load(FIXTURE)
    cache = TokenCache(ApproximateCounter())
    itemized = RecordedItems((), cache)
    previous = None
    for request in recorded_requests(transcript):
        shared = recorded_manifest(
            request, cache, context_window=200_000, previous=previous, itemized=itemized
        )
        alone = message_items(tuple(request.messages), cache)
        assert list(shared.items) == alone
        assert shared.estimated_input_tokens == sum(i.tokens for i in alone)
        previous = shared
    # Consecutive requests of a segment hold the same item objects, not copies.
    first, second = (
        recorded_manifest(r, cache, context_window=200_000, previous=None, itemized=itemized)
        for r in recorded_requests(transcript)[:2]
    )
    assert first.items[0] is second.items[0]


def test_a_prefix_compares_and_hashes_as_its_tuple() -> None:
    base = (1, 2, 3, 4)
    assert Prefix(base, 2) == (1, 2) and Prefix(base, 2) == (1, 2)
    assert Prefix(base, 2) != (1, 2, 3) and Prefix(base, 2) == Prefix((1, 2), 2)
    assert hash(Prefix(base, 3)) == hash((1, 2, 3))
    assert Prefix(base, 2) + (9,) == (1, 2, 9)  # noqa: RUF005 - the operator is what is tested
    assert (0,) + Prefix(base, 1) == (0, 1)  # noqa: RUF005
