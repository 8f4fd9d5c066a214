"""Compact while idle (``compaction.idle_ratio``): a replay compacts from the idle line at a
request that comes after a pause longer than the cache's lifetime — and only there: without a
pause, without times, without a lifetime, or with the option off, the requests are the ones
compacting at the trigger makes."""

from __future__ import annotations

import dataclasses

import pytest

from ctxlab import ApproximateCounter, ContextConfig, Transcript, WhatIf
from ctxlab.manifest import Thresholds
from ctxlab.messages import AssistantMessage
from ctxlab.pipeline import idle_threshold
from tests.analysis.test_breakeven_whatif import session
from tests.helpers import replayed

CONFIG = ContextConfig.preset("ctxlab")  # trigger 0.8, reserve 0.1
WINDOW = 8_000  # the trigger at 6,400 tokens; compacting while idle (0.6) at 4,800


def timed(transcript: Transcript, pauses: dict[int, float]) -> Transcript:
    """Replies 30 s apart, with ``pauses`` (seconds, by request number) before some."""
    replies = [i for i, m in enumerate(transcript.messages) if isinstance(m, AssistantMessage)]
    times, now = {}, 1_700_000_000.0
    for number, index in enumerate(replies):
        now += pauses.get(number, 30.0)
        times[index] = now
    return dataclasses.replace(transcript, times=times)


async def _compacted(
    transcript: Transcript, config: ContextConfig, lifetime: float | None = 300.0
) -> list[int]:
    """The requests (by number) that compact, and the tokens each request holds."""
    run = replayed(
        transcript,
        context_window=WINDOW,
        config=config,
        times=transcript.times,
        lifetime=lifetime,
        system="",  # the pinned request numbers were taken without the System prompt
    )
    return [step.number async for step in run if step.compaction is not None]


def test_the_idle_line_is_the_ratio_of_the_window_when_the_pause_outlived_the_cache() -> None:
    idle = CONFIG.with_idle_compaction()
    lines = Thresholds.compute(idle, WINDOW)
    assert idle.compaction.idle_ratio == 0.6
    assert idle_threshold(idle, lines, 301.0, 300.0) == 4_800
    assert idle_threshold(idle, lines, 300.0, 300.0) is None  # still alive at its lifetime
    assert idle_threshold(idle, lines, None, 300.0) is None  # no clock
    assert idle_threshold(idle, lines, 3_600.0, None) is None  # a cache that never expires
    assert idle_threshold(CONFIG, lines, 3_600.0, 300.0) is None  # off
    # Never above the trigger (an absolute trigger lower than the idle line).
    low = idle.merge(compaction={"trigger_tokens": 4_000})
    assert idle_threshold(low, Thresholds.compute(low, WINDOW), 3_600.0, 300.0) == 4_000


@pytest.mark.parametrize("ratio", [0.05, 0.1, 0.85])
def test_an_idle_ratio_outside_reserve_and_trigger_is_refused(ratio: float) -> None:
    with pytest.raises(ValueError, match="idle_ratio"):
        CONFIG.merge(compaction={"idle_ratio": ratio})


def test_the_exports_name_what_they_cannot_do() -> None:
    exported = CONFIG.with_idle_compaction(0.5).export("anthropic")
    assert any(d.startswith("compaction.idle_ratio") for d in exported.dropped)


async def test_after_a_long_pause_the_compaction_moves_into_it() -> None:
    # Request 12 holds 6,049 tokens (over the idle line, under the trigger); request 13 would
    # pass the trigger. A 45-minute pause before request 12: the idle config compacts there.
    transcript = timed(session(), {12: 45 * 60})
    at_trigger = await _compacted(transcript, CONFIG)
    idle = await _compacted(transcript, CONFIG.with_idle_compaction())
    assert at_trigger[0] == 13
    assert idle[0] == 12
    assert len(idle) == len(at_trigger)


async def test_a_pause_below_the_idle_line_changes_nothing() -> None:
    # Request 5 holds 2,441 tokens: under the idle line, nothing to compact while idle.
    transcript = timed(session(), {5: 45 * 60})
    assert await _compacted(transcript, CONFIG.with_idle_compaction()) == await _compacted(
        transcript, CONFIG
    )


