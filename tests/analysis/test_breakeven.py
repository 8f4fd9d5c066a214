"""Break-even per compaction on sessions whose every token is known: each figure recomputed
here by hand, from the definition in docs/concepts/cost.md ("Does a compaction pay back?"),
never from the module's own arithmetic.

The session: a fixed prefix of 2,000 tokens (tools and System); every request adds 1,000
tokens of conversation and answers 100 tokens; Claude Sonnet's list price ($3 input, $15
output, $3.75 cache write, $0.30 cache read per million). Request 3 is the first after a
compaction that replaced 4,000 tokens of conversation (3,000 sent before and 1,000 new) by a
500-token summary and a 1,000-token kept tail: it removed R = 2,500 tokens.
"""

from __future__ import annotations

import dataclasses
import math

import pytest

from ctxlab.analysis._breakeven import BreakEven, CompactionAt, break_evens, duration_text
from ctxlab.analysis._cache_rules import CacheRules
from ctxlab.analysis._cost import RequestCost
from ctxlab.analysis._price import Price

PRICE = Price(3.0, 15.0, 3.75, 0.30)
RULES = CacheRules.anthropic()
M = 1_000_000
R = 2_500


def _cost(
    uncached: int, write: int, read: int, output: int, purpose: str = "reasoning"
) -> RequestCost:
    dollars = (uncached * 3.0 + write * 3.75 + read * 0.30 + output * 15.0) / M
    return RequestCost(uncached, write, read, output, dollars, purpose)


def _session(requests: int, *, cold: bool = False, summary: bool = True) -> list[RequestCost]:
    """Requests 0-2 grow by 1,000 tokens each, read warm; a summary call (the last request's
    5,000 tokens read, 1,100 new written, a 500-token answer); request 3 holds the fixed 2,000
    (read) and the 1,500 of summary and tail (written); each later request reads the one before
    and writes its 1,000 new. ``cold``: the cache expired before the summary call and request 3
    (an idle gap), so both wrote everything."""
    costs = [_cost(0, 3_000, 0, 100), _cost(0, 1_000, 3_000, 100), _cost(0, 1_000, 4_000, 100)]
    if summary:
        costs.append(
            _cost(0, 6_100, 0, 500, "summary") if cold else _cost(0, 1_100, 5_000, 500, "summary")
        )
    costs.append(_cost(0, 3_500, 0, 100) if cold else _cost(0, 1_500, 2_000, 100))
    size = 3_500
    while len([c for c in costs if c.purpose != "summary"]) < requests:
        costs.append(_cost(0, 1_000, size, 100))
        size += 1_000
    return costs


def _at_three(costs: list[RequestCost]) -> int:
    return next(i for i, c in enumerate(costs) if c.purpose != "summary" and i >= 3)


def test_a_warm_compaction_pays_back_where_the_savings_reach_its_cost() -> None:
    costs = _session(40)
    [even] = break_evens(costs, [CompactionAt(_at_three(costs), R)], PRICE, RULES)
    # Without the compaction request 3 reads request 2's 5,000 cached tokens and writes the
    # 1,000 new: $0.00675; compacted it read 2,000 and wrote 1,500: $0.007725.
    unbroken = (1_000 * 3.75 + 5_000 * 0.30 + 100 * 15) / M
    compacted = (1_500 * 3.75 + 2_000 * 0.30 + 100 * 15) / M
    summary_call = (1_100 * 3.75 + 5_000 * 0.30 + 500 * 15) / M
    assert even.request == 3
    assert even.removed == R
    # It sent 1,500 unread where the uncompacted request sends the 1,000 new: 500 re-written.
    assert even.rewritten == 500
    assert even.rewrite_cost == pytest.approx(compacted - unbroken)
    assert even.summary_cost == pytest.approx(summary_call)
    assert even.cost == pytest.approx(0.0141)
    # Each later request reads 2,500 tokens fewer: $0.00075 saved. 0.0141 / 0.00075 = 18.8:
    # the 19th request after request 3 pays it back.
    assert even.saving == pytest.approx(R * 0.30 / M)
    assert even.paid_back_at == 3 + 19
    assert even.later == 36 and even.until is None
    assert even.saved == pytest.approx(36 * R * 0.30 / M)
    assert not even.cold and even.gap is None
    assert even.sentence.startswith("re-wrote 500 cached tokens: the break cost $0.0141")
    assert "paid back at request 22 (19 requests later" in even.sentence


