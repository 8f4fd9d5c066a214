"""`ReplaySession` on its own (no Lab): the events of both views, in order, with their usage."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from ctxlab import load
from ctxlab.agent import CompactionEvent, ContextBuildEvent, ModelResponseEvent
from ctxlab.exceptions import UsageError
from ctxlab.sources import ReplaySession

FIXTURE = Path(__file__).parents[1] / "fixtures" / "sessions" / "claude_code_session.jsonl"


@pytest.mark.parametrize("view", ["recorded", "replayed"])
async def test_each_request_comes_with_its_request_and_then_its_usage(view: str) -> None:
    session = ReplaySession(load(FIXTURE), context_window=200_000, view=view)  # type: ignore[arg-type]
    events: list[object] = []
    session.subscribe(events.append)
    done: list[tuple[int, int]] = []
    session.on_progress = lambda n, total: done.append((n, total))
    manifests = await session.run()
    builds = [e for e in events if isinstance(e, ContextBuildEvent)]
    answers = [e for e in events if isinstance(e, ModelResponseEvent)]
    assert len(builds) == len(manifests) == session.request_count == 5
    assert all(b.request is not None for b in builds)  # what the panels show
    assert [a.request_id for a in answers] == [m.request_id for m in manifests]
    assert [a.usage.total_input_tokens for a in answers if a.usage] == [
        14_230,
        19_950,
        20_056,
        14_358,
        14_414,
    ]
    assert done[-1] == (5, 5)
    assert not any(isinstance(e, CompactionEvent) for e in events)  # ctxlab did not compact
    marked = [m for m in manifests if any(t.kind == "recorded_compaction" for t in m.transforms)]
    assert [manifests.index(m) for m in marked] == [3]


def test_an_unknown_view_is_refused() -> None:
    with pytest.raises(UsageError, match="view must be one of"):
        ReplaySession(load(FIXTURE), context_window=8_000, view="both")  # type: ignore[arg-type]


async def test_each_replayed_request_is_for_the_model_that_answered_it() -> None:
    transcript = load(FIXTURE)
    # Two models answered this session (a subagent's, say): each request names its own.
    models = {"0": "claude-haiku-4-5", "1": "claude-sonnet-4-6", "2": "claude-haiku-4-5"}
    meta = {**transcript.meta, "reply_models": models}
    session = ReplaySession(
        dataclasses.replace(transcript, meta=meta), context_window=200_000, view="replayed"
    )
    manifests = await session.run()
    assert [m.model for m in manifests[:3]] == [
        "claude-haiku-4-5",
        "claude-sonnet-4-6",
        "claude-haiku-4-5",
    ]


async def test_the_recorded_view_says_what_the_file_does_not_hold() -> None:
    session = ReplaySession(load(FIXTURE), context_window=200_000, view="recorded")
    manifests = await session.run()
    note = session.unrecorded_note
    assert note is not None and note.startswith("not recorded (System prompt, tool schemas)")
    assert all(m.notes == (note,) for m in manifests)


async def test_a_replay_that_cannot_go_on_stops_there_and_says_why() -> None:
    # A window below what the first request needs: its manifest, failed, is the last shown.
    session = ReplaySession(load(FIXTURE), context_window=2_000, view="replayed")
    events: list[object] = []
    session.subscribe(events.append)
    manifests = await session.run()
    assert session.stopped is not None and "input limit" in session.stopped
    assert manifests and manifests[-1].validation == "budget_exceeded"
    assert manifests[-1].error == session.stopped
    builds = [e for e in events if isinstance(e, ContextBuildEvent)]
    assert builds[-1].manifest is manifests[-1]
    # Control: a window that fits goes to the end and says nothing.
    whole = ReplaySession(load(FIXTURE), context_window=200_000, view="replayed")
    assert len(await whole.run()) == 5 and whole.stopped is None
