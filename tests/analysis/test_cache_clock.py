"""A recording's clock and the lifetime its usage shows: times after now, not numbers or missing
give no clock for their gaps (said), out of order give gaps of 0; the 1-hour TTL read from the
usage's split (a split larger than its writes not trusted); the lifetime inferred from the
longest gap after which the prefix was read and the shortest after which it was written again,
re-writes shorter than a read set aside; a live run's manifests timed by ``sent_at``, a
recording's by its times, a fork's own run joined to its origin with no gap."""

from __future__ import annotations

import asyncio
import dataclasses
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import ContextConfig, Transcript, WhatIf
from ctxlab.analysis._cache_clock import (
    infer_lifetime,
    manifest_times,
    recorded_ttl,
    recording_clock,
)
from ctxlab.analysis._cache_rules import CacheRules
from ctxlab.analysis._cost import Price, costs_of_manifests
from ctxlab.manifest import ContextManifest, ManifestItem
from ctxlab.messages import AssistantMessage, ProviderUsage, UserMessage

NOW = 2_000_000_000.0


def _transcript(
    times: dict[int, float], usage: dict[int, ProviderUsage] | None = None
) -> Transcript:
    """Five turns: a user message, then replies at indexes 1, 3, 5, 7, 9."""
    messages: list[UserMessage | AssistantMessage] = []
    for n in range(5):
        messages += [UserMessage(content=f"q{n}"), AssistantMessage(content=f"a{n}")]
    return Transcript("t", {}, "", tuple(messages), usage=usage or {}, times=times)


def test_no_time_is_no_clock_and_said() -> None:
    clock = recording_clock(_transcript({}), now=NOW)
    assert not clock.timed and clock.gaps == ()
    assert clock.note(300.0).startswith("cache without a clock: the recording holds no times")


def test_out_of_order_equal_future_and_unreadable_times() -> None:
    times = {1: 100.0, 3: 50.0, 5: 50.0, 7: NOW + 60.0, 9: math.nan}
    clock = recording_clock(_transcript(times), now=NOW)
    assert clock.times == {1: 100.0, 3: 50.0, 5: 50.0}
    assert clock.gaps == (0.0, 0.0)  # never negative: 100 → 50 → 50
    assert (clock.disordered, clock.future, clock.unreadable) == (2, 1, 1)
    assert clock.note(300.0) == (
        "cache on the recording's clock (3 of 5 replies timed); no gap longer than the cache's "
        "5 min lifetime; 2 replies without a trusted time taken as sent right after the one "
        "before (1 in the future); 2 out of order or equal (gaps of 0)"
    )


def test_a_distrusted_time_cuts_the_gaps_next_to_it() -> None:
    # 0 → (future) → 900: the 900 s are not a gap (the reply between has no trusted time).
    clock = recording_clock(_transcript({1: 0.0, 3: NOW + 1.0, 5: 900.0, 7: 1_000.0}), now=NOW)
    assert clock.gaps == (100.0,)
    assert clock.note(300.0).startswith(
        "cache on the recording's clock (3 of 5 replies timed); no gap longer than"
    )


def test_the_one_hour_ttl_is_read_from_the_usages_split() -> None:
    hour = {1: ProviderUsage(1, 1, 0, 5_000, 5_000), 3: ProviderUsage(1, 1, 5_000, 200, 200)}
    assert recorded_ttl(hour) == "1h"
    five = {1: ProviderUsage(1, 1, 0, 5_000, 0)}
    assert recorded_ttl(five) is None  # five minutes, or no split: the rules' own
    mostly_five = {1: ProviderUsage(1, 1, 0, 5_000, 100)}
    assert recorded_ttl(mostly_five) is None
    broken = {1: ProviderUsage(1, 1, 0, 100, 5_000), 3: ProviderUsage(1, 1, 0, 5_000, 5_000)}
    assert recorded_ttl(broken) is None  # a split larger than its writes: not trusted
    assert recorded_ttl({}) is None


def _usage(reads: list[int]) -> dict[int, ProviderUsage]:
    """Usage of the five replies: each sends 10,000 tokens, reading ``reads[n]`` of them."""
    return {2 * n + 1: ProviderUsage(10_000 - r, 10, r, 0) for n, r in enumerate(reads)}


