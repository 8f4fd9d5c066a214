"""Each branch's first request is the session's state at the fork under the branch's config —
checked by code of the test's own: the state read from the SQLite log with ``sqlite3`` (a live
agent), or sliced from the recording's messages (a recording), replayed (for *as if from the
start*) by a loop written here, and prepared by the public pipeline (`ctxlab.prepare`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

import pytest

from ctxlab import ContextConfig, WorkingState, prepare
from ctxlab.demo import DEMO_SYSTEM, DEMO_WORKSPACE, demo_config, workspace_tools
from ctxlab.fork import Branch, fork, run_forward
from ctxlab.io._transcript import corpus_dir
from ctxlab.materials import Materials, SystemPart
from ctxlab.messages import AssistantMessage, UserMessage
from ctxlab.messages._request import ModelRequest, ToolSchema
from ctxlab.models import MemorylessModel
from ctxlab.pipeline import extractive_summarizer
from ctxlab.tokens import TokenCache
from tests.conftest import requires_corpus
from tests.fork.helpers import RelativeFolder, demo_session
from tests.helpers import Message


async def _first_request(branch: Branch) -> tuple[ModelRequest, dict[str, object], Path]:
    """The branch's first request, where the test's own preparations offload so that they
    name the same files — the last one into the run's workspace, a replay into the branch's
    folder (``arrival``): what they write there is the same content, so the same files — each
    named, as a run names it, by its path under that folder."""
    outcomes = await run_forward(branch, max_steps=1)
    (run,) = outcomes.runs
    assert run.requests and run.requests[0] is not None, run.error
    assert run.workspace is not None
    return (
        run.requests[0],
        {
            "last": {"offloader": RelativeFolder(run.workspace)},
            "replay": {"offloader": RelativeFolder(branch.folder / "arrival")},
        },
        run.workspace,
    )


def _relative(state: WorkingState, folder: Path) -> WorkingState:
    """``state`` with the files offloaded under ``folder`` (the origin's workspace) named as
    the run has them: by the same path under its own workspace, relative to it."""
    text = state.model_dump_json().replace(str(folder.resolve()) + "/", "")
    return WorkingState.model_validate_json(text)


def _conversation(request: ModelRequest) -> tuple[Message, ...]:
    """The request's messages before its per-request material."""
    return tuple(request.messages[: len(request.messages) - request.material_messages])


def _checkpoint(log: Path, turn: int) -> WorkingState:
    db = sqlite3.connect(log)
    try:
        ((state,),) = db.execute("SELECT state FROM checkpoints WHERE turn = ?", (turn,))
    finally:
        db.close()
    return WorkingState.model_validate_json(state)


async def _own_replay(
    messages: Sequence[Message],
    config: ContextConfig,
    how: dict[str, object],
    offload: dict[str, object],
) -> WorkingState:
    """The test's replay: each assistant message is requested from the state so far."""
    start = next(i for i, m in enumerate(messages) if isinstance(m, UserMessage))
    state, waiting = WorkingState(), []
    for message in messages[start:]:
        if isinstance(message, UserMessage):
            waiting.append(message)
            continue
        state = state.append(*waiting)
        state = (await prepare(state, config=config, **how, **offload)).state  # type: ignore[arg-type]
        waiting = [message]
    return state.append(*waiting)


def _how(window: int, system: str, tools: Sequence[ToolSchema]) -> dict[str, object]:
    """How the test prepares: the model's window and counter, the System text and tool
    schemas the branch's agent has."""
    return {
        "context_window": window,
        "counter": TokenCache(MemorylessModel().counter),
        "materials": Materials(system=(SystemPart("system_prompt", system),) if system else ()),
        "tools": tuple(tools),
        "summarizer": extractive_summarizer,
    }


CONFIGS = {
    "cut": demo_config(tool_result_limit=300),
    "eager": demo_config(trigger_ratio=0.4),
    "masking": ContextConfig.preset("observation_masking").merge(tool_result_limit=200),
}


@pytest.mark.parametrize("at", [1, 2, 3, 4])
async def test_a_fork_under_the_same_config_sends_what_the_session_sent(
    tmp_path: Path, at: int
) -> None:
    session = await demo_session(tmp_path)
    branch = await fork(session.agent, at=at, workspace=DEMO_WORKSPACE, root=tmp_path / "b")
    first, _, _ = await _first_request(branch)
    sent = session.sent[at]
    assert (first.system, first.tools) == (sent.system, sent.tools)
    # A result cut at this step is offloaded into the run's own workspace: its hint names it
    # by its path there — the origin's, without the origin's folder.
    shown = "\n".join(m.model_dump_json() for m in _conversation(sent))
    assert "\n".join(m.model_dump_json() for m in _conversation(first)) == shown.replace(
        str(session.workspace.resolve()) + "/", ""
    )


@pytest.mark.parametrize("name", sorted(CONFIGS))
@pytest.mark.parametrize("at", [2, 4])
async def test_as_it_was_the_first_request_is_the_logged_state_under_the_new_config(
    tmp_path: Path, name: str, at: int
) -> None:
    session = await demo_session(tmp_path)
    config = CONFIGS[name]
    branch = await fork(session.agent, at=at, config=config, root=tmp_path / "b")
    state = _checkpoint(session.log, at + 1)  # what the log says step `at` was prepared from
    how = _how(8_000, DEMO_SYSTEM, session.agent.tool_schemas())
    first, offload, _ = await _first_request(branch)
    state = _relative(state, session.workspace)
    expected = await prepare(state, config=config, **how, **offload["last"])  # type: ignore[arg-type]
    assert _conversation(first) == _conversation(expected.request)


@pytest.mark.parametrize("name", sorted(CONFIGS))
async def test_from_the_start_the_first_request_is_the_replayed_history_under_it(
    tmp_path: Path, name: str
) -> None:
    session = await demo_session(tmp_path)
    config = CONFIGS[name]
    at = 4
    branch = await fork(
        session.agent, at=at, config=config, arrival="from_start", root=tmp_path / "b"
    )
    how = _how(8_000, DEMO_SYSTEM, session.agent.tool_schemas())
    db = sqlite3.connect(session.log)
    try:
        rows = db.execute(
            "SELECT payload FROM events WHERE kind = 'message' AND turn <= ? ORDER BY seq",
            (at + 1,),
        ).fetchall()
    finally:
        db.close()
    history = [
        UserMessage.model_validate_json(p)
        if '"role":"user"' in p
        else AssistantMessage.model_validate_json(p)
        for (p,) in rows
    ]
    first, offload, _ = await _first_request(branch)
    state = await _own_replay(history, config, how, offload["replay"])  # type: ignore[arg-type]
    expected = await prepare(state, config=config, **how, **offload["last"])  # type: ignore[arg-type]
    assert _conversation(first) == _conversation(expected.request)
    if name == "eager":  # the replay compacted where this config would have
        assert first.messages[0] != history[0]


@requires_corpus
@pytest.mark.parametrize(
    "name",
    ["swe_agent__ctf_web__i_got_id_demo.jsonl", "tau_bench__gpt-4o-airline_task2_trial1.jsonl"],
)
@pytest.mark.parametrize("arrival", ["as_it_was", "from_start"])
async def test_a_recording_forks_at_its_own_request_under_the_new_config(
    tmp_path: Path, name: str, arrival: str
) -> None:
    import ctxlab

    recording = corpus_dir() / "norm" / name
    transcript = ctxlab.load(recording)
    config = ContextConfig(tool_result_limit=400, trigger_ratio=0.3)
    at = 6
    branch = await fork(
        recording,
        at=at,
        config=config,
        arrival=arrival,  # type: ignore[arg-type]
        model=MemorylessModel(context_window=16_000),
        tools=workspace_tools,
        workspace=DEMO_WORKSPACE,
        root=tmp_path / "b",
    )
    # The messages before the request of step `at`: from the first user message up to the
    # `at`-th reply after it (this recording records no compaction of its own).
    messages = transcript.messages
    start = next(i for i, m in enumerate(messages) if isinstance(m, UserMessage))
    replies = [i for i, m in enumerate(messages) if i > start and isinstance(m, AssistantMessage)]
    before = messages[: replies[at]]
    how = _how(16_000, transcript.system, branch.agent.tool_schemas())
    first, offload, _ = await _first_request(branch)
    if arrival == "as_it_was":
        state = WorkingState(conversation=tuple(before[start:]))
    else:
        state = await _own_replay(before, config, how, offload["replay"])  # type: ignore[arg-type]
    expected = await prepare(state, config=config, **how, **offload["last"])  # type: ignore[arg-type]
    assert _conversation(first) == _conversation(expected.request)