@pytest.mark.parametrize(
    ("pauses", "lifetime"),
    [({}, 300.0), ({12: 240.0}, 300.0), ({12: 45 * 60}, None), ({12: 45 * 60}, 3_600.0)],
    ids=["no pause", "a pause within the lifetime", "no lifetime", "a 1-hour cache"],
)
async def test_without_a_pause_that_outlived_the_cache_it_compacts_at_the_trigger(
    pauses: dict[int, float], lifetime: float | None
) -> None:
    transcript = timed(session(), pauses)
    idle = await _compacted(transcript, CONFIG.with_idle_compaction(), lifetime)
    assert idle == await _compacted(transcript, CONFIG, lifetime) == [13, 23, 33]


async def test_a_recording_without_times_compacts_at_the_trigger() -> None:
    assert await _compacted(session(), CONFIG.with_idle_compaction()) == [13, 23, 33]


async def _what(transcript: Transcript, *, summary_calls: bool = True) -> WhatIf:
    what = WhatIf(
        transcript,
        {"at trigger": CONFIG, "while idle": CONFIG.with_idle_compaction()},
        context_window=WINDOW,
        counter=ApproximateCounter(),
        summary_calls=summary_calls,
    )
    await what.run()
    return what


@pytest.mark.parametrize("summary_calls", [True, False])
async def test_compacting_in_a_long_pause_costs_less_than_at_the_trigger(
    summary_calls: bool,
) -> None:
    what = await _what(timed(session(), {12: 45 * 60}), summary_calls=summary_calls)
    table = what.table()
    trigger, idle = table.loc["at trigger", "cost"], table.loc["while idle", "cost"]
    assert idle < trigger
    frame = what.compactions()
    first = frame.groupby("config").first()
    # At the trigger the first compaction breaks a warm cache; in the pause it finds it cold.
    assert (first.loc["at trigger", "request"], first.loc["at trigger", "cold"]) == (13, False)
    assert (first.loc["while idle", "request"], first.loc["while idle", "cold"]) == (12, True)
    assert first.loc["while idle", "rewritten"] == 0
    assert first.loc["while idle", "gap_seconds"] == 45 * 60
    # The pause expired the cache in both: request 12 wrote again what it would have read.
    assert what.runs["at trigger"].step_costs()[12].expired > 0


async def test_without_a_long_pause_both_cost_the_same() -> None:
    # Control: the same session, every reply 30 s after the one before.
    what = await _what(timed(session(), {}))
    table = what.table()
    assert table.loc["at trigger", "cost"] == table.loc["while idle", "cost"]
    assert table.loc["at trigger", "compactions"] == table.loc["while idle", "compactions"] == 3
    assert not what.compactions()["cold"].any()


async def test_a_config_put_in_place_compacts_while_idle_as_a_fresh_replay_does() -> None:
    # A what-if reuses an earlier replay's first requests only before any decision may
    # differ: turning idle compaction on changes a field no slider tunes (nothing reused);
    # moving the trigger of an idle config reuses the requests below the idle line.
    transcript = timed(session(), {12: 45 * 60})
    what = await _what(transcript)
    fresh = [s.number for s in what.runs["while idle"].prepared if s.compaction is not None]
    run = await what.set_config("at trigger", CONFIG.with_idle_compaction())
    assert run.reused == 0
    assert [s.number for s in run.prepared if s.compaction is not None] == fresh == [12, 22, 32]
    later = CONFIG.merge(trigger_ratio=0.85).with_idle_compaction(0.6)
    moved = await what.set_config("while idle", later)
    assert 0 < moved.reused < 12
    alone = await _what(transcript)
    again = await alone.set_config("other", later)
    assert again.reused == 0
    assert [s.manifest for s in moved.prepared] == [s.manifest for s in again.prepared]


async def test_a_config_without_compactions_has_no_count_beside_one_with() -> None:
    # Twelve turns: only the pause before the last request makes a compaction, while idle.
    what = await _what(timed(session(12), {12: 45 * 60}))
    table = what.table()
    assert table.loc["at trigger", "compactions"] == 0
    assert table.loc["at trigger", "compactions_paid_back"] is None  # not NaN, not "0 of 0"
    assert table.loc["while idle", "compactions"] == 1
    evens = what.compactions("while idle")
    paid = int(evens["paid_back_at"].notna().sum())
    assert table.loc["while idle", "compactions_paid_back"] == f"{paid} of 1"
