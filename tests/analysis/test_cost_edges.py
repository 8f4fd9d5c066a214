"""The cost model at its edges, in tokens and dollars worked out by hand: a prefix of exactly the
minimum is cached; a request the same as an earlier one reads all of it (OpenAI, and Anthropic
without the look-back); a look-back counts a part without block counts as one block; two
references' requests (shared bases) priced in one run keep apart; consecutive summary calls of
a live session each take the summary the next reasoning request carries."""

from __future__ import annotations

import pytest

from ctxlab.analysis._cost import (
    CacheRules,
    Prefix,
    RequestShape,
    costs_of_manifests,
    price_for,
    request_costs,
    shape_of,
)
from tests.analysis.test_cost_dollars import FIRST, FIXED, SONNET, _item, _manifest

PRICE = price_for(SONNET)  # $3 input, $15 output per million


def _read_write(costs: list) -> list[tuple[int, int, int]]:  # type: ignore[type-arg]
    return [(c.uncached, c.cache_write, c.cache_read) for c in costs]


def test_a_prefix_of_exactly_the_minimum_is_cached() -> None:
    """The guide's minimum cacheable length is 1,024 tokens for Sonnet: a prefix that long is
    written, and read by the next request; one token shorter is neither."""
    rules = CacheRules.anthropic()
    assert rules.min_tokens == 1024
    at = RequestShape(("a", "b"), (1000, 24), (1,))
    again = RequestShape(("a", "b", "c"), (1000, 24, 50), (1, 2))
    assert _read_write(request_costs([at, again], PRICE, rules)) == [
        (0, 1024, 0),
        (0, 50, 1024),
    ]
    short = RequestShape(("a", "b"), (1000, 23), (1,))
    longer = RequestShape(("a", "b", "c"), (1000, 23, 50), (1,))
    assert _read_write(request_costs([short, longer], PRICE, rules)) == [
        (1023, 0, 0),
        (1073, 0, 0),
    ]


def test_a_request_sent_again_reads_all_of_it() -> None:
    shape = RequestShape(("a", "b"), (1_500, 700), (1,))
    # OpenAI: the whole 2,200-token prefix, in 128-token steps (2,176).
    _, openai = request_costs([shape, shape], PRICE, CacheRules.openai())
    assert (openai.cache_read, openai.uncached) == (2_176, 24)
    # Anthropic, the look-back off: the whole request read, nothing written; the first request
    # read nothing (0, not a token).
    rules = CacheRules("anthropic", 1024, "5m", 1, None)
    first, second = request_costs([shape, shape], PRICE, rules)
    assert (first.uncached, first.cache_write, first.cache_read) == (0, 2_200, 0)
    assert (second.uncached, second.cache_write, second.cache_read) == (0, 0, 2_200)
    assert second.cost == pytest.approx(2_200 * 0.3 / 1e6)


def test_a_part_without_block_counts_is_one_block_to_the_look_back() -> None:
    """20 parts after the cached prefix: within the 20 blocks the provider looks back, when
    each part is one block; 21 are not."""
    head = RequestShape(("h",), (2_000,), (0,))

    def after(parts: int) -> RequestShape:
        keys = ("h", *(f"p{n}" for n in range(parts)))
        return RequestShape(keys, (2_000, *([10] * parts)), (parts,))

    near = request_costs([head, after(20)], PRICE, CacheRules.anthropic())[1]
    far = request_costs([head, after(21)], PRICE, CacheRules.anthropic())[1]
    assert (near.cache_read, near.cache_write) == (2_000, 200)
    assert (far.cache_read, far.cache_write) == (0, 2_210)


def test_requests_on_two_shared_bases_keep_apart() -> None:
    """Requests that are views of a shared base (`Prefix`, as the references build them) on
    two bases, priced in one run: each prefix's digest is its own base's."""
    one_keys, one_tokens = ["a", "b", "c"], [1_200, 300, 300]
    two_keys, two_tokens = ["x", "y", "z"], [1_500, 400, 400]
    shapes = [
        RequestShape(Prefix(one_keys, 2), Prefix(one_tokens, 2), (1,)),
        RequestShape(Prefix(two_keys, 2), Prefix(two_tokens, 2), (1,)),
        RequestShape(Prefix(one_keys, 3), Prefix(one_tokens, 3), (2,)),
        RequestShape(Prefix(two_keys, 3), Prefix(two_tokens, 3), (2,)),
    ]
    assert _read_write(request_costs(shapes, PRICE, CacheRules.anthropic())) == [
        (0, 1_500, 0),
        (0, 1_900, 0),
        (0, 300, 1_500),
        (0, 400, 1_900),
    ]


def test_a_shape_has_no_output_unless_told() -> None:
    assert shape_of(_manifest(FIRST)).output_tokens == 0
    (cost,) = request_costs([shape_of(_manifest(FIRST))], PRICE, CacheRules.none())
    assert cost.cost == pytest.approx(2_700 * 3 / 1e6)


def test_consecutive_summary_calls_each_take_the_summary_the_next_request_carries() -> None:
    """A span summarized in two pieces: two summary calls without usage, then the reasoning
    request that carries the summary (450 tokens): each call's output is that summary."""
    after = _manifest([*FIXED, _item("summary/1", "summary", 450), *FIRST[2:4]])
    costs = costs_of_manifests(
        [
            _manifest(FIRST, output=10),
            _manifest(FIXED, "summary"),
            _manifest(FIXED, "summary"),
            after,
        ]
    )
    assert [c.output for c in costs] == [10, 450, 450, 0]
    # None follows: nothing to take.
    last = costs_of_manifests([_manifest(FIRST, output=10), _manifest(FIXED, "summary")])
    assert [c.output for c in last] == [10, 0]
