"""Each provider's prices, in dollars: a request of each provider's model costs what its pricing
page says (Anthropic's cache multipliers, OpenAI's cached input and, from GPT-5.6, its cache
writes, Google's implicit cache, the long-context tiers); an unknown model is unpriced — NaN,
never another provider's dollars; a name is read as providers and harnesses write it; a price
that changed is the one in force on the recording's day. The table is checked against figures
written here from the providers' pages (not from ctxlab's table), with its control: a price
changed by a cent is caught."""

from __future__ import annotations

import dataclasses
import math
import time
from datetime import date, datetime

import pytest

from ctxlab.analysis._cost import (
    CacheRules,
    RequestShape,
    cache_rules_for,
    costs_of_manifests,
    request_costs,
)
from ctxlab.analysis._prices import PRICES, Price, model_key, price_for, recorded_on

M = 1_000_000


def _one(model: str, tokens: int, output: int = 0) -> float:
    """The dollars of one request of ``tokens`` uncached input and ``output`` output."""
    shape = RequestShape(("a",), (tokens,), (), output)
    (cost,) = request_costs([shape], price_for(model), CacheRules.none())
    return cost.cost


# -- the providers' pages, written here (USD per million: input, output, cached read) ----------

OFFICIAL: dict[str, tuple[float, float, float]] = {
    # platform.claude.com/docs/en/about-claude/pricing and the model pages (2026-12-06).
    "claude-opus-4-1": (15, 75, 1.5),
    "claude-opus-4-6": (5, 25, 0.5),
    "claude-opus-4-8": (5, 25, 0.5),
    "claude-sonnet-4-5": (3, 15, 0.3),
    "claude-sonnet-4-6": (3, 15, 0.3),
    "claude-haiku-4-5": (1, 5, 0.1),
    "claude-3-5-haiku": (0.8, 4, 0.08),
    "claude-sonnet-5": (2, 10, 0.2),
    "claude-opus-5": (5, 25, 0.5),
    "claude-opus-5-5": (4, 20, 0.2),
    "claude-fable-5-1": (10, 50, 0.25),
    # developers.openai.com/api/docs/pricing and the model pages.
    "gpt-4o": (2.5, 10, 1.25),
    "gpt-4.1": (2, 8, 0.5),
    "gpt-5": (1.25, 10, 0.125),
    "gpt-5-codex": (1.25, 10, 0.125),
    "gpt-5.1-codex-mini": (0.25, 2, 0.025),
    "gpt-5.4": (2.5, 15, 0.25),
    "gpt-5.6-sol": (4, 20, 0.4),
    "gpt-6-astra": (10, 50, 1),
    "gpt-6.2-sol": (2, 10, 0.1),
    "o4-mini": (1.1, 4.4, 0.275),
    "codex-mini-latest": (1.5, 6, 0.375),
    # ai.google.dev/gemini-api/docs/pricing.
    "gemini-2.5-pro": (1.25, 10, 0.125),
    "gemini-2.5-flash": (0.3, 2.5, 0.03),
    "gemini-3-pro-preview": (2, 12, 0.2),
    "gemini-3.1-pro-preview": (2, 12, 0.2),
    "gemini-3-flash-preview": (0.5, 3, 0.05),
}


def mismatches(prices: dict[str, Price]) -> list[str]:
    """The models whose price differs from `OFFICIAL`'s figures."""
    return [
        name
        for name, (input_price, output, read) in OFFICIAL.items()
        if (prices[name].input, prices[name].output, prices[name].cache_read)
        != pytest.approx((input_price, output, read), rel=1e-12)
    ]


def test_the_table_holds_the_providers_published_prices() -> None:
    assert mismatches(PRICES) == []


def test_control_a_price_a_cent_off_is_caught() -> None:
    wrong = dict(PRICES)
    wrong["gemini-2.5-pro"] = dataclasses.replace(PRICES["gemini-2.5-pro"], input=1.26)
    assert mismatches(wrong) == ["gemini-2.5-pro"]


def test_every_price_names_its_model_provider_and_source() -> None:
    for name, price in PRICES.items():
        assert price.model == name and price.provider in ("anthropic", "openai", "google")
        assert "read 2026-" in price.source or "as genai-prices" in price.source, name


# -- dollars, provider by provider --------------------------------------------------------------


def test_a_gemini_2_5_pro_request_past_200k_is_billed_at_the_long_context_price() -> None:
    # 300,000 input tokens at $2.50 and 2,000 output at $15 (above 200k): $0.78.
    assert _one("gemini-2.5-pro", 300_000, 2_000) == pytest.approx(0.75 + 0.03)
    # At 200,000 exactly the request is short: $1.25 and $10.
    assert _one("gemini-2.5-pro", 200_000, 2_000) == pytest.approx(0.25 + 0.02)


