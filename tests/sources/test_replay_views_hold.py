"""What each view of a `ReplaySession` holds, on the values a Lab shows: the file's System
prompt and tools in every recorded request, the unrecorded part of each request's own segment,
the estimates beside the raw bill, each request's change from the one before, the config and
counter given, ctxlab's own compactions as events, and the marks of the session's compactions.

The bills compared with are read from the raw file by a few lines of JSON parsing that share
nothing with ctxlab's importer."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from ctxlab import ContextConfig, ToolSchema, load
from ctxlab.agent import CompactionEvent, ContextBuildEvent, ModelResponseEvent
from ctxlab.analysis import replay
from ctxlab.io._transcript import Transcript
from ctxlab.messages import AssistantMessage, ProviderUsage, TextBlock, UserMessage
from ctxlab.sources import ReplaySession
from ctxlab.tokens import ApproximateCounter, TokenCache, default_counter
from tests.analysis.test_recorded_promises import _raw_bills
from tests.helpers import replayed

FIXTURE = Path(__file__).parents[1] / "fixtures" / "sessions" / "claude_code_session.jsonl"
TOOL = ToolSchema(
    name="read_file",
    description="Read a file of the repository and return its text.",
    input_schema={"type": "object", "properties": {"path": {"type": "string"}}},
)
SYSTEM = "You are a careful engineer. Read before you write; run the tests after every change."


def _whole(*, usage: bool = True) -> Transcript:
    """A recording that holds all of each request: System prompt, tools, two replies."""
    messages = (
        UserMessage(content="Where is the batch size set?"),
        AssistantMessage(content=(TextBlock(text="In config/workers.toml, batch_size = 500."),)),
        UserMessage(content="Halve it."),
        AssistantMessage(content=(TextBlock(text="Done: batch_size = 250."),)),
    )
    bills = {1: ProviderUsage(input_tokens=120, output_tokens=12)}
    bills[3] = ProviderUsage(input_tokens=140, output_tokens=8)
    return Transcript("whole", {}, SYSTEM, messages, tools=(TOOL,), usage=bills if usage else {})


async def _events(session: ReplaySession) -> list[object]:
    events: list[object] = []
    session.subscribe(events.append)
    await session.run()
    return events


@pytest.mark.parametrize("view", ["recorded", "replayed"])
async def test_every_request_carries_the_files_system_prompt_and_tools(view: str) -> None:
    counter = default_counter()
    session = ReplaySession(_whole(), context_window=8_000, view=view)  # type: ignore[arg-type]
    events = await _events(session)
    builds = [e for e in events if isinstance(e, ContextBuildEvent)]
    assert len(builds) == 2
    for build in builds:
        assert build.request is not None
        assert build.request.system == SYSTEM
        assert build.request.tools == (TOOL,)
        # The prompt's tokens and a message's framing (4 tokens).
        assert build.manifest.totals["system"] == counter.count(SYSTEM).tokens + 4
        assert build.manifest.totals["tools"] > 0
        # Both views name the prompt alike, so that their manifests line up item by item.
        assert [i.id for i in build.manifest.items if i.placement == "system"] == [
            "system/system_prompt"
        ]
    # What the second request was sent: the conversation up to the reply it produced.
    second = builds[1].request
    assert second is not None
    assert [m.role for m in second.messages] == ["user", "assistant", "user"]
    assert second.messages[-1] == UserMessage(content="Halve it.")


async def test_without_its_system_prompt_a_recorded_request_is_smaller_by_the_prompt() -> None:
    counter = default_counter()
    whole = await ReplaySession(_whole(usage=False), context_window=8_000).run()
    bare = dataclasses.replace(_whole(usage=False), system="")
    without = await ReplaySession(bare, context_window=8_000).run()
    grown = [
        w.estimated_input_tokens - b.estimated_input_tokens
        for w, b in zip(whole, without, strict=True)
    ]
    assert grown == [counter.count(SYSTEM).tokens + 4] * 2
    assert all(m.totals["system"] == 0 for m in without)


async def test_a_recording_is_shown_as_recorded_unless_asked_otherwise() -> None:
    transcript = _whole()
    session = ReplaySession(transcript, context_window=8_000)
    assert session.view == "recorded"
    assert session.name == "whole" and session.model.name == "replay of whole"
    assert session.model.context_window == 8_000
    events = await _events(session)
    assert [e.call for e in events if isinstance(e, ContextBuildEvent)] == ["recorded"] * 2
    assert [m.request_id for m in session.manifests] == ["recorded-0", "recorded-1"]


@pytest.mark.parametrize(("view", "call"), [("recorded", "recorded"), ("replayed", "replay")])
async def test_each_reply_is_the_files_own_with_its_usage(view: str, call: str) -> None:
    transcript = _whole()
    session = ReplaySession(transcript, context_window=8_000, view=view)  # type: ignore[arg-type]
    events = await _events(session)
    answers = [e for e in events if isinstance(e, ModelResponseEvent)]
    assert [a.message for a in answers] == [transcript.messages[1], transcript.messages[3]]
    assert [a.stop_reason for a in answers] == ["recorded", "recorded"]
    assert [a.call for a in answers] == [call, call]
    assert [a.usage for a in answers] == [transcript.usage[1], transcript.usage[3]]
    builds = [e for e in events if isinstance(e, ContextBuildEvent)]
    assert [b.call for b in builds] == [call, call]


async def test_the_recorded_view_is_the_bill_segment_by_segment() -> None:
    # The session compacted once (before its fourth request): the part the file omits is sized
    # per segment, and each recorded request's estimate is its bill within a few tokens.
    session = ReplaySession(load(FIXTURE), context_window=200_000)
    manifests = await session.run()
    bills = _raw_bills(FIXTURE)
    assert len(bills) == len(manifests) == 5
    for manifest, bill in zip(manifests, bills, strict=True):
        assert abs(manifest.estimated_input_tokens - bill) <= bill * 0.003, (manifest, bill)
    assert [m.totals["unrecorded"] for m in manifests] == [14_210, 14_210, 14_210, 14_299, 14_299]


async def test_a_stated_unrecorded_part_is_in_every_request_of_both_views() -> None:
    for view in ("recorded", "replayed"):
        session = ReplaySession(
            load(FIXTURE),
            context_window=200_000,
            view=view,  # type: ignore[arg-type]
            unrecorded_tokens=3_000,
        )
        assert session.unrecorded_part is not None and session.unrecorded_part.tokens == 3_000
        assert session.unrecorded_note is not None and "3,000" in session.unrecorded_note
        manifests = await session.run()
        assert [m.totals["unrecorded"] for m in manifests] == [3_000] * 5


async def test_each_recorded_request_says_what_changed_since_the_one_before() -> None:
    manifests = await ReplaySession(_whole(), context_window=8_000).run()
    assert manifests[0].diff is None
    diff = manifests[1].diff
    assert diff is not None
    assert diff.removed == () and diff.shrank == () and diff.grew == ()
    first = {item.id for item in manifests[0].items}
    assert set(diff.added) == {item.id for item in manifests[1].items} - first
    assert len(diff.added) == 2  # the first reply and the second user message


async def test_a_replay_runs_under_the_config_and_counter_given() -> None:
    transcript = load(FIXTURE)
    config = ContextConfig(tool_result_limit=64)
    counter = ApproximateCounter()
    session = ReplaySession(
        transcript, context_window=200_000, config=config, counter=counter, view="replayed"
    )
    assert session.context_config == config
    manifests = await session.run()
    # The direct replay under the same settings is what the session shows.
    run = replayed(
        transcript,
        context_window=200_000,
        counter=counter,
        config=config,
        tools=transcript.tools,
        unrecorded=session.unrecorded_part,
    )
    direct = [step.manifest async for step in run]
    assert [m.estimated_input_tokens for m in manifests] == [
        m.estimated_input_tokens for m in direct
    ]
    assert any(t.kind == "tool_result_truncation" for m in manifests for t in m.transforms)
    assert manifests[0].counting_method == counter.method
    # The calibration counted what the file shows with the same counter.
    recorded = await ReplaySession(transcript, context_window=200_000, counter=counter).run()
    assert session.calibration is not None
    assert session.calibration.points[0].estimate == recorded[0].totals["conversation"]
    other = await ReplaySession(transcript, context_window=200_000).run()
    assert recorded[0].totals["conversation"] != other[0].totals["conversation"]


async def test_ctxlabs_own_compactions_are_events_of_the_replay() -> None:
    transcript = load(FIXTURE)
    session = ReplaySession(transcript, context_window=20_000, view="replayed")
    events = await _events(session)
    compactions = [e for e in events if isinstance(e, CompactionEvent)]
    assert len(compactions) == 1
    event = compactions[0]
    assert event.trigger == "automatic" and event.call == "replay"
    direct = [
        step.compaction
        async for step in replay(
            transcript.messages,
            context_window=20_000,
            counter=TokenCache(default_counter()),
            system=transcript.system,
            tools=transcript.tools,
            unrecorded=session.unrecorded_part,
        )
        if step.compaction is not None
    ]
    assert event.record.tokens_before == direct[0].tokens_before
    assert event.record.tokens_after == direct[0].tokens_after
    # It follows the build of the request it made room for, which records the compaction.
    build = events[events.index(event) - 1]
    assert isinstance(build, ContextBuildEvent)
    assert any(t.kind == "history_compaction" for t in build.manifest.transforms)


async def test_the_sessions_compactions_are_marked_before_and_after() -> None:
    transcript = load(FIXTURE)
    # One more compaction, recorded after the session's last reply.
    later = {
        "kind": "compact",
        "trigger": "auto",
        "pre_tokens": 21_000,
        "replies_before": 5,
        "summary_index": 9,
    }
    meta = {**transcript.meta, "compactions": [*transcript.meta["compactions"], later]}
    session = ReplaySession(
        dataclasses.replace(transcript, meta=meta), context_window=200_000, view="replayed"
    )
    manifests = await session.run()
    marks = [
        (i, t.target, t.detail, t.tokens_before, t.tokens_after)
        for i, m in enumerate(manifests)
        for t in m.transforms
        if t.kind == "recorded_compaction"
    ]
    bill = _raw_bills(FIXTURE)[3]
    assert marks == [(3, "", "manual", 20_900, bill), (4, "after", "auto", 21_000, None)]


async def test_a_mark_on_a_request_without_usage_has_no_bill() -> None:
    transcript = load(FIXTURE)
    replies = [i for i, m in enumerate(transcript.messages) if isinstance(m, AssistantMessage)]
    usage = {k: v for k, v in transcript.usage.items() if k != replies[3]}
    session = ReplaySession(
        dataclasses.replace(transcript, usage=usage), context_window=200_000, view="replayed"
    )
    manifests = await session.run()
    marks = [t for t in manifests[3].transforms if t.kind == "recorded_compaction"]
    assert [(t.detail, t.tokens_before, t.tokens_after) for t in marks] == [
        ("manual", 20_900, None)
    ]


async def test_reply_models_that_are_no_mapping_are_ignored() -> None:
    transcript = load(FIXTURE)
    meta = {**transcript.meta, "reply_models": ["claude-haiku-4-5"]}
    session = ReplaySession(
        dataclasses.replace(transcript, meta=meta), context_window=200_000, view="replayed"
    )
    manifests = await session.run()
    assert len(manifests) == 5 and "claude-haiku-4-5" not in {m.model for m in manifests}


async def test_a_recording_without_usage_has_no_calibration() -> None:
    session = ReplaySession(_whole(usage=False), context_window=8_000)
    assert session.calibration is None
    assert session.unrecorded_part is None and session.unrecorded_note is None
    assert session.unrecorded == []
    assert all(m.notes == () for m in await session.run())
    assert ReplaySession(load(FIXTURE), context_window=8_000).unrecorded == [
        "System prompt",
        "tool schemas",
    ]


async def test_running_is_true_while_a_run_shows_its_requests() -> None:
    for view in ("recorded", "replayed"):
        session = ReplaySession(_whole(), context_window=8_000, view=view)  # type: ignore[arg-type]
        seen: list[bool] = []
        session.subscribe(lambda _event, s=session, seen=seen: seen.append(s.running))
        assert session.stopped is None
        await session.run()
        assert seen and all(seen)
        assert session.running is False and session.stopped is None


async def test_a_failed_replay_shows_its_failed_request_as_part_of_the_replay() -> None:
    session = ReplaySession(load(FIXTURE), context_window=2_000, view="replayed")
    events = await _events(session)
    builds = [e for e in events if isinstance(e, ContextBuildEvent)]
    assert builds[-1].call == "replay" and builds[-1].request is None
    assert builds[-1].manifest.validation == "budget_exceeded"
