"""What a live agent keeps to fork at any of its steps (`fork_point`), checked against an
independent record of the same session: its SQLite session log, read here with plain
``sqlite3`` (each step is one committed turn, whose checkpoint is the state the next step was
prepared from)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from ctxlab import SessionLog, WorkingState
from ctxlab.agent import Agent, fork_point
from ctxlab.demo import demo_agent
from ctxlab.exceptions import ForkError
from ctxlab.messages import parse_messages
from ctxlab.models import MemorylessModel
from tests.fork.helpers import demo_session


async def _session(tmp_path: Path, **config: object) -> tuple[Agent, Path, list[object]]:
    session = await demo_session(tmp_path, **config)
    return session.agent, session.log, list(session.sent)


def _logged(log: Path) -> tuple[dict[int, WorkingState], dict[int, list[object]], dict[int, int]]:
    """Per turn: the checkpointed state, the messages logged up to it, the context_build
    events logged up to it (read straight from the tables)."""
    db = sqlite3.connect(log)
    try:
        states = {
            turn: WorkingState.model_validate_json(state)
            for turn, state in db.execute("SELECT turn, state FROM checkpoints ORDER BY turn")
        }
        rows = db.execute("SELECT turn, kind, payload FROM events ORDER BY seq").fetchall()
    finally:
        db.close()
    messages: dict[int, list[object]] = {}
    builds: dict[int, int] = {}
    for turn in states:
        messages[turn] = parse_messages(
            json.loads(p) for t, k, p in rows if k == "message" and t <= turn
        )
        builds[turn] = sum(1 for t, k, _ in rows if k == "context_build" and t <= turn)
    return states, messages, builds


async def test_each_step_forks_from_the_state_the_log_checkpointed_before_it(
    tmp_path: Path,
) -> None:
    # A window small enough that the session compacts: a step after a summary is covered too.
    agent, log, sent = await _session(tmp_path, trigger_ratio=0.6)
    states, messages, builds = _logged(log)
    steps = [m for m in agent.manifests if m.purpose in ("reasoning", "recovery")]
    assert len(steps) == 6
    assert any(s.summary is not None for s in states.values())  # a compaction happened
    for step in range(len(steps)):
        point = fork_point(agent, step)
        turn = step + 1  # turn 1 committed the prompt; step k was prepared in turn k + 2
        assert point.step == step
        assert point.state == states[turn]
        assert list(point.history) == messages[turn]
        assert len(point.manifests) == builds[turn]
        assert point.request is sent[step]  # the request the session sent at that step


async def test_the_end_is_the_session_as_it_is_now(tmp_path: Path) -> None:
    agent, _, _ = await _session(tmp_path)
    count = sum(m.purpose == "reasoning" for m in agent.manifests)
    end = fork_point(agent, count)
    assert end.state is agent.context
    assert end.history == agent.history
    assert end.manifests == tuple(agent.manifests)
    assert end.request is None
    assert fork_point(agent, -1).step == count - 1


@pytest.mark.parametrize("step", [7, 100, -8, True, "2", 1.0])
async def test_a_step_the_session_never_made_is_a_clear_error(tmp_path: Path, step: object) -> None:
    agent, _, _ = await _session(tmp_path)
    with pytest.raises(ForkError, match=r"no step|request number"):
        fork_point(agent, step)  # type: ignore[arg-type]


async def test_a_step_made_before_a_resume_names_the_recording_way(tmp_path: Path) -> None:
    _, log, _ = await _session(tmp_path)
    resumed = demo_agent(
        tmp_path / "ws2",
        model=MemorylessModel(),
        session_log=SessionLog(log),
        session_id=_only_session(log),
    )
    assert resumed.manifests  # read back from the log
    with pytest.raises(ForkError, match=r"fork\(agent.transcript\(\), at=2"):
        fork_point(resumed, 2)


def _only_session(log: Path) -> str:
    db = sqlite3.connect(log)
    try:
        ((session,),) = db.execute("SELECT session_id FROM sessions").fetchall()
    finally:
        db.close()
    return str(session)