def test_a_compaction_the_session_ends_before_it_pays_back() -> None:
    costs = _session(15)  # 11 requests after request 3 save 11 × $0.00075 = $0.00825
    [even] = break_evens(costs, [CompactionAt(_at_three(costs), R)], PRICE, RULES)
    assert even.paid_back_at is None and not even.paid_back
    assert even.saved == pytest.approx(11 * 0.00075)
    assert even.cost - even.saved == pytest.approx(0.0141 - 0.00825)
    assert "had not paid back when the session ended: $0.0083 of $0.0141 recovered" in (
        even.sentence
    )


def test_the_next_compaction_ends_the_count() -> None:
    costs = _session(40)
    three = _at_three(costs)
    first, second = break_evens(
        costs, [CompactionAt(three, R), CompactionAt(three + 10, 100)], PRICE, RULES
    )
    # Only requests 4 to 12 count for the first: 9 × $0.00075 < $0.0141.
    assert first.later == 9 and first.until == 13 and first.paid_back_at is None
    assert "by the next compaction (request 13)" in first.sentence
    assert second.request == 13 and second.until is None


def test_a_compaction_in_an_idle_gap_re_writes_nothing_a_warm_cache_held() -> None:
    # 45 minutes between request 2 and request 3, a 5-minute cache: both the summary call and
    # request 3 found the cache cold. Without the compaction request 3 would have written all
    # of its 6,000 tokens: $0.0240; compacted it wrote 3,500: $0.014625.
    costs = _session(40, cold=True)
    at = [0.0, 30.0, 60.0, 60.0 + 45 * 60] + [2_800.0 + 30 * n for n in range(40)]
    [even] = break_evens(
        costs, [CompactionAt(_at_three(costs), R)], PRICE, RULES, at=at, lifetime=300.0
    )
    assert even.cold and even.gap == 45 * 60
    assert even.rewritten == 0
    unbroken = (6_000 * 3.75 + 100 * 15) / M
    compacted = (3_500 * 3.75 + 100 * 15) / M
    assert even.rewrite_cost == pytest.approx(compacted - unbroken) == pytest.approx(-0.009375)
    summary_call = (6_100 * 3.75 + 500 * 15) / M
    assert even.cost == pytest.approx(summary_call - 0.009375)  # the summary call alone is left
    # 0.021 / 0.00075 = 28: paid back 28 requests later.
    assert even.paid_back_at == 3 + 28
    assert even.sentence.startswith(
        "cost nothing extra: made in a 45-minute idle gap, longer than the cache's 5-minute "
        "lifetime (the cache had expired); its summary calls cost $0.0304"
    )


def test_an_idle_compaction_with_offline_summaries_pays_back_at_once() -> None:
    costs = _session(10, cold=True, summary=False)
    at = [0.0, 30.0, 60.0, 60.0 + 45 * 60] + [2_800.0 + 30 * n for n in range(10)]
    [even] = break_evens(costs, [CompactionAt(3, R)], PRICE, RULES, at=at, lifetime=300.0)
    assert even.summary_cost == 0
    assert even.cost == pytest.approx(-R * 3.75 / M)  # 2,500 tokens not written again
    assert even.paid_back_at == 3
    assert "paid back at request 3 (at once" in even.sentence


def test_the_same_gap_within_the_cache_lifetime_is_a_warm_break() -> None:
    # Control: the clock alone decides. A 4-minute gap with a 5-minute cache is warm.
    costs = _session(40)
    at = [0.0, 30.0, 60.0, 300.0] + [330.0 + 30 * n for n in range(40)]
    [even] = break_evens(
        costs, [CompactionAt(_at_three(costs), R)], PRICE, RULES, at=at, lifetime=300.0
    )
    assert not even.cold and even.gap == 240.0
    assert even.cost == pytest.approx(0.0141) and even.paid_back_at == 22


