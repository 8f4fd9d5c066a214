"""A fork of a recording, offline, answered by the recording itself (`model="recorded"`): it
replays to the end under a config that sends what the recording sent, and at the first request
that differs its outcome is unknown — that request found here by code of the test's own: both
requests rebuilt from the messages and their texts compared — or `then=` a model takes over.

The recordings are generated (a read loop of random lengths), the tests' Claude Code fixture,
and one corpus session when ``CTXLAB_CORPUS`` holds one."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ctxlab
from ctxlab.agent import Tool
from ctxlab.analysis import recorded_requests
from ctxlab.config._config import ContextConfig
from ctxlab.exceptions import ForkError
from ctxlab.fork import RecordedModel, fork, run_forward
from ctxlab.fork._branch import BranchRun
from ctxlab.io._transcript import Transcript
from ctxlab.messages import AssistantMessage, ToolUseBlock, UserMessage
from ctxlab.models import ScriptedModel, tool_call

FIXTURE = (
    Path(__file__).parents[1]
    / "fixtures"
    / "claude_code"
    / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
)

# -- the test's own instruments -----------------------------------------------------------------


def _texts(messages: Sequence[Any]) -> list[tuple[str, list[str]]]:
    """Each message's role and its blocks' texts: text, a call's name and input, a result's
    text and error flag (hints and thinking are the harness's and the provider's, not the
    conversation)."""
    out = []
    for message in messages:
        texts = []
        for block in message.content:
            kind = block.type
            if kind == "text":
                texts.append(block.text)
            elif kind == "tool_use":
                texts.append(f"{block.id} {block.name} {json.dumps(block.input, sort_keys=True)}")
            elif kind == "tool_result":
                texts.append(f"{block.tool_use_id} {block.text} {bool(block.is_error)}")
            elif kind not in ("hint", "thinking", "redacted_thinking"):
                texts.append(block.model_dump_json())
        out.append((message.role, texts))
    return out


def _recorded(transcript: Transcript, number: int) -> list[Any]:
    """Recorded request ``number`` of a recording with no compaction of its own: every message
    before its ``number``-th reply."""
    replies = [i for i, m in enumerate(transcript.messages) if isinstance(m, AssistantMessage)]
    return list(transcript.messages[: replies[number]])


def _first_difference(transcript: Transcript, run: BranchRun, at: int) -> int | None:
    """The first request, from ``at``, where the run's request's texts are not the recorded
    one's (or the run asked one the recording has not)."""
    replies = sum(isinstance(m, AssistantMessage) for m in transcript.messages)
    for offset, request in enumerate(run.requests):
        number = at + offset
        assert request is not None
        if number >= replies or _texts(request.messages) != _texts(_recorded(transcript, number)):
            return number
    return None


# -- generated recordings ---------------------------------------------------------------------


def _generated(lengths: Sequence[int]) -> Transcript:
    """A read loop: the task, one call of ``read`` per length (its result that many
    characters), and a closing reply."""
    messages: list[UserMessage | AssistantMessage] = [UserMessage(content="Read the files.")]
    for n, length in enumerate(lengths):
        use = ToolUseBlock(id=f"toolu_{n:03d}", name="read", input={"path": f"f{n}.txt"})
        messages.append(AssistantMessage(content=(use,)))
        body = "".join(chr(ord("a") + (n + i) % 26) for i in range(length))
        messages.append(UserMessage(content=[_result(use.id, body)]))
    messages.append(AssistantMessage(content="All read."))
    return Transcript(name="generated", meta={}, system="", messages=tuple(messages))


def _result(call: str, text: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call, "content": text}


def _read_tool(calls: list[str]) -> Any:
    def tools(folder: Path) -> list[Tool]:
        def read(path: str) -> str:
            """Read a file."""
            calls.append(path)
            return (folder / path).read_text() if (folder / path).exists() else "missing"

        def write(path: str, text: str) -> str:
            """Write a file."""
            calls.append(path)
            (folder / path).write_text(text)
            return "written"

        return [Tool.from_function(read), Tool.from_function(write)]

    return tools