def test_geminis_implicit_cache_reads_at_the_cached_price_and_charges_no_write() -> None:
    rules = cache_rules_for("gemini-2.5-pro")
    assert (rules.kind, rules.min_tokens, rules.bills_writes) == ("google", 2_048, False)
    first = RequestShape(("sys", "m1"), (3_000, 1_000), (0, 1))
    second = RequestShape(("sys", "m1", "m2"), (3_000, 1_000, 500), (0, 2))
    a, b = request_costs([first, second], price_for("gemini-2.5-pro"), rules)
    assert (a.cache_write, a.cache_read, a.cost) == (0, 0, pytest.approx(4_000 * 1.25 / M))
    assert (b.cache_read, b.uncached) == (4_000, 500)
    assert b.cost == pytest.approx((4_000 * 0.125 + 500 * 1.25) / M)


def test_anthropic_writes_at_1_25x_and_reads_at_0_1x_with_the_models_minimum() -> None:
    rules = cache_rules_for("claude-sonnet-4-5-20250929")
    assert (rules.kind, rules.min_tokens) == ("anthropic", 1_024)
    assert cache_rules_for("claude-opus-4-6").min_tokens == 4_096
    first = RequestShape(("sys", "m1"), (2_000, 500), (0, 1))
    second = RequestShape(("sys", "m1", "m2"), (2_000, 500, 300), (0, 2))
    a, b = request_costs([first, second], price_for("claude-sonnet-4-5-20250929"), rules)
    assert a.cost == pytest.approx(2_500 * 3.75 / M)
    assert b.cost == pytest.approx((2_500 * 0.3 + 300 * 3.75) / M)


def test_a_sonnet_4_5_request_past_200k_costs_the_long_context_price() -> None:
    # The 1M-context beta: $6 input, $22.50 output for the whole request.
    assert _one("claude-sonnet-4-5", 250_000, 1_000) == pytest.approx(1.5 + 0.0225)
    assert _one("claude-sonnet-4-5", 150_000, 1_000) == pytest.approx(0.45 + 0.015)


def test_claude_haiku_5_5_is_priced_by_prompt_length_at_100k() -> None:
    assert _one("claude-haiku-5-5", 100_000) == pytest.approx(0.01)
    assert _one("claude-haiku-5-5", 100_001) == pytest.approx(100_001 * 0.5 / M)


def test_openai_before_gpt_5_6_reads_cached_input_and_writes_for_free() -> None:
    rules = cache_rules_for("gpt-4o-2024-08-06")
    assert (rules.kind, rules.step, rules.bills_writes) == ("openai", 128, False)
    first = RequestShape(("sys",), (2_000,), ())
    second = RequestShape(("sys", "m"), (2_000, 100), ())
    a, b = request_costs([first, second], price_for("gpt-4o"), rules)
    assert (a.cache_write, a.cost) == (0, pytest.approx(2_000 * 2.5 / M))
    # 2,000 cached in 128-token steps: 1,920 read at $1.25, 180 at $2.50.
    assert (b.cache_read, b.cost) == (1_920, pytest.approx((1_920 * 1.25 + 180 * 2.5) / M))


def test_gpt_5_6_bills_its_cache_writes_at_1_25x_input() -> None:
    rules = cache_rules_for("gpt-5.6-sol")
    assert rules.bills_writes
    first = RequestShape(("sys",), (2_000,), ())
    second = RequestShape(("sys", "m"), (2_000, 100), ())
    a, b = request_costs([first, second], price_for("gpt-5.6-sol"), rules)
    # The first writes all it sends ($5 = 1.25 × $4); the second reads 1,920 ($0.40) and
    # writes the 180 it did not read.
    assert (a.cache_write, a.uncached, a.cost) == (2_000, 0, pytest.approx(2_000 * 5 / M))
    assert (b.cache_read, b.cache_write) == (1_920, 180)
    assert b.cost == pytest.approx((1_920 * 0.4 + 180 * 5) / M)
    # Under 1,024 tokens nothing is cached, nothing written.
    (small,) = request_costs([RequestShape(("s",), (900,), ())], price_for("gpt-5.6-sol"), rules)
    assert (small.cache_write, small.cost) == (0, pytest.approx(900 * 4 / M))