def test_a_later_request_after_an_expiry_saves_the_write_of_what_was_removed() -> None:
    # Request 10 comes an hour after request 9: without the compaction its 2,500 more tokens
    # would have been written (at $3.75), not read (at $0.30).
    costs = _session(12)
    at = [30.0 * n for n in range(10)] + [3_900.0, 3_930.0]
    [even] = break_evens(
        costs, [CompactionAt(_at_three(costs), R)], PRICE, RULES, at=at, lifetime=300.0
    )
    # Requests 4 to 11 follow it: 4-9 and 11 warm, 10 after the expiry.
    saved = 7 * R * 0.30 / M + R * 3.75 / M
    assert even.saved == pytest.approx(saved)


def test_a_recorded_compaction_takes_what_it_removed_from_the_requests_around_it() -> None:
    # The request before held 5,000 and answered 100; the one after holds 3,500: 1,600 removed.
    costs = _session(30, summary=False)
    [even] = break_evens(costs, [CompactionAt(3, None, "recorded auto")], PRICE, RULES)
    assert even.removed == 5_000 + 100 - 3_500
    assert even.saving == pytest.approx(1_600 * 0.30 / M)


def test_an_unpriced_model_has_no_break_even() -> None:
    costs = [
        RequestCost(c.uncached, c.cache_write, c.cache_read, c.output, math.nan, c.purpose)
        for c in _session(20)
    ]
    [even] = break_evens(costs, [CompactionAt(_at_three(costs), R)], Price.unknown("x"), RULES)
    assert math.isnan(even.cost) and even.paid_back_at is None
    assert "unpriced" in even.sentence


def test_without_a_cache_every_removed_token_saves_the_input_price() -> None:
    costs = [_cost(c.input_tokens, 0, 0, c.output, c.purpose) for c in _session(12, summary=False)]
    [even] = break_evens(costs, [CompactionAt(3, R)], PRICE, CacheRules.none())
    # Nothing cached: the request after costs R fewer input tokens, and so does every later one.
    assert even.rewritten == 0
    assert even.rewrite_cost == pytest.approx(-R * 3.0 / M)
    assert even.saving == pytest.approx(R * 3.0 / M)
    assert even.paid_back_at == 3


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (45 * 60, "45-minute"),
        (300, "5-minute"),
        (3600, "1-hour"),
        (5400, "90-minute"),
        (3 * 3600, "3-hour"),
        (9000, "2.5-hour"),
        (90, "90-second"),
    ],
)
def test_durations_in_words(seconds: float, text: str) -> None:
    assert duration_text(seconds) == text


def test_the_break_is_its_summary_calls_and_its_request() -> None:
    even = BreakEven(3, "x", 10, 0, 0.5, 0.25, 0.1, 1, 0.1, None, None, False, None)
    assert even.cost == 0.75


def test_one_hour_writes_are_priced_at_the_one_hour_rate() -> None:
    # The same idle break, the recording's writes with Anthropic's 1-hour TTL ($6 a million):
    # request 3 wrote 3,500 at $6 where the request without the compaction writes 6,000.
    hour = Price(3.0, 15.0, 3.75, 0.30, cache_write_1h=6.0)
    costs = [
        dataclasses.replace(
            c, cost=c.cost + c.cache_write * (6.0 - 3.75) / M, cache_write_1h=c.cache_write
        )
        for c in _session(10, cold=True, summary=False)
    ]
    at = [0.0, 30.0, 60.0, 60.0 + 2 * 3600] + [7_300.0 + 30 * n for n in range(10)]
    [even] = break_evens(costs, [CompactionAt(3, R)], hour, RULES, at=at, lifetime=3600.0)
    assert even.cold and even.gap == 2 * 3600
    assert even.rewrite_cost == pytest.approx((3_500 - 6_000) * 6.0 / M)
    assert even.sentence.startswith(
        "cost nothing extra: made in a 2-hour idle gap, longer than the cache's 1-hour lifetime"
    )


def test_savings_that_equal_the_cost_pay_it_back() -> None:
    # Prices whose every figure is exact in binary ($1 input, $2 write, $0.50 read a token):
    # request 2 (compacted) wrote 8 tokens: $16. Without the compaction it holds 10, all read
    # from request 1's 12 cached: $5. The break costs $11; each later request reads 2 fewer
    # tokens: $1. The 11th request after it brings the savings to exactly $11.
    price = Price(1e6, 0.0, 2e6, 5e5)
    costs = [
        RequestCost(0, 10, 0, 0, 20.0),
        RequestCost(0, 2, 10, 0, 9.0),
        RequestCost(0, 8, 0, 0, 16.0),
        *(RequestCost(0, 1, 8 + n, 0, 2.0 + (8 + n) * 0.5) for n in range(14)),
    ]
    [even] = break_evens(costs, [CompactionAt(2, 2)], price, RULES)
    assert even.cost == 11.0 and even.saving == 1.0
    assert even.paid_back_at == 2 + 11


