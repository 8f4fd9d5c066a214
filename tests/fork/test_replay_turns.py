"""A recording whose user turns hold text beside tool results — what Claude Code writes when a
system reminder, an interruption note, a task notification or the user's own typed words land in
the same turn as a call's result — replayed by a fork of itself (`model="recorded"`): the
branch's turn after its tools carries the recorded text too, so under the config it was
recorded under the replay reaches the recording's end, and under another config it parts at
the first request whose messages differ.

Where it parts is found here by the test's own code: each request's messages written out with
tool-call ids numbered in order of first appearance and the run's folders taken out, hints and
thinking left out (the harness's notes and the provider's), and compared with the recorded
request — every message before the recorded reply of the same number."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ctxlab
from ctxlab.analysis import recorded_requests
from ctxlab.config._config import ContextConfig
from ctxlab.fork import fork, run_forward
from ctxlab.fork._branch import BranchRun
from ctxlab.io._transcript import Transcript, corpus_dir
from ctxlab.messages import AssistantMessage, ToolUseBlock, UserMessage

FIXTURE = (
    Path(__file__).parents[1]
    / "fixtures"
    / "claude_code"
    / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
)

# -- the test's own instruments -----------------------------------------------------------------


def _written(messages: Sequence[Any], folders: Sequence[str]) -> list[tuple[str, list[str]]]:
    """Each message's role and blocks as text, ids numbered by first appearance, ``folders``
    replaced by one word."""
    numbers: dict[str, str] = {}

    def number(call: str) -> str:
        return numbers.setdefault(call, f"#{len(numbers)}")

    def clean(text: str) -> str:
        for folder in folders:
            text = text.replace(folder, "<folder>")
        for call, said in sorted(numbers.items(), key=lambda pair: -len(pair[0])):
            text = text.replace(call, said)
        return text

    out = []
    for message in messages:
        blocks = []
        for block in message.content:
            if block.type == "tool_use":
                blocks.append(f"use {number(block.id)} {block.name} {json.dumps(block.input)}")
            elif block.type == "tool_result":
                blocks.append(f"result {number(block.tool_use_id)} {block.text} {block.is_error}")
            elif block.type == "text":
                blocks.append(f"text {block.text}")
            elif block.type not in ("hint", "thinking", "redacted_thinking"):
                blocks.append(f"{block.type} {block.model_dump_json()}")
        out.append((message.role, blocks))
    return [(role, [clean(b) for b in blocks]) for role, blocks in out]


def first_parting(recording: Transcript, run: BranchRun, at: int) -> int | None:
    """The first request from ``at`` whose messages are not the recorded request's (or that
    the recording never made), None when every request was the recorded one. Only for
    recordings with no compaction of their own before the run's last request."""
    replies = [i for i, m in enumerate(recording.messages) if isinstance(m, AssistantMessage)]
    folders = [str(run.workspace)] if run.workspace is not None else []
    for offset, request in enumerate(run.requests):
        number = at + offset
        assert request is not None
        if number >= len(replies):
            return number
        recorded = recording.messages[: replies[number]]
        if _written(request.messages, folders) != _written(recorded, folders):
            return number
    return None


# -- generated recordings: text beside tool results ---------------------------------------------

_NOTES = (
    "<system-reminder>The file f0.txt was modified by the user.</system-reminder>",
    "[Request interrupted by user for tool use]",
    "continue",
    "<task-notification><status>completed</status></task-notification>",
)


@st.composite
def _recordings(draw: st.DrawFn) -> Transcript:
    """A read loop of 2 to 5 steps, each of 1 to 3 calls; every result turn holds 0 to 2
    texts at random places among its results (before, between, after)."""
    messages: list[UserMessage | AssistantMessage] = [UserMessage(content="Read the files.")]
    call = 0
    for step in range(draw(st.integers(2, 5))):
        uses = []
        for _ in range(draw(st.integers(1, 3))):
            uses.append(ToolUseBlock(id=f"toolu_{call:03d}", name="read", input={"n": call}))
            call += 1
        messages.append(AssistantMessage(content=(st_text(step), *uses)))
        length = draw(st.integers(1, 1_500))
        blocks: list[dict[str, Any]] = [
            {"type": "tool_result", "tool_use_id": u.id, "content": f"{u.id}:" + "x" * length}
            for u in uses
        ]
        for note in draw(st.lists(st.sampled_from(_NOTES), max_size=2)):
            place = draw(st.integers(0, len(blocks)))
            blocks.insert(place, {"type": "text", "text": note})
        messages.append(UserMessage(content=blocks))
    messages.append(AssistantMessage(content="All read."))
    return Transcript(name="noted", meta={}, system="", messages=tuple(messages))


def st_text(step: int) -> dict[str, str]:
    return {"type": "text", "text": f"Step {step}: reading."}


