"""The cost model's shared prefixes (the never-compacting reference's requests as views of one
sequence, each part hashed once) price exactly as the same requests written out in full — under
Anthropic's and OpenAI's cache rules — and hold the session once, not once per request."""

from __future__ import annotations

from collections.abc import Iterator

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.analysis._cost import CacheRules, Prefix, Price, RequestShape, request_costs
from ctxlab.analysis._references import reference_shapes
from ctxlab.messages import AssistantMessage, UserMessage
from ctxlab.tokens import ApproximateCounter, TokenCache
from tests.strategies import SETTINGS

PRICE = Price(3, 15, 3.75, 0.3)


def _written_out(shape: RequestShape) -> RequestShape:
    return RequestShape(
        tuple(shape.keys), tuple(shape.tokens), shape.breakpoints, shape.output_tokens
    )


def _session(sizes: list[int]) -> list[UserMessage | AssistantMessage]:
    messages: list[UserMessage | AssistantMessage] = [UserMessage(content="task " * 50)]
    for n, size in enumerate(sizes):
        messages.append(AssistantMessage(content=f"step {n} " + "word " * size))
        messages.append(UserMessage(content=f"result {n} " + "out " * (3 * size)))
    return messages


@SETTINGS
@given(
    st.lists(st.integers(1, 900), min_size=1, max_size=25), st.sampled_from(["anthropic", "openai"])
)
def test_never_compacting_prices_as_its_requests_written_out(sizes: list[int], kind: str) -> None:
    messages = _session(sizes)
    cache = TokenCache(ApproximateCounter())
    fixed = (("tool/a#1", "system/s#2"), (400, 900))
    rules = CacheRules.anthropic() if kind == "anthropic" else CacheRules.openai()
    shapes = reference_shapes(messages, cache, fixed, 10**9, None).shapes
    assert all(isinstance(s.keys, Prefix) for s in shapes)
    assert len({id(s.keys.base) for s in shapes}) == 1  # one sequence for every request
    viewed = request_costs(shapes, PRICE, rules)
    full = request_costs([_written_out(s) for s in shapes], PRICE, rules)
    assert viewed == full
    # The requests grow: later ones read what earlier ones cached.
    if len(shapes) > 2:
        assert viewed[-1].cache_read > 0


def test_a_prefix_reads_like_the_slice_it_stands_for() -> None:
    base = ("a", "b", "c", "d")
    view = Prefix(base, 3)
    assert list(view) == ["a", "b", "c"] and len(view) == 3
    assert view[-1] == "c" and view[1:] == ("b", "c") and view[:10] == ("a", "b", "c")
    assert Prefix(base, 9).end == 4 and len(Prefix(base, -2)) == 0
    try:
        view[3]
    except IndexError:
        pass
    else:
        raise AssertionError("index 3 is past the view")


def test_requests_over_the_limit_are_counted_as_before() -> None:
    messages = _session([300] * 8)
    cache = TokenCache(ApproximateCounter())
    fixed = (("system/s#1",), (100,))
    totals = []
    sent = 100
    for message in messages:
        if isinstance(message, AssistantMessage):
            totals.append(sent)
        sent += cache.message(message)
    limit = totals[4]
    over = reference_shapes(messages, cache, fixed, limit, None).over_limit
    assert over == sum(t > limit for t in totals) == 3


def test_a_repeated_message_is_not_mistaken_for_a_cached_prefix() -> None:
    # Every assistant turn says the same (one key, many places): each request extends the one
    # before from that key, so a prefix identified by its last key alone, not all of them,
    # would read as cached what no request sent. Priced as written out, it must match.
    messages: list[UserMessage | AssistantMessage] = [UserMessage(content="task " * 50)]
    for n in range(12):
        messages.append(AssistantMessage(content="Let me look. " * 40))
        messages.append(UserMessage(content=f"result {n} " + "out " * (200 + 150 * n)))
    cache = TokenCache(ApproximateCounter())
    fixed = (("system/s#1",), (1500,))
    shapes = reference_shapes(messages, cache, fixed, 10**9, None).shapes
    for rules in (CacheRules.anthropic(), CacheRules.openai()):
        viewed = request_costs(shapes, PRICE, rules)
        assert viewed == request_costs([_written_out(s) for s in shapes], PRICE, rules)
        # Each request reads exactly what the one before it wrote at its end (a whole
        # request: Anthropic's breakpoint on the latest message; OpenAI's 128-token steps).
        sent = [sum(s.tokens) for s in shapes]
        for before, cost in zip(sent, viewed[1:], strict=False):
            step = rules.step
            assert cost.cache_read == before - before % step


def test_pricing_keeps_no_table_of_every_prefix() -> None:
    # Each request's first part differs (as after a compaction rewrites the summary), so every
    # prefix of every request is new: a table of prefixes seen would grow with the square of
    # the requests (here ~1.5 M entries); the cost model keeps only what was cached.
    import tracemalloc

    common = tuple(f"message/{n}#h" for n in range(600))

    def shapes() -> Iterator[RequestShape]:
        for n in range(2_500):
            keys = (f"summary/{n}#h", *common)
            yield RequestShape(keys, (1_500,) + (10,) * len(common), (0, len(keys) - 1), 50)

    tracemalloc.start()
    try:
        costs = request_costs(shapes(), PRICE, CacheRules.anthropic())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(costs) == 2_500
    assert costs[1].cache_read == 0  # nothing after the first part is shared
    assert peak < 30 * 2**20, f"peak {peak / 2**20:.0f} MB"
