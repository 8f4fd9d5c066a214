"""The what-if prices a recording as its own model bills, by its provider's rules, and says so:
a Gemini session at Google's price with Google's implicit cache (issue 50: it was priced as
Claude Sonnet 4.6 with Anthropic's cache writes), a model no table knows unpriced — NaN costs,
``unpriced (model X has no known price)`` in the table, the references, the verdict and a run's
line, never $0 nor another model's dollars — and the price used named with its source. The
sweep says which sessions are unpriced."""

from __future__ import annotations

import dataclasses
import math

import pytest

from ctxlab import ApproximateCounter, ContextConfig, Transcript, WhatIf, sweep
from ctxlab.analysis._cost import CacheRules
from ctxlab.analysis._prices import PRICES, Price
from tests.analysis.whatif_figures import logs_session

CONFIGS = {
    "ctxlab": ContextConfig.preset("ctxlab"),
    "masking": ContextConfig.preset("observation_masking"),
}
COSTS = ("cost", "input_cost", "output_cost", "cost_vs_baseline", "cost_vs_no_compaction")


def _recorded(model: str | None, **meta: object) -> Transcript:
    session = logs_session()
    named = {"models": [model]} if model is not None else {}
    return dataclasses.replace(session, meta={**named, **meta})


async def _what(transcript: Transcript, **keywords: object) -> WhatIf:
    what = WhatIf(
        transcript,
        CONFIGS,
        context_window=8_000,
        counter=ApproximateCounter(),
        **keywords,  # type: ignore[arg-type]
    )
    await what.run()
    return what


async def test_a_gemini_session_is_priced_at_googles_price_with_googles_cache() -> None:
    what = await _what(_recorded("gemini-2.5-pro"))
    assert what.price == PRICES["gemini-2.5-pro"]
    assert (what.rules.kind, what.rules.min_tokens) == ("google", 2_048)
    table = what.table()
    assert table.attrs["pricing"].startswith(
        "gemini-2.5-pro at Google's list price: $1.25 input, $10 output, cache read $0.125"
    )
    assert "Google's implicit cache" in table.attrs["pricing"]
    # Every request at Gemini's figures: no cache write is ever billed, reads at $0.125.
    for run in what.runs.values():
        assert run.costs and all(c.cache_write == 0 for c in run.costs)
        assert any(c.cache_read > 0 for c in run.costs)
        for c in run.costs:
            dollars = (c.uncached * 1.25 + c.cache_read * 0.125 + c.output * 10) / 1e6
            assert c.cost == pytest.approx(dollars)
        assert table.loc[run.name, "cost"] == pytest.approx(sum(c.cost for c in run.costs))


async def test_the_same_session_recorded_by_claude_is_priced_otherwise() -> None:
    # Control: the price follows the model — Sonnet's writes and dollars differ from Gemini's.
    gemini = await _what(_recorded("gemini-2.5-pro"))
    sonnet = await _what(_recorded("claude-sonnet-4-6"))
    assert sonnet.rules.kind == "anthropic"
    assert any(c.cache_write > 0 for c in sonnet.runs["ctxlab"].costs)
    assert sonnet.table().loc["ctxlab", "cost"] != pytest.approx(
        gemini.table().loc["ctxlab", "cost"]
    )


async def test_an_unknown_model_is_unpriced_everywhere_the_what_if_shows_a_cost() -> None:
    what = await _what(_recorded("my-llm-7b"))
    said = "unpriced (model 'my-llm-7b' has no known price)"
    assert not what.price.known and what.pricing == said
    table = what.table()
    assert table.attrs["pricing"] == said
    for column in COSTS:
        assert table[column].isna().all(), column
    # The tokens are still known: only the dollars are not.
    assert (table["tokens_sent"] > 0).all()
    references = what.references()
    assert references.attrs["pricing"] == said and references["cost"].isna().all()
    assert said in what.verdict() and "Price(" in what.verdict()
    assert repr(what.runs["ctxlab"]).endswith("unpriced)")
    assert what.steps(grade=False)["cost"].isna().all()


async def test_a_session_naming_no_model_says_so() -> None:
    what = await _what(_recorded(None))
    assert what.table().attrs["pricing"] == (
        "unpriced (the session names no model, so no price is known)"
    )
    assert what.table()["cost"].isna().all()


async def test_a_price_passed_is_used_and_named_as_passed() -> None:
    mine = Price(1.0, 2.0, 1.25, 0.1)
    what = await _what(_recorded("my-llm-7b"), price=mine, rules=CacheRules.anthropic())
    table = what.table()
    assert table.attrs["pricing"].startswith("a price you passed: $1 input, $2 output")
    assert not table["cost"].isna().any() and (table["cost"] > 0).all()


async def test_the_price_in_force_on_the_recordings_day_is_used() -> None:
    # Opus 4.6 before 1M went GA (2026-03-13) had a long-context tier; after, none.
    early = await _what(_recorded("claude-opus-4-6", startTime="2026-03-01T09:00:00Z"))
    late = await _what(_recorded("claude-opus-4-6", startTime="2026-04-01T09:00:00Z"))
    assert early.price.long_context is not None and late.price.long_context is None
    assert late.price == PRICES["claude-opus-4-6"]


def test_a_sweep_says_which_sessions_are_unpriced() -> None:
    priced = dataclasses.replace(_recorded("claude-sonnet-4-6"), name="sonnet")
    unknown = dataclasses.replace(_recorded("my-llm-7b"), name="local")
    frame = sweep([priced, unknown], {"ctxlab": CONFIGS["ctxlab"]}, (8_000,), progress=False)
    costs = frame.set_index("session")["cost"]
    assert math.isnan(costs["local"]) and costs["sonnet"] > 0
    assert frame.attrs["pricing"]["local"] == "unpriced (model 'my-llm-7b' has no known price)"
    assert frame.attrs["pricing"]["sonnet"].startswith("claude-sonnet-4-6 at Anthropic's")
    assert frame.attrs["findings"][-1] == (
        "1 of 2 sessions are unpriced, their costs NaN and left out of the comparisons: local: "
        "unpriced (model 'my-llm-7b' has no known price)"
    )