def test_gpt_5_4_past_272k_doubles_input_and_multiplies_output_by_1_5() -> None:
    assert _one("gpt-5.4", 300_000, 1_000) == pytest.approx(300_000 * 5 / M + 1_000 * 22.5 / M)
    assert _one("gpt-5.4", 272_000, 1_000) == pytest.approx(272_000 * 2.5 / M + 1_000 * 15 / M)


# -- unknown models -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "model",
    ["gemini-9-ultra", "claude-opus-4-10", "gpt-4o-thinking", "sonnet", "mockllm/model", ""],
)
def test_an_unknown_model_is_unpriced_never_another_models_price(model: str) -> None:
    price = price_for(model)
    assert not price.known and all(
        math.isnan(v) for v in (price.input, price.output, price.cache_read, price.cache_write)
    )
    assert price.label == f"unpriced (model {model!r} has no known price)"
    assert cache_rules_for(model).kind == "none"
    assert math.isnan(_one(model, 1_000, 10))


def test_a_sum_over_unpriced_requests_is_nan_not_zero_dollars() -> None:
    from tests.analysis.test_cost_dollars import FIRST, SECOND, _manifest

    manifests = [
        dataclasses.replace(_manifest(FIRST), model="some-local-model"),
        dataclasses.replace(_manifest(SECOND), model="some-local-model"),
    ]
    costs = costs_of_manifests(manifests)
    assert len(costs) == 2 and math.isnan(sum(c.cost for c in costs))
    # The tokens are still counted: only the dollars are unknown.
    assert sum(c.input_tokens for c in costs) == 2_700 + 3_000


# -- names and days -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "key"),
    [
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"),
        ("litellm_proxy/anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"),
        ("claude-sonnet-4.5", "claude-sonnet-4-5"),
        ("us.anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3-5-sonnet"),
        ("claude-opus-4-1@20250805", "claude-opus-4-1"),
        ("claude-opus-4-6[1m]", "claude-opus-4-6"),
        ("google/gemini-3-pro-preview", "gemini-3-pro-preview"),
        ("models/gemini-2.5-pro", "gemini-2.5-pro"),
        ("openai/gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("gpt-4-0613", "gpt-4"),
        ("gemini-2.0-flash-001", "gemini-2.0-flash"),
        ("claude-3-5-haiku-latest", "claude-3-5-haiku"),
    ],
)
def test_a_model_is_found_as_providers_and_harnesses_write_it(written: str, key: str) -> None:
    assert price_for(written) == PRICES[key]


def test_a_version_number_is_another_model_not_a_snapshot() -> None:
    # claude-opus-4-10 is not Opus 4 ($15) dated "10"; gpt-5.10 is not GPT-5.1.
    assert not price_for("claude-opus-4-10").known
    assert not price_for("gpt-5.10").known
    assert model_key("Claude-Sonnet-4.6") == "claude-sonnet-4-6"


def test_a_price_that_changed_is_the_one_in_force_on_the_recordings_day() -> None:
    # Opus 4.6 billed past 200k at $10 until 1M went GA on 2026-03-13.
    before = price_for("claude-opus-4-6", on=date(2026, 3, 1))
    after = price_for("claude-opus-4-6", on=date(2026, 3, 13))
    assert before.at(300_000).input == 10 and after.at(300_000).input == 5
    assert price_for("claude-opus-4-6") == after == PRICES["claude-opus-4-6"]
    # GPT-5.6 Luna, cut by 80% on 2026-07-30.
    assert price_for("gpt-5.6-luna", on=date(2026, 7, 29)).input == 1.0
    assert price_for("gpt-5.6-luna", on=date(2026, 7, 30)).input == 0.2
    # A time is taken as its day.
    assert price_for("gpt-5.6-luna", on=datetime(2026, 7, 29, 23, 59)).input == 1.0


@pytest.mark.parametrize(
    ("meta", "day"),
    [
        ({"startTime": "2026-03-01T10:00:00.000Z"}, date(2026, 3, 1)),
        ({"started": "2025-11-02 09:00"}, date(2025, 11, 2)),
        ({"started": 1_772_000_000}, date(2026, 2, 25)),
        ({"started": 1_772_000_000_000}, date(2026, 2, 25)),
        ({"started": "yesterday"}, None),
        ({"started": float("nan")}, None),
        ({}, None),
    ],
)
def test_a_recordings_day_is_read_from_its_file(meta: dict[str, object], day: date | None) -> None:
    assert recorded_on(meta) == day


