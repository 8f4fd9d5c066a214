"""The what-if on the recording's clock, in dollars: a session with a long idle gap costs more by
exactly the re-write of its prefix (each config, the baseline and never compacting), a control
session whose gaps are all short costs what it cost without a clock, a recording's 1-hour writes
are priced and kept an hour, a lifetime its own usage shows is used and said, and the table's
re-writes by time and by compaction say where the re-writes came from."""

from __future__ import annotations

import dataclasses

import pytest

from ctxlab import ApproximateCounter, ContextConfig, Transcript, WhatIf
from ctxlab.messages import (
    AssistantMessage,
    ProviderUsage,
)
from tests.helpers import bash_loop

CONFIGS = {"default": ContextConfig(), "masking": ContextConfig.preset("observation_masking")}
# Claude Sonnet 4.6 (its list price): a 5-minute write costs $3.75 a million, a read $0.30,
# a 1-hour write $6.
WRITE, READ, WRITE_1H = 3.75, 0.30, 6.0
START = 1_780_000_000.0  # 2026-05-28, a time in the past


def _session(turns: int = 12) -> Transcript:
    """A tool loop of ``turns`` calls on Sonnet 4.6, each result ~1,500 tokens."""
    calls = (
        (f"cat app{n}.log", f"app{n}: request {n} failed at line {n * 7}\n" * 150)
        for n in range(turns)
    )
    return bash_loop("logs", "Read the logs.", calls, "All read.", system="You read logs.")


def _timed(session: Transcript, gaps: dict[int, float], step: float = 20.0) -> Transcript:
    """``session`` with a time on every reply: ``step`` seconds apart, the gap before reply
    number ``k`` (from 0) ``gaps[k]`` instead."""
    replies = [i for i, m in enumerate(session.messages) if isinstance(m, AssistantMessage)]
    times, at = {}, START
    for number, index in enumerate(replies):
        at += gaps.get(number, step) if number else 0.0
        times[index] = at
    return dataclasses.replace(session, times=times)


async def _what(session: Transcript, window: int = 200_000, **keywords: object) -> WhatIf:
    what = WhatIf(
        session,
        CONFIGS,
        context_window=window,
        counter=ApproximateCounter(),
        **keywords,  # type: ignore[arg-type]
    )
    await what.run()
    return what


async def test_a_long_gap_costs_exactly_the_rewrite_of_the_prefix_and_a_short_one_nothing() -> None:
    session = _session()
    warm = await _what(session)  # no times: no clock
    control = await _what(_timed(session, {}))  # 20 s between replies: nothing expires
    idle = await _what(_timed(session, {6: 3_600.0}))  # an hour before the 7th request
    for name in CONFIGS:
        assert [c.cost for c in control.runs[name].costs] == [c.cost for c in warm.runs[name].costs]
        before, after = warm.runs[name].costs, idle.runs[name].costs
        # The 7th request wrote again the whole prefix the 6th had cached: what it read warm.
        assert after[6].cache_read == 0
        assert after[6].expired == before[6].cache_read > 5_000
        extra = before[6].cache_read * (WRITE - READ) / 1e6
        assert idle.runs[name].cost - warm.runs[name].cost == pytest.approx(extra, rel=1e-9)
        row = idle.table().loc[name]
        assert row["rewrite_time_tokens"] == before[6].cache_read
        assert row["rewrite_time_usd"] == pytest.approx(extra, rel=1e-9)
        assert control.table().loc[name]["rewrite_time_tokens"] == 0
    # The references are on the same clock: each costs more by its own re-write.
    for warm_costs, idle_costs in (
        (warm.baseline, idle.baseline),
        (warm.no_compaction, idle.no_compaction),
    ):
        assert idle_costs[6].expired == warm_costs[6].cache_read
        extra = warm_costs[6].cache_read * (WRITE - READ) / 1e6
        spent = sum(c.cost for c in idle_costs) - sum(c.cost for c in warm_costs)
        assert spent == pytest.approx(extra, rel=1e-9)
    assert [c.cost for c in control.baseline] == [c.cost for c in warm.baseline]


async def test_the_clock_is_said_with_its_gaps_or_its_absence() -> None:
    warm = await _what(_session())
    assert warm.table().attrs["cache_clock"].startswith("cache without a clock")
    idle = await _what(_timed(_session(), {6: 3_600.0}))
    said = idle.table().attrs["cache_clock"]
    assert said.startswith("cache on the recording's clock (13 of 13 replies timed)")
    assert "1 gap longer than the cache's 5 min lifetime (longest 1 h) write the prefix again" in (
        said
    )
    assert "cache lifetime 5 min as documented" in said