_CUT = ContextConfig(tool_result_limit=100)


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(recording=_recordings(), at=st.integers(0, 1))
async def test_text_beside_tool_results_is_replayed_and_the_parting_is_the_first_difference(
    tmp_path_factory: pytest.TempPathFactory, recording: Transcript, at: int
) -> None:
    root = tmp_path_factory.mktemp("t")
    branches = [
        await fork(recording, at=at, name=name, config=config, model="recorded", root=root)
        for name, config in (("same", None), ("cut", _CUT))
    ]
    same, cut = (await run_forward(branches, check=lambda run: True, max_steps=30)).runs
    # Under its own config every request is the recorded one, to the recorded reply.
    assert first_parting(recording, same, at) is None
    replies = sum(isinstance(m, AssistantMessage) for m in recording.messages)
    assert len(same.requests) == replies - at
    # Nothing ran in its workspace: the check is not asked, the outcome is unknown.
    whole = f"unknown: replayed the recording to its end (request {replies - 1}) — no call ran here"
    assert same.notes == [whole] and same.reply == "All read." and same.passed is None
    # Cut to 100 tokens a result: where it parts is where the test finds the first difference.
    parted = first_parting(recording, cut, at)
    if parted is None:
        assert cut.notes == [whole] and cut.reply == "All read." and cut.passed is None
    else:
        assert cut.notes == [f"unknown after request {parted} — the contexts part here"]
        assert at + len(cut.requests) - 1 == parted and cut.passed is None


async def test_the_turn_after_a_handover_holds_its_results_alone(tmp_path: Path) -> None:
    # Once the contexts part, the recording says nothing of the turns: the model handed over
    # to makes its own calls, and their turn is theirs (no recorded text carried into it).
    from ctxlab.fork import RecordedModel
    from ctxlab.models import ScriptedModel, tool_call

    texts = {"type": "text", "text": "[Request interrupted by user for tool use]"}
    use = ToolUseBlock(id="toolu_a", name="read", input={"n": 0})
    recording = Transcript(
        name="noted",
        meta={},
        system="",
        messages=(
            UserMessage(content="Read."),
            AssistantMessage(content=(use,)),
            UserMessage(
                content=[
                    {"type": "tool_result", "tool_use_id": "toolu_a", "content": "y" * 4_000},
                    texts,
                ]
            ),
            AssistantMessage(content="Read."),
        ),
    )
    then = ScriptedModel([[tool_call("read", {"n": 1})], "Mine."])
    branch = await fork(
        recording, at=0, config=_CUT, model=RecordedModel(recording, then=then), root=tmp_path
    )
    (run,) = (await run_forward(branch, max_steps=10)).runs
    assert run.notes == ["replayed to request 1, then scripted"] and run.reply == "Mine."
    turns = [m for m in run.agent.history if isinstance(m, UserMessage) and m.tool_results]  # type: ignore[union-attr]
    # The recorded turn (before the parting) holds its note; the handed-over call's holds its
    # result alone.
    assert [[b.type for b in m.content] for m in turns] == [
        ["tool_result", "text"],
        ["tool_result"],
    ]


# -- Claude Code recordings ---------------------------------------------------------------------


async def test_the_claude_code_fixture_replays_past_its_skill_text(tmp_path: Path) -> None:
    # Request 5 holds the text of a skill Claude Code put beside two tool results. Replayed
    # with it, the recording's 20 requests are all the recorded ones; the branch then asks
    # request 20, which the recording (it ends on a call) never made.
    recording = ctxlab.load(FIXTURE)
    branch = await fork(recording, at=0, model="recorded", root=tmp_path)
    (run,) = (await run_forward(branch, check=lambda run: True, max_steps=100)).runs
    assert first_parting(recording, run, 0) == 20
    assert len(run.requests) == 21
    assert run.notes == ["unknown after request 20 — the recording ends here"]


def _corpus_sessions() -> list[Path]:
    folder = corpus_dir() / "raw" / "claude_code"
    return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []


@pytest.mark.skipif(not _corpus_sessions(), reason="no Claude Code session in CTXLAB_CORPUS")
@pytest.mark.parametrize("path", _corpus_sessions(), ids=lambda p: p.stem[:8])
async def test_a_corpus_session_replays_to_its_own_compaction_or_end(
    tmp_path: Path, path: Path
) -> None:
    # Under the config it was recorded under, a replay from the start holds what the recording
    # held at every request up to the recording's first compaction of its own (Claude Code's,
    # whose summary no config of ctxlab writes alike) or its end: it parts nowhere before.
    recording = ctxlab.load(path)
    requests = recorded_requests(recording)
    compacted = next((r.number for r in requests if r.compaction is not None), len(requests))
    branch = await fork(recording, at=0, model="recorded", root=tmp_path)
    (run,) = (await run_forward(branch, check=lambda run: True, max_steps=2_000)).runs
    parted = first_parting(_before(recording, compacted), run, 0)
    assert parted == compacted
    said = "the recording ends here" if compacted == len(requests) else "the contexts part here"
    assert run.notes == [f"unknown after request {parted} — {said}"]


def _before(recording: Transcript, request: int) -> Transcript:
    """The recording's messages up to its ``request``-th reply (none of its compactions)."""
    replies = [i for i, m in enumerate(recording.messages) if isinstance(m, AssistantMessage)]
    end = replies[request] if request < len(replies) else len(recording.messages)
    return dataclasses.replace(recording, messages=recording.messages[:end])
