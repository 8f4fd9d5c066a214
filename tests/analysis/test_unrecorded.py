"""The unrecorded part — what a recorded agent sent that its file does not hold — as its own
placement in every recorded, replayed and what-if request: sized from the bill, stated, or a
harness profile; counted against the window and the trigger; priced as the cached prefix.

The bill is read from the fixture by a few lines of JSON here, sharing nothing with ctxlab's
importer."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import ApproximateCounter, ContextConfig, Transcript, WhatIf, load, replay
from ctxlab.analysis import UNRECORDED_PROFILES, calibrate, unrecorded_note, unrecorded_part
from ctxlab.analysis._cost import costs_of_manifests
from ctxlab.exceptions import UsageError
from ctxlab.sources import ReplaySession
from ctxlab.widgets._map import map_items

SESSION = (
    Path(__file__).parents[1]
    / "fixtures"
    / "claude_code"
    / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
)


def file_bills(path: Path) -> list[int]:
    """Input + cache reads + cache writes of each response, in order (its last line's)."""
    bills: dict[str, int] = {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        if record.get("type") == "assistant" and not record.get("isSidechain"):
            usage = record["message"]["usage"]
            bills[record["message"]["id"]] = sum(
                int(usage.get(k) or 0)
                for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
            )
    return list(bills.values())


async def test_every_recorded_request_leads_with_its_unrecorded_part_sized_from_the_bill() -> None:
    transcript = load(SESSION)
    session = ReplaySession(transcript, context_window=200_000)
    manifests = await session.run()
    calibration = session.calibration
    assert calibration is not None
    bills = file_bills(SESSION)
    assert [m.provider_usage.total_input_tokens for m in manifests] == bills  # type: ignore[union-attr]
    for manifest, point in zip(manifests, calibration.points, strict=True):
        first = manifest.items[0]
        fit = calibration.fit(point.model)
        assert fit is not None
        # Its own placement, leading, sized as the bill says for its model: what the provider
        # billed beyond ctxlab's count of what the file shows.
        assert (first.placement, first.kind) == ("unrecorded", "unrecorded")
        assert first.tokens == round(fit.fixed[0])
        assert manifest.totals["unrecorded"] == first.tokens
        assert manifest.estimated_input_tokens == point.estimate + first.tokens
        assert first.source_id == "not recorded: System prompt, tool schemas"
        assert first.revision.startswith("inferred from the bill")  # type: ignore[union-attr]
    # Two models, two sizes (a /model switch changes the tokenizer and the cache).
    assert sorted({m.totals["unrecorded"] for m in manifests}) == [25_999, 29_420]
    # The map draws it (its colour from the one table, its words on hover).
    segment = map_items(manifests[0])[0]
    assert segment["placement"] == "unrecorded" and segment["tokens"] == 25_999
    # With it the estimate is within 11 % of the bill (the median, measured: 10.1 %); without
    # it 78 % off — the control.
    totals = [m.estimated_input_tokens for m in manifests]
    with_it = statistics.median(abs(t - b) / b for t, b in zip(totals, bills, strict=True))
    shown = [t - m.totals["unrecorded"] for t, m in zip(totals, manifests, strict=True)]
    without = statistics.median(abs(t - b) / b for t, b in zip(shown, bills, strict=True))
    assert with_it < 0.11 and without > 0.7


async def test_the_unrecorded_part_is_priced_as_the_cached_prefix() -> None:
    session = ReplaySession(load(SESSION), context_window=200_000)
    manifests = await session.run()
    costs = costs_of_manifests(manifests)
    # The first request writes it; the next ones of the same model read it from the cache.
    assert costs[0].cache_write >= 25_999
    assert all(c.cache_read >= 25_999 for c in costs[1:5])
    # Without it, nothing of the requests' first 26k tokens is priced at all.
    bare = costs_of_manifests(
        [m.__class__(**{**m.__dict__, "items": tuple(m.items)[1:]}) for m in manifests]
    )
    assert sum(c.input_tokens for c in costs) - sum(c.input_tokens for c in bare) == sum(
        m.totals["unrecorded"] for m in manifests
    )


async def test_replays_and_what_ifs_carry_it_against_window_and_trigger() -> None:
    transcript = load(SESSION)
    what = WhatIf(transcript, {"default": ContextConfig()}, context_window=200_000)
    await what.run()
    assert what.unrecorded is not None and what.unrecorded.method == "billed"
    manifests = what.runs["default"].manifests
    assert all(m.items[0].placement == "unrecorded" for m in manifests)
    assert [m.totals["unrecorded"] for m in manifests] == [
        what.unrecorded.size(step.index) for step in what.runs["default"].steps
    ]
    # At a window the unrecorded part alone fills, nothing fits: every config fails its first
    # request, and the reason names it.
    small = WhatIf(transcript, {"default": ContextConfig()}, context_window=16_000)
    await small.run()
    run = small.runs["default"]
    assert run.steps == [] and run.error is not None and "unrecorded part" in run.error


async def test_the_unrecorded_part_counts_against_the_trigger() -> None:
    # The same conversation with and without 6,000 unrecorded tokens a request, trigger at
    # 10,000: with them it is reached at the fifth request, not the eighteenth.
    messages = load(SESSION).messages
    config = ContextConfig(trigger_ratio=0.5, reserve_ratio=0.1)
    compacted: list[int] = []
    for part in (None, unrecorded_part(Transcript("t", {}, "", messages), 6_000)):
        first = None
        async for step in replay(
            messages,
            context_window=20_000,
            counter=ApproximateCounter(),
            config=config,
            unrecorded=part,
        ):
            if step.compaction is not None and first is None:
                first = step.number
        assert first is not None
        compacted.append(first)
    assert compacted == [17, 4]


def _bare() -> Transcript:
    # The fixture's conversation without its usage: nothing to size the unrecorded part from.
    return Transcript("bare", {"source": "claude_code"}, "", load(SESSION).messages)


async def test_without_usage_it_is_stated_or_said_to_be_excluded() -> None:
    bare = _bare()
    assert unrecorded_part(bare) is None
    note = unrecorded_note(bare, None)
    assert note == (
        "not recorded: System prompt, tool schemas — no usage in the file to size them from, so "
        "every figure here excludes them; state their size with unrecorded_tokens=N (tokens a "
        "request) or a harness profile (claude_code)"
    )
    counter = ApproximateCounter()
    plain = WhatIf(bare, {"d": ContextConfig()}, context_window=200_000, counter=counter)
    stated = WhatIf(
        bare,
        {"d": ContextConfig()},
        context_window=200_000,
        counter=counter,
        unrecorded_tokens=5_000,
    )
    profile = WhatIf(
        bare,
        {"d": ContextConfig()},
        context_window=200_000,
        counter=counter,
        unrecorded_tokens="claude_code",
    )
    for what in (plain, stated, profile):
        await what.run()
    base = [m.estimated_input_tokens for m in plain.runs["d"].manifests]
    # The table says which: excluded, stated, or a profile with its source.
    assert "every figure here excludes them" in plain.table().attrs["unrecorded"]
    assert "stated: 5,000 tokens a request" in stated.table().attrs["unrecorded"]
    assert "Claude Code 2.1" in profile.table().attrs["unrecorded"]
    assert all(m.totals["unrecorded"] == 0 for m in plain.runs["d"].manifests)
    assert [m.estimated_input_tokens for m in stated.runs["d"].manifests] == [
        b + 5_000 for b in base
    ]
    assert [m.estimated_input_tokens for m in profile.runs["d"].manifests] == [
        b + 18_800 for b in base
    ]
    assert profile.unrecorded is not None
    # A profile names its source and the version it holds for.
    assert (
        "Claude Code 2.1" in profile.unrecorded.detail and "/context" in profile.unrecorded.detail
    )
    assert UNRECORDED_PROFILES["claude_code"].tokens == 18_800
    # A stated part outranks the bill.
    billed = WhatIf(
        load(SESSION), {"d": ContextConfig()}, context_window=200_000, unrecorded_tokens=1_234
    )
    assert billed.unrecorded is not None and billed.unrecorded.size(3) == 1_234


async def test_a_recording_that_holds_its_system_and_tools_has_no_unrecorded_part() -> None:
    transcript = load(SESSION)
    whole = Transcript(
        "whole",
        transcript.meta,
        "You are a coding agent.",
        transcript.messages,
        tools=(),
        usage=transcript.usage,
    )
    # No tool schemas: the tool schemas are still missing, and sized from the bill.
    part = unrecorded_part(whole, calibration=calibrate(whole, ApproximateCounter()))
    assert part is not None and part.parts == "tool schemas"


@settings(max_examples=40, deadline=None)
@given(
    value=st.one_of(
        st.integers(max_value=-1),
        st.floats(allow_nan=True),
        st.booleans(),
        st.text(max_size=12).filter(lambda s: s not in UNRECORDED_PROFILES),
        st.lists(st.integers(), max_size=2),
    )
)
def test_a_value_unrecorded_tokens_cannot_take_is_a_usage_error(value: Any) -> None:
    with pytest.raises(UsageError, match="unrecorded_tokens"):
        unrecorded_part(_bare(), value)


async def test_replay_takes_a_stated_size_and_refuses_what_is_none() -> None:
    messages = load(SESSION).messages
    steps = [
        s
        async for s in replay(
            messages, context_window=200_000, counter=ApproximateCounter(), unrecorded=3_000
        )
    ]
    assert {s.manifest.totals["unrecorded"] for s in steps} == {3_000}
    assert steps[0].manifest.items[0].revision == "stated"
    with pytest.raises(UsageError, match="unrecorded must be"):
        async for _ in replay(
            messages,
            context_window=200_000,
            counter=ApproximateCounter(),
            unrecorded="big",  # type: ignore[arg-type]
        ):
            pass