def test_a_break_that_costs_nothing_pays_back_at_once() -> None:
    # A free model: every figure $0, the break too — paid back at its own request.
    costs = [
        RequestCost(c.uncached, c.cache_write, c.cache_read, c.output, 0.0) for c in _session(8)
    ]
    [even] = break_evens(costs, [CompactionAt(_at_three(costs), R)], Price(0, 0, 0, 0), RULES)
    assert even.cost == 0 and even.paid_back_at == 3


@pytest.mark.parametrize(("bills_writes", "per_token"), [(True, 6.25), (False, 5.0)])
def test_an_automatic_cache_keeps_the_whole_request_and_bills_writes_only_from_gpt_5_6(
    bills_writes: bool, per_token: float
) -> None:
    # OpenAI at $5 input, $6.25 write, $0.50 cached: the cache holds all of request 2 (6,000
    # tokens), so without the compaction request 3 (3,548 tokens; 3,452 removed) holds 7,000,
    # reads the 6,000 and sends the 1,000 new. Request 4 comes after an expiry: without the
    # compaction its 3,452 more are sent again — written from GPT-5.6 on, at the input price
    # before.
    price = Price(5.0, 30.0, 6.25, 0.50)
    rules = CacheRules.openai(bills_writes=bills_writes)

    def cost(fresh: int, read: int) -> RequestCost:
        write, uncached = (fresh, 0) if bills_writes else (0, fresh)
        dollars = (uncached * 5.0 + write * 6.25 + read * 0.50 + 100 * 30.0) / M
        return RequestCost(uncached, write, read, 100, dollars)

    costs = [cost(4_000, 0), cost(1_000, 4_000), cost(1_000, 5_000), cost(1_500, 2_048)]
    costs += [cost(4_500, 0), cost(1_000, 4_500)]
    at = [0.0, 30.0, 60.0, 90.0, 90.0 + 3_600, 3_720.0]
    [even] = break_evens(costs, [CompactionAt(3, 3_452)], price, rules, at=at, lifetime=300.0)
    unbroken = (6_000 * 0.50 + 1_000 * per_token + 100 * 30.0) / M
    compacted = (2_048 * 0.50 + 1_500 * per_token + 100 * 30.0) / M
    assert even.rewrite_cost == pytest.approx(compacted - unbroken)
    assert even.saved == pytest.approx(3_452 * per_token / M + 3_452 * 0.50 / M)


def test_compactions_before_the_same_request_are_one_break() -> None:
    # A microcompact and a compact before request 3, the first marked on its summary call:
    # one break, what both removed, both named; one past the requests is no break at all.
    costs = _session(40)
    summary = _at_three(costs) - 1
    assert costs[summary].purpose == "summary"
    [even] = break_evens(
        costs,
        [
            CompactionAt(summary, 1_000, "a"),
            CompactionAt(_at_three(costs), 1_500, "b"),
            CompactionAt(len(costs), 10, "c"),
            CompactionAt(-1, 10, "d"),
        ],
        PRICE,
        RULES,
    )
    assert (even.request, even.removed, even.label) == (3, R, "a, b")
    assert even.cost == pytest.approx(0.0141) and even.paid_back_at == 22


@pytest.mark.parametrize(
    "at",
    [
        [math.nan, 30.0, 60.0, math.inf] + [100.0] * 40,  # no clock where a time is no number
        [500.0, 30.0, 60.0, 90.0] + [100.0 + n for n in range(40)],  # out of order: gaps of 0
        [0.0, 30.0],  # shorter than the requests: the rest without a clock
        [],
    ],
)
def test_times_that_give_no_long_gap_leave_the_cache_warm(at: list[float]) -> None:
    costs = _session(40)
    [even] = break_evens(costs, [CompactionAt(_at_three(costs), R)], PRICE, RULES, at, 300.0)
    assert not even.cold and even.cost == pytest.approx(0.0141) and even.paid_back_at == 22