def test_gaps_that_agree_with_the_documented_lifetime() -> None:
    # Read after 4 min, written again after 20 min: 5 minutes is between.
    times = {1: 0.0, 3: 60.0, 5: 300.0, 7: 1_500.0, 9: 1_560.0}
    found = infer_lifetime(
        _transcript(times, _usage([0, 9_000, 9_000, 0, 9_000])), CacheRules.anthropic()
    )
    assert (found.longest_read, found.shortest_rewrite) == (240.0, 1_200.0)
    assert (found.reads, found.rewrites, found.lifetime) == (3, 1, 300.0)
    assert found.sentence == (
        "cache lifetime 5 min as documented; the recording agrees: it still read after gaps up "
        "to 4 min and wrote the prefix again after a gap of 20 min"
    )


def test_a_read_after_a_longer_gap_than_documented_sets_the_lifetime() -> None:
    times = {1: 0.0, 3: 600.0, 5: 660.0, 7: 3_000.0, 9: 3_060.0}
    found = infer_lifetime(
        _transcript(times, _usage([0, 9_000, 9_000, 0, 9_000])), CacheRules.openai()
    )
    assert (found.longest_read, found.shortest_rewrite, found.lifetime) == (600.0, 2_340.0, 600.0)
    assert found.sentence.startswith("cache lifetime 10 min, inferred from the recording")


def test_a_rewrite_after_a_shorter_gap_than_a_read_is_set_aside() -> None:
    # A re-write 30 s after the one before (a changed prefix), reads after 4 min.
    times = {1: 0.0, 3: 240.0, 5: 270.0, 7: 510.0, 9: 540.0}
    found = infer_lifetime(
        _transcript(times, _usage([0, 9_000, 0, 9_000, 9_000])), CacheRules.anthropic()
    )
    assert (found.shortest_rewrite, found.set_aside, found.lifetime) == (None, 1, 300.0)
    assert "1 re-write after shorter gaps than a read set aside" in found.sentence


def test_a_recording_that_never_reads_its_cache_tells_nothing() -> None:
    times = {1: 0.0, 3: 10.0, 5: 20.0}
    found = infer_lifetime(_transcript(times, _usage([0, 0, 0, 0, 0])), CacheRules.anthropic())
    assert (found.reads, found.rewrites, found.lifetime) == (0, 0, 300.0)
    assert found.sentence.startswith("cache lifetime 5 min as documented: no gap")


def _manifest(name: str, tokens: int, sent_at: float | None) -> ContextManifest:
    items = (
        ManifestItem("sys", "system", "system", 2_000, content_hash="s"),
        ManifestItem(name, "message", "conversation", tokens, content_hash=name),
    )
    return ContextManifest(
        name,
        "reasoning",
        "claude-sonnet-4-5",
        0,
        10_000,
        "t",
        False,
        items,
        (),
        "passed",
        sent_at=sent_at,
    )


SONNET = Price(3.0, 15.0, 3.75, 0.30, cache_write_1h=6.0, provider="anthropic")


def _growing(times: list[float | None]) -> list[ContextManifest]:
    """Requests that each repeat the one before and add 1,000 tokens."""
    manifests = []
    items: tuple[ManifestItem, ...] = (
        ManifestItem("sys", "system", "system", 2_000, content_hash="s"),
    )
    for n, at in enumerate(times):
        items = (
            *items,
            ManifestItem(f"m{n}", "message", "conversation", 1_000, content_hash=f"m{n}"),
        )
        manifests.append(
            ContextManifest(
                f"r{n}",
                "reasoning",
                "claude-sonnet-4-5",
                0,
                100_000,
                "t",
                False,
                items,
                (),
                "passed",
                sent_at=at,
            )
        )
    return manifests


def test_a_live_runs_requests_are_priced_on_their_sent_at() -> None:
    costs = costs_of_manifests(_growing([0.0, 30.0, 900.0]), SONNET, CacheRules.anthropic())
    assert [c.cache_read for c in costs] == [0, 3_000, 0]
    assert costs[2].expired == 4_000
    assert costs[2].cost == pytest.approx(5_000 * 3.75 / 1e6, rel=1e-12)