async def test_times_in_the_future_are_distrusted_and_said() -> None:
    session = _timed(_session(), {6: 3_600.0})
    times = dict(session.times)
    seventh = sorted(times)[6]
    times[seventh] = 4_000_000_000.0  # 2096: not yet
    what = await _what(dataclasses.replace(session, times=times))
    warm = await _what(_session())
    # No clock for the gaps next to the distrusted time: the hour is not seen, nothing expires.
    assert what.runs["default"].cost == warm.runs["default"].cost
    assert "1 reply without a trusted time" in what.cache_clock
    assert "(1 in the future)" in what.cache_clock


def _billed(session: Transcript, *, hour: bool) -> Transcript:
    """``session`` with usage on every reply, written at the 1-hour TTL when ``hour``; at the
    5-minute one, the 7th request (after the idle gap) wrote its whole prefix again."""
    replies = [i for i, m in enumerate(session.messages) if isinstance(m, AssistantMessage)]
    usage = {index: ProviderUsage(3, 50, 20_000, 2_000, 2_000 if hour else 0) for index in replies}
    if not hour:
        usage[replies[6]] = ProviderUsage(3, 50, 0, 22_000)
    return dataclasses.replace(session, usage=usage)


async def test_a_recordings_one_hour_writes_are_priced_at_two_times_input_and_kept_an_hour() -> (
    None
):
    # 40 minutes idle: a 5-minute cache writes everything again, a 1-hour one reads.
    session = _timed(_session(), {6: 2_400.0})
    hour = await _what(_billed(session, hour=True), unrecorded_tokens=0)
    five = await _what(_billed(session, hour=False), unrecorded_tokens=0)
    assert hour.rules.ttl == "1h" and hour.rules.lifetime == 3_600.0
    first = next(c for c in hour.runs["default"].costs if c.cache_write)
    assert first.cache_write_1h == first.cache_write
    assert first.cost == pytest.approx(
        (first.uncached * 3.0 + first.cache_write * WRITE_1H + first.output * 15.0) / 1e6
    )
    assert hour.runs["default"].costs[6].expired == 0
    assert five.runs["default"].costs[6].expired > 5_000
    assert "1h TTL" in hour.pricing


async def test_a_lifetime_the_recordings_usage_shows_is_used_and_said() -> None:
    # Every request read its predecessor's whole input, once after 20 minutes idle: this
    # provider kept the cache longer than its documented 5 minutes — the what-if keeps it 20.
    session = _timed(_session(), {6: 1_200.0})
    usage = {}
    total = 0
    for index, message in enumerate(session.messages):
        if isinstance(message, AssistantMessage):
            usage[index] = ProviderUsage(10, 50, total, 1_500)
            total += 1_510
    what = await _what(dataclasses.replace(session, usage=usage), unrecorded_tokens=0)
    assert what.lifetime.longest_read == 1_200.0
    assert what.rules.lifetime == 1_200.0
    assert what.runs["default"].costs[6].expired == 0
    assert what.cache_clock.endswith(
        "cache lifetime 20 min, inferred from the recording: it still read after gaps up to "
        "20 min (documented: 5 min)"
    )


async def test_the_rewrites_of_a_compaction_are_apart_from_those_of_time() -> None:
    # A window small enough to compact: the compacting steps' requests write their new prefix
    # ("by compaction"); with an idle hour, time's share is apart ("by time").
    session = _session(30)
    warm = await _what(session, window=24_000)
    idle = await _what(_timed(session, {20: 3_600.0}), window=24_000)
    for name, run in warm.runs.items():
        compacting = [n for n, s in enumerate(run.prepared) if s.compaction is not None]
        assert compacting, name
        own = run.step_costs()
        written = sum(own[n].cache_write for n in compacting)
        row = warm.table().loc[name]
        assert row["rewrite_compaction_tokens"] == written
        assert row["rewrite_compaction_usd"] == pytest.approx(written * (WRITE - READ) / 1e6)
        assert row["rewrite_time_tokens"] == 0
        timed = idle.table().loc[name]
        assert timed["rewrite_time_tokens"] > 0
        assert timed["cost"] - row["cost"] == pytest.approx(timed["rewrite_time_usd"], rel=1e-9)