def test_a_time_since_the_epoch_is_its_day_in_utc_wherever_the_machine_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 1,700,000,000 s is 2023-11-14 22:13:20 UTC: already the 15th at UTC+14 (Kiritimati).
    monkeypatch.setenv("TZ", "Pacific/Kiritimati")
    time.tzset()
    try:
        assert datetime.fromtimestamp(1_700_000_000).day == 15  # the machine's own day
        assert recorded_on({"started": 1_700_000_000}) == date(2023, 11, 14)
        assert recorded_on({"started": 1_700_000_000_000}) == date(2023, 11, 14)
    finally:
        monkeypatch.undo()
        time.tzset()


def test_a_price_passed_for_a_model_no_table_knows_sets_its_providers_rules() -> None:
    # A GPT-5.6 price (its cache writes above its input price) for a model of another name:
    # OpenAI's rules, writes billed — from the price passed, not from the name.
    passed = PRICES["gpt-5.6-sol"]
    assert passed.cache_write > passed.input
    assert cache_rules_for("my-gpt", passed) == CacheRules.openai(bills_writes=True)
    assert cache_rules_for("my-gpt") == CacheRules.none()
    older = PRICES["gpt-5"]  # no write charge before GPT-5.6
    assert cache_rules_for("my-gpt", older) == CacheRules.openai(bills_writes=False)


def test_an_answer_is_priced_at_its_requests_tier_in_the_output_cost() -> None:
    from ctxlab.analysis._cost import RequestCost
    from ctxlab.analysis._references import output_cost

    price = price_for("gemini-2.5-pro")
    short = RequestCost(100_000, 0, 0, 1_000, 0.0)
    long = RequestCost(250_000, 0, 50_000, 1_000, 0.0)  # 300k input: past 200k
    # $10 per million output for the short request's answer, $15 for the long one's.
    assert output_cost([short, long], price) == pytest.approx((1_000 * 10 + 1_000 * 15) / M)


def test_the_name_and_day_rules_at_their_edges() -> None:
    from ctxlab.analysis._prices import is_snapshot_suffix, min_cached_tokens, recorded_model

    # A dot is a version separator only between two digits.
    assert model_key("claude-3.x-test") == "claude-3.x-test"
    assert model_key("claude-x.5") == "claude-x.5"
    assert model_key("claude-3.5-sonnet") == "claude-3-5-sonnet"
    # Bedrock's version is digits after "v", a minor version after a colon.
    assert is_snapshot_suffix("-20241022-v2:0") and is_snapshot_suffix("-20241022-v1")
    assert not is_snapshot_suffix("-20241022-v2:x") and not is_snapshot_suffix("-20241022-vx")
    assert is_snapshot_suffix("") and not is_snapshot_suffix("20250929")
    assert min_cached_tokens("some-local-model") == 1024
    assert min_cached_tokens("claude-haiku-4-5-20251001") == 4096
    # A day before a model's first dated price takes that first price (o3 at launch: $10).
    assert price_for("o3", on=date(2025, 1, 1)).input == 10.0
    assert recorded_model({"models": "gpt-4o"}) == ""  # a string is not the list of models
    assert recorded_model({"models": ["gpt-4o", "o3"]}) == "gpt-4o"
    assert recorded_on({"started_at": "2026-05-01T00:00:00Z"}) == date(2026, 5, 1)


def test_a_dashed_date_followed_by_a_bedrock_version_is_a_snapshot() -> None:
    # "a date (... -2024-08-06, -05-06 ...) ... or either followed by Bedrock's -v2:0": the
    # version is the last piece, however many pieces the date has.
    from ctxlab.analysis._prices import is_snapshot_suffix

    assert is_snapshot_suffix("-2024-08-06-v1:0") and is_snapshot_suffix("-05-06-v2")
    assert price_for("gpt-4o-2024-08-06-v1:0") == PRICES["gpt-4o"]
    # The version alone is no snapshot: nothing dates it.
    assert not is_snapshot_suffix("-v2:0")


def test_googles_implicit_cache_without_a_model_caches_from_1_024_tokens() -> None:
    # `CacheRules.google()` (a price passed for a model the table does not know): Gemini's
    # smallest minimum, 1,024 tokens — a 1,024-token prefix sent again is read from the cache.
    rules = CacheRules.google()
    assert rules.label == (
        "Google's implicit cache (from 1,024 tokens, reads at the cached price, no write or "
        "storage charge)"
    )
    first = RequestShape(("sys",), (1_024,), (0,))
    second = RequestShape(("sys", "m1"), (1_024, 100), (0, 1))
    price = PRICES["gemini-2.5-flash"]
    _, again = request_costs([first, second], price, rules)
    assert (again.cache_read, again.uncached) == (1_024, 100)
    assert again.cost == pytest.approx((1_024 * price.cache_read + 100 * price.input) / M)