def test_a_recordings_requests_take_their_times_by_request_id() -> None:
    manifests = _growing([None, None, None])
    times = {"r0": 0.0, "r1": 30.0, "r2": 900.0}
    costs = costs_of_manifests(manifests, SONNET, CacheRules.anthropic(), times=times)
    assert [c.cache_read for c in costs] == [0, 3_000, 0]
    # A sent_at in the future is distrusted: no gap, the cache read.
    future = _growing([0.0, 30.0, 4_000_000_000.0])
    assert costs_of_manifests(future, SONNET, CacheRules.anthropic())[2].cache_read == 4_000


def test_a_forks_own_run_follows_its_origin_with_no_gap_and_keeps_its_own_gaps() -> None:
    # The origin (recorded at 0 and 30 s), the fork run months later: 0 s, then 600 s apart.
    manifests = _growing([0.0, 30.0, 1e9, 1e9 + 600.0])
    assert manifest_times(manifests, {}, joined=2) == [0.0, 30.0, 30.0, 630.0]
    costs = costs_of_manifests(manifests, SONNET, CacheRules.anthropic(), joined=2)
    assert [c.cache_read for c in costs] == [0, 3_000, 4_000, 0]
    unjoined = costs_of_manifests(manifests, SONNET, CacheRules.anthropic())
    assert unjoined[2].cache_read == 0  # months of gap at the fork: the cache long gone


def test_a_manifests_sent_at_round_trips_and_is_left_out_when_never_sent() -> None:
    sent = _manifest("a", 10, 1_780_000_000.5)
    assert ContextManifest.from_dict(sent.to_dict()).sent_at == 1_780_000_000.5
    never = dataclasses.replace(sent, sent_at=None)
    assert "sent_at" not in never.to_dict()
    assert ContextManifest.from_dict(never.to_dict()).sent_at is None


def test_requests_whose_usage_says_one_hour_writes_keep_their_entries_an_hour() -> None:
    # 40 minutes idle before the third: gone at 5 minutes, read at the 1-hour TTL the bills show.
    manifests = _growing([0.0, 30.0, 2_430.0])
    hour = [m.with_usage(ProviderUsage(3, 10, 0, 1_000, 1_000)) for m in manifests]
    costs = costs_of_manifests(hour, SONNET, CacheRules.anthropic())
    assert [c.cache_read for c in costs] == [0, 3_000, 4_000]
    assert costs[2].cache_write_1h == costs[2].cache_write == 1_000
    assert costs[2].cost == pytest.approx((4_000 * 0.30 + 1_000 * 6.0 + 10 * 15.0) / 1e6)
    five = [m.with_usage(ProviderUsage(3, 10, 0, 1_000, 0)) for m in manifests]
    assert costs_of_manifests(five, SONNET, CacheRules.anthropic())[2].cache_read == 0


_ANY_TIME = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, 1.0, NOW, NOW + 1.0, -1e12, 1e300]),
)


@settings(max_examples=80, deadline=None)
@given(st.lists(_ANY_TIME, min_size=0, max_size=5), st.randoms(use_true_random=False))
def test_any_times_shuffled_give_gaps_that_are_never_negative(
    values: list[float], shuffle: Any
) -> None:
    shuffle.shuffle(values)
    times = dict(zip((1, 3, 5, 7, 9), values, strict=False))
    clock = recording_clock(_transcript(times), now=NOW)
    assert all(gap >= 0 and math.isfinite(gap) for gap in clock.gaps)
    assert set(clock.times) <= set(times)
    assert all(t <= NOW for t in clock.times.values())
    assert clock.future + clock.unreadable + len(clock.times) == len(times)
    clock.note(300.0)  # says it, whatever the times


@settings(max_examples=15, deadline=None)
@given(st.lists(_ANY_TIME, min_size=5, max_size=5))
def test_a_whatif_of_any_times_costs_at_least_the_warm_cache(values: list[float]) -> None:
    transcript = _transcript(dict(zip((1, 3, 5, 7, 9), values, strict=True)))
    transcript = dataclasses.replace(transcript, meta={"models": ["claude-sonnet-4-5"]})

    async def cost(session: Transcript) -> float:
        what = WhatIf(session, {"d": ContextConfig()}, context_window=50_000)
        await what.run()
        assert what.cache_clock  # said, whatever the times
        return what.runs["d"].cost

    timed = asyncio.run(cost(transcript))
    warm = asyncio.run(cost(dataclasses.replace(transcript, times={})))
    assert timed >= warm - 1e-12
