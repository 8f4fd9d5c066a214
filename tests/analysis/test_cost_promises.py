"""What the cost model and the sweep promise, in dollars and rows: `price_for` takes the longest
known model name a dated name starts with (Opus 4.5 is $5, not Opus 4's $15); OpenAI caches
from 1,024 tokens in 128-token steps; the sweep's cache key includes the cost model (another
price or cache rules is computed again, never served); every session name in a sweep is made
unique."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ctxlab import ContextConfig, Transcript, sweep
from ctxlab.analysis._cost import (
    PRICES,
    CacheRules,
    Price,
    RequestShape,
    price_for,
    request_costs,
)
from tests.helpers import bash_loop

MILLION = 1_000_000


def _dollars(model: str, uncached: int = MILLION, output: int = 0) -> float:
    # Ten requests of a tenth each: one request of a million tokens would be past the
    # long-context size of the models that have one (Sonnet 4.5: $6 above 200k).
    shape = RequestShape(("a",), (uncached // 10,), (), output // 10)
    costs = request_costs([shape] * 10, price_for(model), CacheRules.none())
    return sum(c.cost for c in costs)


@pytest.mark.parametrize(
    ("model", "input_dollars", "output_dollars"),
    [
        ("claude-opus-4-5-20251101", 5.0, 25.0),
        ("claude-opus-4-5", 5.0, 25.0),
        ("claude-opus-4-6", 5.0, 25.0),  # Anthropic's published price: $5 / $25
        ("claude-opus-4-20250514", 15.0, 75.0),
        ("claude-opus-4-1-20250805", 15.0, 75.0),
        ("claude-sonnet-4-5-20250929", 3.0, 15.0),
        ("claude-haiku-4-5-20251001", 1.0, 5.0),
        ("gpt-4.1-mini-2025-04-14", 0.4, 1.6),
        ("gpt-5-mini-2025-08-07", 0.25, 2.0),
    ],
)
def test_a_dated_model_is_priced_by_the_longest_name_it_starts_with(
    model: str, input_dollars: float, output_dollars: float
) -> None:
    assert _dollars(model) == pytest.approx(input_dollars, rel=1e-12)
    assert _dollars(model, uncached=0, output=MILLION) == pytest.approx(output_dollars, rel=1e-12)


def test_opus_4_5_and_4_6_cache_at_anthropics_multipliers() -> None:
    for model in ("claude-opus-4-5", "claude-opus-4-6"):
        price = price_for(model)
        assert (price.cache_write, price.cache_read, price.cache_write_1h) == (6.25, 0.5, 10.0)


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(sorted(PRICES)),
    st.sampled_from(["", "-20250929", "-2025-04-14", "-0613", "-latest"]),
)
def test_every_known_name_with_a_snapshot_suffix_is_its_own_price(name: str, suffix: str) -> None:
    longer = [other for other in PRICES if other != name and (name + suffix).startswith(other)]
    # A dated name is the known name it was made from, whichever shorter names it also starts
    # with (claude-opus-4 under claude-opus-4-5, gpt-4.1 under gpt-4.1-mini).
    if not any(len(other) > len(name) for other in longer):
        assert price_for(name + suffix) == PRICES[name]


def _two(prefix: int) -> tuple[RequestShape, RequestShape]:
    """A request of ``prefix`` tokens, then one that repeats it and adds 10."""
    return (
        RequestShape(("p",), (prefix,), ()),
        RequestShape(("p", "q"), (prefix, 10), ()),
    )


@pytest.mark.parametrize(
    ("prefix", "read"), [(1_023, 0), (1_024, 1_024), (1_151, 1_024), (1_152, 1_152)]
)
def test_openai_caches_from_1024_tokens(prefix: int, read: int) -> None:
    price = PRICES["gpt-4.1"]
    _, second = request_costs(_two(prefix), price, CacheRules.openai())
    assert (second.cache_read, second.uncached, second.cache_write) == (read, prefix + 10 - read, 0)
    assert second.cost == pytest.approx(((prefix + 10 - read) * 2.0 + read * 0.5) / MILLION)


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 5_000))
@example(1_023)
@example(1_024)
def test_openai_reads_the_cached_prefix_in_128_token_steps_from_1024(prefix: int) -> None:
    _, second = request_costs(_two(prefix), PRICES["gpt-4o"], CacheRules.openai())
    assert second.cache_read == (0 if prefix < 1_024 else prefix - prefix % 128)


def test_openai_reads_a_prefix_that_ends_anywhere_in_an_earlier_request() -> None:
    # Every prefix of a request is cached with it, not only some: a later request that leaves
    # the earlier one after any part reads up to there.
    parts = [("a", 600), ("b", 600), ("c", 600), ("d", 600)]
    first = RequestShape(tuple(k for k, _ in parts), tuple(t for _, t in parts), ())
    for shared in (2, 3):
        keys = (*first.keys[:shared], "new")
        later = RequestShape(keys, (*first.tokens[:shared], 600), ())
        _, cost = request_costs([first, later], PRICES["gpt-4.1"], CacheRules.openai())
        read = 600 * shared
        assert cost.cache_read == read - read % 128


def test_a_live_sessions_requests_are_priced_by_its_model() -> None:
    from ctxlab.analysis._cost import costs_of_manifests
    from tests.analysis.test_cost_dollars import FIRST, _manifest

    manifest = _manifest(FIRST, output=0)
    for model, dollars in (("claude-opus-4-8", 5.0), ("claude-opus-4-1", 15.0)):
        (cost,) = costs_of_manifests([dataclasses.replace(manifest, model=model)])
        # 300 uncached, 2,400 written at 1.25x: (300 + 3,000) tokens' worth of input.
        assert cost.cost == pytest.approx(3_300 * dollars / MILLION)
    # Opus 4.6 caches nothing under 4,096 tokens: the 2,400-token prefix is not written.
    (cost,) = costs_of_manifests([dataclasses.replace(manifest, model="claude-opus-4-6")])
    assert (cost.cache_write, cost.cost) == (0, pytest.approx(2_700 * 5.0 / MILLION))


def _session(name: str, turns: int = 6) -> Transcript:
    # Named as a Claude recording: the default cache rules are Anthropic's.
    calls = (
        (f"cat /srv/{n}.log", f"/srv/{n}.log:{100 + n}: error {n}\n" * 40) for n in range(turns)
    )
    return bash_loop(name, f"Task {name}.", calls, "Done.", system="You triage logs.")


CONFIGS = {"ctxlab": ContextConfig.preset("ctxlab")}


def test_the_sweep_cache_is_keyed_by_the_cost_model(tmp_path: Path) -> None:
    sessions = [_session("alpha")]
    cheap = Price(1.0, 5.0, 1.25, 0.1)
    dear = Price(10.0, 50.0, 12.5, 1.0)
    first = sweep(sessions, CONFIGS, (4_000,), cache_dir=tmp_path, progress=False, price=cheap)
    assert first.attrs["computed"] == 1
    # Another price: computed again (ten times the dollars), never the cheap figure served.
    other = sweep(sessions, CONFIGS, (4_000,), cache_dir=tmp_path, progress=False, price=dear)
    assert other.attrs["computed"] == 1 and other.attrs["cached"] == 0
    assert other["cost"].iloc[0] == pytest.approx(10 * first["cost"].iloc[0])
    # Other cache rules: computed again too; the first case is still served as it was.
    none = sweep(
        sessions,
        CONFIGS,
        (4_000,),
        cache_dir=tmp_path,
        progress=False,
        price=cheap,
        rules=CacheRules.none(),
    )
    assert none.attrs["computed"] == 1 and none["cost"].iloc[0] > first["cost"].iloc[0]
    again = sweep(sessions, CONFIGS, (4_000,), cache_dir=tmp_path, progress=False, price=cheap)
    assert again.attrs["cached"] == 1 and again["cost"].iloc[0] == first["cost"].iloc[0]


def test_every_session_name_in_a_sweep_is_made_unique() -> None:
    same = [_session("run"), _session("run", 7), _session("run", 8), _session("run#2", 5)]
    frame = sweep(same, CONFIGS, (4_000,), progress=False)
    assert frame["session"].tolist() == ["run", "run#2", "run#3", "run#2#2"]
    # Each row is its own session's replay (6, 7, 8 and 5 calls: one request more each).
    assert frame["requests"].tolist() == [7, 8, 9, 6]
