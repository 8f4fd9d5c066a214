"""The Lab's header says what the costs' prompt cache expires on: a live agent's wall clock, a
recording's own times with the gaps past the cache's lifetime, or no clock at all (every cached
prefix taken as alive); a recording's requests as recorded carry their times."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

pytest.importorskip("ipywidgets")

from ctxlab import load
from ctxlab.demo import demo_agent
from ctxlab.messages import AssistantMessage
from ctxlab.widgets import Lab

FIXTURE = Path(__file__).parents[1] / "fixtures" / "sessions" / "claude_code_session.jsonl"


def test_a_live_agents_costs_are_on_the_wall_clock() -> None:
    lab = Lab(demo_agent())
    assert "cache on the wall clock: each request at the time the agent sent it" in (
        lab.header.value
    )
    lab.close()


async def test_a_recording_without_times_says_its_cache_has_no_clock() -> None:
    recording = dataclasses.replace(load(FIXTURE), times={})
    lab = await Lab.open(recording, context_window=200_000, view="recorded")
    assert "cache without a clock: the recording holds no times" in lab.header.value
    lab.close()


async def test_a_recordings_gaps_are_said_and_its_requests_carry_their_times() -> None:
    recording = load(FIXTURE)
    replies = [i for i, m in enumerate(recording.messages) if isinstance(m, AssistantMessage)]
    times = {index: 1_780_000_000.0 + 1_000.0 * n for n, index in enumerate(replies)}
    lab = await Lab.open(
        dataclasses.replace(recording, times=times), context_window=200_000, view="recorded"
    )
    said = lab.header.value
    assert f"cache on the recording&#x27;s clock ({len(replies)} of {len(replies)} replies" in said
    # Its bill read the cache after each 1,000-second gap: a lifetime that long is inferred.
    assert "no gap longer than the cache&#x27;s 17 min lifetime" in said
    assert (
        "cache lifetime 17 min, inferred from the recording: it still read after gaps up to" in said
    )
    sent = [m.sent_at for m in lab.log.manifests]
    assert sent == [times[i] for i in replies[-len(sent) :]]
    lab.close()


async def test_the_whatif_lab_says_its_caches_clock_under_its_table() -> None:
    from ctxlab.widgets import WhatIfLab

    recording = dataclasses.replace(load(FIXTURE), times={})
    lab = await WhatIfLab.open(recording, context_window=200_000)
    assert (
        "<div class='ctxlab-clock' style='color:#555'>cache without a clock: the recording holds "
        "no times to measure gaps by" in lab.table.value
    )