_LIMIT = 50
_CUT = ContextConfig(tool_result_limit=_LIMIT)
_COMPACTED = ContextConfig.model_validate({"compaction": {"trigger_messages": 4}})


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    lengths=st.lists(st.integers(1, 40 * _LIMIT), min_size=2, max_size=6),
    at=st.integers(0, 2),
)
async def test_a_generated_recording_replays_to_the_end_or_parts_where_the_texts_part(
    tmp_path_factory: pytest.TempPathFactory, lengths: list[int], at: int
) -> None:
    root = tmp_path_factory.mktemp("b")
    recording = _generated(lengths)
    calls: list[str] = []
    branches = [
        await fork(
            recording,
            at=at,
            name=name,
            config=config,
            model="recorded",
            tools=_read_tool(calls),
            root=root,
        )
        for name, config in (("same", None), ("cut", _CUT), ("compacted", _COMPACTED))
    ]
    outcomes = await run_forward(branches, check=lambda run: True, max_steps=20)
    same, cut, compacted = outcomes.runs
    # Under the config it was recorded under: every request equal, the recorded reply, the
    # check's verdict, and no user tool ever ran (the recorded results answered).
    assert _first_difference(recording, same, at) is None
    assert len(same.requests) == len(lengths) + 1 - at
    # A whole replay ran nothing in its workspace: not judged (the check would say True).
    whole = (
        f"unknown: replayed the recording to its end (request {len(lengths)}) — no call ran here"
    )
    assert same.reply == "All read." and same.passed is None and same.notes == [whole]
    assert calls == []
    # Cut to 50 tokens a result, or compacted past 4 messages: the run ends at the first
    # request whose texts differ from the recorded one's, its outcome unknown whatever the
    # check would say; a run whose requests never differ replays to the end.
    for run in (cut, compacted):
        parted = _first_difference(recording, run, at)
        if parted is None:
            assert run.passed is None and run.reply == "All read." and run.notes == [whole]
            continue
        assert parted == at + len(run.requests) - 1
        assert run.notes == [f"unknown after request {parted} — the contexts part here"]
        assert run.passed is None and run.reply is None and run.error is None
    # A result of hundreds of tokens is cut: that one at least parts.
    if any(length > 20 * _LIMIT for length in lengths[at:]):
        assert _first_difference(recording, cut, at) is not None


async def test_then_a_model_continues_from_where_the_contexts_part(tmp_path: Path) -> None:
    recording = _generated([50, 4_000, 50])
    calls: list[str] = []
    then = ScriptedModel([[tool_call("write", {"path": "out.txt", "text": "mine"})], "Done."])
    branch = await fork(
        recording,
        at=0,
        config=_CUT,
        model=RecordedModel(recording, then=then),
        tools=_read_tool(calls),
        root=tmp_path,
    )
    outcomes = await run_forward(branch, check=lambda run: True, max_steps=20)
    (run,) = outcomes.runs
    parted = _first_difference(recording, run, 0)
    assert parted == 2  # the request holding the 4,000-character result, cut
    assert run.agent is not None
    model = run.agent.model
    assert isinstance(model, RecordedModel) and model.parted_at == 2
    # The scripted model answered from there: its first request is the run's request 2, and
    # the user's own tool ran in the run's folder (never before the handover).
    assert model.then is not None and model.then.requests[0] is run.requests[2]  # type: ignore[attr-defined]
    assert calls == ["out.txt"]
    assert run.workspace is not None and (run.workspace / "out.txt").read_text() == "mine"
    assert run.reply == "Done." and run.passed is True
    assert run.notes == ["replayed to request 2, then scripted"]
    assert len(run.requests) == 4


async def test_the_branch_asking_past_the_recordings_end_is_unknown(tmp_path: Path) -> None:
    # A recording cut after a call: the branch asks what came next, which it never held.
    recording = _generated([10, 10])
    cut = Transcript(name="cut", meta={}, system="", messages=recording.messages[:-1])
    branch = await fork(cut, at=0, model="recorded", root=tmp_path)
    outcomes = await run_forward(branch, check=lambda run: True, max_steps=20)
    (run,) = outcomes.runs
    assert run.notes == ["unknown after request 2 — the recording ends here"]
    assert run.passed is None and len(run.requests) == 3


async def test_a_live_agent_is_not_a_recording(tmp_path: Path) -> None:
    from tests.fork.helpers import demo_session

    session = await demo_session(tmp_path)
    with pytest.raises(ForkError, match="replays a recording"):
        await fork(session.agent, at=2, model="recorded", root=tmp_path / "b")
    with pytest.raises(ForkError, match="replays 'generated', not the recording forked"):
        other = Transcript(name="other", meta={}, system="", messages=_generated([2]).messages[:3])
        await fork(other, at=0, model=RecordedModel(_generated([1])), root=tmp_path / "d")
    with pytest.raises(ForkError, match="'recorded'"):
        await fork(_generated([1]), at=0, model="replayed", root=tmp_path / "c")  # type: ignore[arg-type]


