"""A request's cost by its bill: its recorded usage at its model's price, the 5-minute and
1-hour cache writes each at their own price — dollars worked out here from the pricing page's
figures — and the cache model's estimate only where no usage, or none that adds up, was
recorded."""

from __future__ import annotations

import dataclasses
import math

import pytest

from ctxlab.analysis._cache_rules import CacheRules
from ctxlab.analysis._cost import costs_of_manifests
from ctxlab.analysis._price import Price
from ctxlab.analysis._prices import price_for
from ctxlab.analysis._usage_cost import billed_costs, untrusted, usage_cost
from ctxlab.manifest import ContextManifest, ManifestItem
from ctxlab.messages import ProviderUsage

OPUS = price_for("claude-opus-4-6")  # $5 input, $25 output (the pricing page)


def test_a_request_with_one_hour_writes_costs_them_at_twice_the_input_price() -> None:
    # A real request's usage (Claude Code, Opus 4.6): 3 uncached, 17,842 read, 8,037 written
    # with the 1-hour TTL, 441 out.
    usage = ProviderUsage(3, 441, 17_842, 8_037, 8_037)
    cost = usage_cost(usage, OPUS)
    expected = (3 * 5 + 8_037 * 10 + 17_842 * 0.5 + 441 * 25) / 1e6
    assert cost.cost == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx(0.100331)
    assert (cost.uncached, cost.cache_read, cost.cache_write, cost.cache_write_1h) == (
        3,
        17_842,
        8_037,
        8_037,
    )
    # The same writes with the 5-minute TTL: 1.25× the input price.
    five = usage_cost(ProviderUsage(3, 441, 17_842, 8_037), OPUS)
    assert five.cost == pytest.approx((15 + 8_037 * 6.25 + 17_842 * 0.5 + 441 * 25) / 1e6)
    assert five.cache_write_1h == 0


def test_a_split_of_both_ttls_prices_each_part_at_its_own_price() -> None:
    usage = ProviderUsage(10, 0, 0, 3_000, 1_000)  # 2,000 for 5 minutes, 1,000 for an hour
    haiku = price_for("claude-haiku-4-5")  # $1 input
    assert usage_cost(usage, haiku).cost == pytest.approx((10 + 2_000 * 1.25 + 1_000 * 2) / 1e6)


def test_a_request_past_the_long_context_size_is_billed_at_that_tier() -> None:
    sonnet = price_for("claude-sonnet-4-5")  # $3 input; $6 input, $22.50 output above 200k
    usage = ProviderUsage(1_000, 100, 200_000, 0)
    assert usage_cost(usage, sonnet).cost == pytest.approx(
        (1_000 * 6 + 200_000 * 0.6 + 100 * 22.5) / 1e6
    )


def test_usage_whose_one_hour_part_exceeds_its_writes_is_not_trusted() -> None:
    assert untrusted(ProviderUsage(1, 1, 0, 100, 100)) == ""
    reason = untrusted(ProviderUsage(1, 1, 0, 100, 250))
    assert reason == "1-hour cache writes 250 exceed the cache writes 100 they are part of"


def _manifest(number: int, usage: ProviderUsage | None, model: str) -> ContextManifest:
    item = ManifestItem(
        f"message/{number}", "message", "conversation", 5_000 + number, f"h{number}"
    )
    return ContextManifest(
        request_id=f"r{number}",
        purpose="reasoning",
        model=model,
        estimated_input_tokens=item.tokens,
        input_limit=200_000,
        counting_method="test",
        exact=False,
        items=(item,),
        transforms=(),
        validation="passed",
        provider_usage=usage,
    )


def test_each_request_costs_its_bill_at_its_own_models_price_and_the_model_fills_gaps() -> None:
    opus = ProviderUsage(3, 100, 20_000, 5_000)
    haiku = ProviderUsage(3, 100, 0, 30_000)
    broken = ProviderUsage(3, 100, 0, 30_000, 40_000)
    manifests = [
        _manifest(0, opus, "claude-opus-4-6"),
        _manifest(1, haiku, "claude-haiku-4-5-20251001"),
        _manifest(2, None, "claude-opus-4-6"),
        _manifest(3, broken, "claude-opus-4-6"),
    ]
    priced = billed_costs(manifests)
    assert [p.priced_from for p in priced] == ["usage", "usage", "model", "model"]
    assert priced[0].cost.cost == pytest.approx((3 * 5 + 20_000 * 0.5 + 5_000 * 6.25 + 2_500) / 1e6)
    # Haiku at Haiku's price ($1 input, $5 output), not the session's first model's.
    assert priced[1].cost.cost == pytest.approx((3 + 30_000 * 1.25 + 500) / 1e6)
    modelled = costs_of_manifests(manifests)
    assert priced[2].cost == modelled[2]
    assert priced[3].cost == modelled[3]
    # A price passed prices every bill.
    passed = billed_costs(manifests, OPUS)
    assert passed[1].cost.cost == pytest.approx((3 * 5 + 30_000 * 6.25 + 2_500) / 1e6)


def test_a_recorded_request_shown_at_a_window_it_overran_still_costs_its_bill() -> None:
    usage = ProviderUsage(3, 100, 20_000, 5_000)
    over = dataclasses.replace(_manifest(0, usage, "claude-opus-4-6"), validation="budget_exceeded")
    (priced,) = billed_costs([over])
    assert priced.priced_from == "usage"
    assert priced.cost.cost == pytest.approx((15 + 10_000 + 31_250 + 2_500) / 1e6)


def test_the_bill_keeps_the_output_and_purpose_and_prices_one_hour_writes_without_a_price() -> None:
    usage = ProviderUsage(3, 441, 17_842, 8_037, 8_037)
    cost = usage_cost(usage, OPUS)
    assert (cost.output, cost.purpose) == (441, "reasoning")
    assert usage_cost(usage, OPUS, "summary").purpose == "summary"
    # A price that names no 1-hour write price bills those writes at its write price.
    plain = Price(2.0, 8.0, 2.5, 0.2)
    assert usage_cost(usage, plain).cost == pytest.approx(
        (3 * 2 + 8_037 * 2.5 + 17_842 * 0.2 + 441 * 8) / 1e6
    )


def test_requests_without_a_bill_are_priced_by_the_cache_model_on_its_terms() -> None:
    # No usage, and no model named: priced as ``model`` (the recording's), with ``rules``, on
    # the clock of ``times`` — the cache model's own cost for them, never NaN.
    unnamed = [_manifest(0, None, ""), _manifest(1, None, "")]
    unnamed[1] = dataclasses.replace(unnamed[1], items=(*unnamed[0].items, *unnamed[1].items))
    as_opus = billed_costs(unnamed, model="claude-opus-4-6")
    assert [p.cost for p in as_opus] == costs_of_manifests(unnamed, OPUS)
    assert all(p.cost.cost > 0 for p in as_opus)
    assert all(math.isnan(p.cost.cost) for p in billed_costs(unnamed))
    uncached = billed_costs(unnamed, rules=CacheRules.none(), model="claude-opus-4-6")
    assert uncached[1].cost.cache_read == 0 < as_opus[1].cost.cache_read
    times = {"r0": 1_000.0, "r1": 1_000.0 + 3_600 * 4}  # four hours apart: expired
    late = billed_costs(unnamed, model="claude-opus-4-6", times=times)
    assert [p.cost for p in late] == costs_of_manifests(unnamed, OPUS, times=times)
    assert late[1].cost.cache_read == 0 and late[1].cost.expired > 0
