"""The prompt cache on a clock, in dollars: an entry lives its provider's lifetime after its last
write or read, and a request after a longer pause writes the prefix again (priced as a write,
counted in ``expired``); a read refreshes the entry; a recording's 1-hour writes are priced and
kept as such; times missing, out of order or equal never make a negative gap."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.analysis._cost import CacheRules, Price, RequestShape, request_costs

# Sonnet 4.5's list prices, USD per million tokens: input, output, 5-minute write, read, 1-hour
# write (Anthropic's pricing page: 1.25× and 2× input to write, 0.1× to read).
SONNET = Price(3.0, 15.0, 3.75, 0.30, cache_write_1h=6.0, provider="anthropic")
# GPT-5's: input, output, no write charge (the input price), cached input.
GPT5 = Price(1.25, 10.0, 1.25, 0.125, provider="openai")


def _growing(times: list[float | None], ttl: str | None = None) -> list[RequestShape]:
    """A session whose requests each add one message: System 2,000 tokens, then messages of
    1,000, 500, 700, 300, ...; Anthropic's two breakpoints (after System, on the last message),
    each answered with 100 tokens."""
    sizes = [2_000, 1_000, 500, 700, 300, 900, 400, 600, 800]
    shapes = []
    for n, at in enumerate(times):
        count = n + 2
        keys = tuple(f"part{i}" for i in range(count))
        shapes.append(
            RequestShape(keys, tuple(sizes[:count]), (0, count - 1), 100, at=at, write_ttl=ttl)  # type: ignore[arg-type]
        )
    return shapes


def test_a_pause_longer_than_five_minutes_writes_the_whole_prefix_again() -> None:
    # Gaps of 60 s and 400 s: the second request reads the first's 3,000 tokens; by the third,
    # 400 s after the second's write, every entry (System's too) is gone: it writes all 4,200.
    costs = request_costs(_growing([0.0, 60.0, 460.0]), SONNET, CacheRules.anthropic())
    assert [(c.cache_read, c.cache_write, c.expired) for c in costs] == [
        (0, 3_000, 0),
        (3_000, 500, 0),
        (0, 4_200, 3_500),
    ]
    assert costs[2].cost == pytest.approx((4_200 * 3.75 + 100 * 15.0) / 1e6, rel=1e-12)
    # Without the clock, the third read 3,500 and wrote 700: the pause cost the difference.
    warm = request_costs(_growing([None, None, None]), SONNET, CacheRules.anthropic())
    assert warm[2].cost == pytest.approx((3_500 * 0.30 + 700 * 3.75 + 100 * 15.0) / 1e6)
    extra = sum(c.cost for c in costs) - sum(c.cost for c in warm)
    assert extra == pytest.approx(3_500 * (3.75 - 0.30) / 1e6, rel=1e-9)


def test_the_one_hour_ttl_reads_after_the_same_pause_and_pays_two_times_input_to_write() -> None:
    costs = request_costs(_growing([0.0, 60.0, 460.0]), SONNET, CacheRules.anthropic(ttl="1h"))
    assert [(c.cache_read, c.cache_write, c.expired) for c in costs] == [
        (0, 3_000, 0),
        (3_000, 500, 0),
        (3_500, 700, 0),
    ]
    assert [c.cache_write_1h for c in costs] == [3_000, 500, 700]
    assert costs[0].cost == pytest.approx((3_000 * 6.0 + 100 * 15.0) / 1e6, rel=1e-12)
    assert costs[2].cost == pytest.approx((3_500 * 0.30 + 700 * 6.0 + 100 * 15.0) / 1e6)


def test_a_recordings_one_hour_writes_live_an_hour_under_five_minute_rules() -> None:
    # `write_ttl` "1h" (the recording wrote at the 1-hour TTL): kept an hour and priced at 2×.
    shapes = _growing([0.0, 60.0, 460.0, 3_000.0], ttl="1h")
    costs = request_costs(shapes, SONNET, CacheRules.anthropic())
    assert [c.cache_read for c in costs] == [0, 3_000, 3_500, 4_200]
    assert costs[3].cost == pytest.approx((4_200 * 0.30 + 300 * 6.0 + 100 * 15.0) / 1e6)
    # An hour and a second after the last read: gone.
    late = request_costs(
        _growing([0.0, 60.0, 460.0, 460.0 + 3_601.0], ttl="1h"), SONNET, CacheRules.anthropic()
    )
    assert (late[3].cache_read, late[3].cache_write, late[3].expired) == (0, 4_500, 4_200)


def test_each_read_refreshes_the_entry_so_a_busy_session_never_expires() -> None:
    # Four minutes between requests, 16 minutes in all: every request reads the one before.
    times = [0.0, 240.0, 480.0, 720.0, 960.0]
    costs = request_costs(_growing(times), SONNET, CacheRules.anthropic())
    warm = request_costs(_growing([None] * 5), SONNET, CacheRules.anthropic())
    assert [c.cost for c in costs] == [c.cost for c in warm]
    assert sum(c.expired for c in costs) == 0


def test_a_gap_of_exactly_the_lifetime_still_reads_and_one_second_more_does_not() -> None:
    at_edge = request_costs(_growing([0.0, 300.0]), SONNET, CacheRules.anthropic())
    past = request_costs(_growing([0.0, 301.0]), SONNET, CacheRules.anthropic())
    assert at_edge[1].cache_read == 3_000
    assert (past[1].cache_read, past[1].expired) == (0, 3_000)


def test_times_out_of_order_or_missing_make_no_gap() -> None:
    # 100 → 50: a gap of 0, never negative; the next gap is from the latest time (100 → 380).
    shuffled = request_costs(_growing([100.0, 50.0, 380.0]), SONNET, CacheRules.anthropic())
    assert [c.cache_read for c in shuffled] == [0, 3_000, 3_500]
    # A request with no time: the gaps on both sides of it are unknown, taken as 0.
    unknown = request_costs(_growing([0.0, None, 10_000.0]), SONNET, CacheRules.anthropic())
    assert [c.cache_read for c in unknown] == [0, 3_000, 3_500]
    # The same 10,000 s between two timed requests: everything expired.
    known = request_costs(_growing([0.0, 10_000.0]), SONNET, CacheRules.anthropic())
    assert known[1].cache_read == 0


def test_an_automatic_cache_keeps_every_prefix_a_busy_session_uses() -> None:
    # OpenAI caches every prefix: ten requests two minutes apart keep System's prefix alive
    # (each used it) although it was first written 18 minutes before the request that, after
    # the conversation changed, shares only it.
    base = tuple(f"m{i}" for i in range(10))
    shapes = [
        RequestShape(("sys", *base[: n + 1]), (2_048, *(256,) * (n + 1)), at=120.0 * n)
        for n in range(10)
    ]
    shapes.append(RequestShape(("sys", "summary"), (2_048, 512), at=120.0 * 10))
    costs = request_costs(shapes, GPT5, CacheRules.openai())
    assert costs[-1].cache_read == 2_048
    assert costs[-1].expired == 0
    assert costs[-1].cost == pytest.approx((2_048 * 0.125 + 512 * 1.25) / 1e6, rel=1e-12)
    # Ten minutes later instead: the whole prefix is processed again at the input price.
    late = [*shapes[:-1], RequestShape(("sys", "summary"), (2_048, 512), at=120.0 * 9 + 600)]
    costs = request_costs(late, GPT5, CacheRules.openai())
    assert (costs[-1].cache_read, costs[-1].expired) == (0, 2_048)
    assert costs[-1].cost == pytest.approx(2_560 * 1.25 / 1e6, rel=1e-12)


def test_an_automatic_cache_forgets_a_prefix_left_behind_for_longer_than_its_lifetime() -> None:
    # Request 2 leaves request 1's conversation behind; request 3 (4 minutes later) comes back
    # to it after 8 minutes in all: only System's prefix, used by every request, is alive.
    one = RequestShape(("sys", "a"), (2_048, 1_024), at=0.0)
    two = RequestShape(("sys", "b"), (2_048, 1_024), at=240.0)
    three = RequestShape(("sys", "a", "c"), (2_048, 1_024, 128), at=480.0)
    costs = request_costs([one, two, three], GPT5, CacheRules.openai())
    assert [c.cache_read for c in costs] == [0, 2_048, 2_048]
    assert costs[2].expired == 1_024


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.none(),
            st.floats(allow_nan=True, allow_infinity=True),
            st.sampled_from([0.0, 1e12, -1e12]),
        ),
        min_size=1,
        max_size=7,
    ),
    st.sampled_from(["anthropic", "openai", "google"]),
)
def test_any_times_give_costs_between_the_warm_and_the_cold_cache(
    times: list[float | None], kind: str
) -> None:
    rules = {
        "anthropic": CacheRules.anthropic(),
        "openai": CacheRules.openai(),
        "google": CacheRules.google(),
    }[kind]
    price = SONNET if kind == "anthropic" else GPT5
    timed = request_costs(_growing(times), price, rules)
    warm = request_costs(_growing([None] * len(times)), price, rules)
    for clocked, always in zip(timed, warm, strict=True):
        assert clocked.input_tokens == always.input_tokens
        assert 0 <= clocked.cache_read <= always.cache_read
        assert clocked.expired == always.cache_read - clocked.cache_read
        assert clocked.cost >= always.cost - 1e-12


@settings(max_examples=40, deadline=None)
@given(st.floats(min_value=-1e9, max_value=1e9), st.integers(min_value=1, max_value=7))
def test_every_gap_zero_costs_what_the_cache_without_a_clock_costs(start: float, n: int) -> None:
    for rules, price in ((CacheRules.anthropic(), SONNET), (CacheRules.openai(), GPT5)):
        same = request_costs(_growing([start] * n), price, rules)
        assert same == request_costs(_growing([None] * n), price, rules)


def test_a_read_refreshes_the_entry_it_read_though_no_breakpoint_writes_it_again() -> None:
    # Request 1 caches [A B]; request 2 (200 s) reads it and writes [A B C]; request 3 (450 s,
    # 450 s after [A B] was written) turns elsewhere after B: it finds [A B] alive only because
    # request 2's read refreshed it.
    one = RequestShape(("A", "B"), (2_000, 1_000), (1,), at=0.0)
    two = RequestShape(("A", "B", "C"), (2_000, 1_000, 500), (2,), at=200.0)
    three = RequestShape(("A", "B", "D"), (2_000, 1_000, 800), (2,), at=450.0)
    costs = request_costs([one, two, three], SONNET, CacheRules.anthropic())
    assert [(c.cache_read, c.cache_write) for c in costs] == [
        (0, 3_000),
        (3_000, 500),
        (3_000, 800),
    ]
    assert costs[2].cost == pytest.approx((3_000 * 0.30 + 800 * 3.75) / 1e6, rel=1e-12)


def test_a_time_far_before_the_one_before_it_gives_no_entry_a_longer_life() -> None:
    # 0 → -1,000 (out of order: a gap of 0) → 600: the third request comes 600 s after the
    # first's entry was written, and finds it gone (a negative gap would have kept it).
    one = RequestShape(("A", "B"), (2_000, 1_000), (0, 1), at=0.0)
    two = RequestShape(("A", "C"), (2_000, 1_000), (0, 1), at=-1_000.0)
    three = RequestShape(("A", "B", "D"), (2_000, 1_000, 800), (0, 2), at=600.0)
    costs = request_costs([one, two, three], SONNET, CacheRules.anthropic())
    assert [c.cache_read for c in costs] == [0, 2_000, 0]
    assert costs[2].expired == 3_000