# -- real recordings --------------------------------------------------------------------------


async def _parts_where_the_texts_part(path: Path, root: Path, at: int, config: Any) -> BranchRun:
    recording = ctxlab.load(path)
    branch = await fork(recording, at=at, config=config, model="recorded", root=root)
    outcomes = await run_forward(branch, check=lambda run: True, max_steps=500)
    (run,) = outcomes.runs
    parted = _first_difference(recording, run, at)
    assert parted is not None  # these sessions end on a call, or part before
    assert at + len(run.requests) - 1 == parted
    ended = parted >= sum(isinstance(m, AssistantMessage) for m in recording.messages)
    said = "the recording ends here" if ended else "the contexts part here"
    assert run.notes == [f"unknown after request {parted} — {said}"]
    assert run.passed is None
    return run  # type: ignore[no-any-return]


async def test_the_claude_code_fixture_replays_until_its_contexts_part(tmp_path: Path) -> None:
    # Request 5 holds the text of a skill Claude Code added beside two tool results: the
    # branch's turn holds it too (tests/fork/test_replay_turns.py), so the replay goes to the
    # recording's end (20 requests; the last reply is a call) and asks past it; forked at 5 it
    # replays requests 5 to 19; a cut of tool results parts earlier.
    first = await _parts_where_the_texts_part(FIXTURE, tmp_path / "a", 0, None)
    assert len(first.requests) == 21
    rest = await _parts_where_the_texts_part(FIXTURE, tmp_path / "b", 5, None)
    assert len(rest.requests) == 16  # requests 5 to 19 replayed, 20 asked past the end
    cut = await _parts_where_the_texts_part(
        FIXTURE, tmp_path / "c", 5, ContextConfig(tool_result_limit=100)
    )
    assert 1 <= len(cut.requests) < 16


def _corpus_session() -> Path | None:
    folder = Path(os.environ.get("CTXLAB_CORPUS", "../shared/corpus")) / "raw" / "claude_code"
    files = sorted(folder.glob("*.jsonl")) if folder.is_dir() else []
    others = [f for f in files if f.name != FIXTURE.name]
    return min(others, key=lambda f: f.stat().st_size) if others else None


@pytest.mark.skipif(_corpus_session() is None, reason="no Claude Code session in CTXLAB_CORPUS")
async def test_a_corpus_session_parts_where_the_texts_part(tmp_path: Path) -> None:
    path = _corpus_session()
    assert path is not None
    # Cut to 1,000 tokens a result, it parts before the session's own compaction. (Under its
    # own config it replays to that compaction: tests/fork/test_replay_turns.py.)
    await _parts_where_the_texts_part(path, tmp_path, 0, ContextConfig(tool_result_limit=1_000))


async def test_a_recordings_own_compaction_parts_a_branch_that_did_not_compact(
    tmp_path: Path,
) -> None:
    # The recorded agent restarted from a summary at its compaction; a branch forked before it
    # under a config that does not compact still holds the whole conversation there. Forked
    # after it (from the summary, as recorded), it replays to the recorded end: nothing ran in
    # its folder, so it is not judged (its check would pass on the recorded reply).
    path = Path(__file__).parents[1] / "fixtures" / "sessions" / "claude_code_session.jsonl"
    after = next(r.number for r in recorded_requests(ctxlab.load(path)) if r.compaction)
    before = await fork(path, at=0, model="recorded", root=tmp_path / "a")
    (run,) = (await run_forward(before, check=lambda run: True, max_steps=50)).runs
    assert run.notes == [f"unknown after request {after} — the contexts part here"]
    assert len(run.requests) == after + 1 and run.passed is None
    since = await fork(path, at=after, model="recorded", root=tmp_path / "b")
    (run,) = (
        await run_forward(since, check=lambda run: "pass" in (run.reply or ""), max_steps=50)
    ).runs
    last = len(recorded_requests(ctxlab.load(path))) - 1
    assert run.notes == [
        f"unknown: replayed the recording to its end (request {last}) — no call ran here"
    ]
    assert run.passed is None
    assert (
        run.reply
        == "Fixed: batches of 500 finish well within the 30 s timeout; the 8 ingest tests pass."
    )
