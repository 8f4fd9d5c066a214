"""What a fork takes from its origin and where it puts its branches: a temporary folder of the
process's own without ``root=`` (one for every branch); a root inside a folder the branches copy
refused, whichever folder that is; a live agent forked only between its calls; from a recording,
its System text and name, and no session log unless asked."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest

from ctxlab import Transcript
from ctxlab.analysis import recorded_requests
from ctxlab.demo import DEMO_PROMPT, DEMO_WORKSPACE, demo_agent, prepare_workspace
from ctxlab.exceptions import ForkError
from ctxlab.fork import Branch, fork, run_forward
from ctxlab.messages import AssistantMessage
from ctxlab.models import MemorylessModel
from tests.fork.helpers import demo_session, tree_hash


async def _from_recording(
    recording: Transcript, tmp_path: Path, *, at: int = 2, **options: Any
) -> Branch:
    """``recording`` forked at ``at`` into ``tmp_path / "b"``, answered by a `MemorylessModel`
    (a recording brings no model of its own); ``options`` go to `fork`."""
    return await fork(recording, at=at, model=MemorylessModel(), root=tmp_path / "b", **options)


async def test_without_root_branches_go_to_one_temporary_folder(tmp_path: Path) -> None:
    session = await demo_session(tmp_path)
    # Names of this test's own: the process's folder may hold other tests' branches.
    mark = uuid.uuid4().hex[:8]
    one = await fork(session.agent, at=2, name=f"one-{mark}")
    two = await fork(session.agent, at=2, name=f"two-{mark}")
    assert one.folder.parent == two.folder.parent
    assert one.folder.parent.name.startswith("ctxlab-forks-")
    assert not one.folder.parent.is_relative_to(tmp_path)
    assert (one.folder.name, two.folder.name) == (f"one-{mark}", f"two-{mark}")


async def test_a_root_inside_the_folder_given_to_copy_is_refused(tmp_path: Path) -> None:
    session = await demo_session(tmp_path)
    project = prepare_workspace(tmp_path / "project")
    tree = tree_hash(project)
    with pytest.raises(ForkError, match="inside the workspace it copies"):
        await fork(session.agent, at=2, workspace=project, root=project / "branches")
    assert tree_hash(project) == tree and not (project / "branches").exists()
    # Control: beside it, the branch is made, a copy of that folder.
    branch = await fork(session.agent, at=2, workspace=project, root=tmp_path / "b")
    copy = branch.agent.workspace
    assert copy is not None
    # Besides the copy: the files the state's offload hints name, copied there (the run reads
    # what its context names), and nothing else.
    extra = {p.relative_to(copy) for p in copy.rglob("*") if p.is_file()} - {
        p.relative_to(project) for p in project.rglob("*") if p.is_file()
    }
    assert extra and all(p.parts[0] in ("context_offload", "large_tool_results") for p in extra)
    text = branch.agent.context.model_dump_json()
    # Named by their path in the copy (as every run names them), no more by the origin's.
    assert all(f"'{p.as_posix()}'" in text for p in extra)
    assert str(copy.resolve()) not in text and str(session.workspace.resolve()) not in text
    for added in extra:
        (copy / added).unlink()
    for folder in ("context_offload", "large_tool_results"):
        if (copy / folder).is_dir() and not any((copy / folder).iterdir()):
            (copy / folder).rmdir()
    assert tree_hash(copy) == tree
    assert branch.origin_folder == str(session.workspace.resolve())


async def test_a_running_agent_is_not_forked(tmp_path: Path) -> None:
    session = await demo_session(tmp_path)
    agent = session.agent
    call = asyncio.ensure_future(agent("Run the tests once more."))
    await asyncio.sleep(0)
    while not agent.running and not call.done():
        await asyncio.sleep(0)
    assert agent.running
    with pytest.raises(ForkError, match="fork the agent between calls: a call is running"):
        await fork(agent, at=2, root=tmp_path / "b")
    await call
    assert not (tmp_path / "b").exists()


async def test_a_recording_gives_its_system_text_and_name(tmp_path: Path) -> None:
    session = await demo_session(tmp_path)
    recording = session.agent.transcript()
    branch = await _from_recording(recording, tmp_path, workspace=DEMO_WORKSPACE)
    assert recording.name and recording.system
    assert branch.agent.system_prompt == recording.system
    assert branch.agent.name == recording.name
    assert branch.origin == recording.name
    assert not branch.session_log  # a recording keeps no log unless asked
    logged = await _from_recording(recording, tmp_path, session_log=True, name="logged")
    assert logged.session_log and (logged.folder / "run-0" / "session.sqlite").exists()


async def test_as_if_from_the_start_the_task_state_is_the_sessions_at_the_step(
    tmp_path: Path,
) -> None:
    # A replay has no task state of its own: the branch takes the session's at the step.
    agent = demo_agent(tmp_path / "origin", model=MemorylessModel())
    agent.tasks.set_mode("build", "PLAN.md")
    await agent(DEMO_PROMPT)
    for arrival in ("as_it_was", "from_start"):
        branch = await fork(agent, at=3, arrival=arrival, root=tmp_path / arrival)  # type: ignore[arg-type]
        assert branch.point.task == agent.tasks.state
        assert (branch.point.task.mode, branch.point.task.plan_path) == ("build", "PLAN.md")
        assert branch.agent.tasks.state.mode == "build"


async def test_a_recording_forked_at_its_end_holds_its_last_reply(tmp_path: Path) -> None:
    session = await demo_session(tmp_path)
    recording = session.agent.transcript()
    last = recording.messages[-1]
    assert isinstance(last, AssistantMessage) and not last.tool_uses  # the session's reply
    end = await _from_recording(recording, tmp_path, at=6)
    conversation = end.point.state.conversation
    assert conversation[-1] == last
    # The last request as recorded, then what followed it: the results and the reply.
    recorded = recorded_requests(recording)[-1]
    assert conversation == (*recorded.messages, *recording.messages[recorded.reply :])
    assert len(conversation) > len(recorded.messages)
    with pytest.raises(ForkError, match="forks where its session had replied"):
        await run_forward(end)


async def test_a_recordings_tools_are_isolated_or_called_safe(tmp_path: Path) -> None:
    session = await demo_session(tmp_path)
    recording = session.agent.transcript()

    def lookup(word: str) -> str:
        """Look a word up.

        Args:
            word: The word.
        """
        return word

    with pytest.raises(ForkError, match=r"tool 'lookup' cannot be isolated"):
        await _from_recording(recording, tmp_path, tools=[lookup])
    branch = await _from_recording(recording, tmp_path, tools=[lookup], safe_tools=["lookup"])
    assert list(branch.agent.tools) == ["lookup"]


async def test_a_live_agents_branch_says_where_it_came_from(tmp_path: Path) -> None:
    session = await demo_session(tmp_path)

    def lookup(word: str) -> str:
        """Look a word up.

        Args:
            word: The word.
        """
        return word

    branch = await fork(session.agent, at=-4, root=tmp_path / "b")
    assert (branch.at, branch.origin) == (2, session.agent.session_id)
    assert branch.before == session.sent[:2]  # the requests before it, as the session sent them
    assert branch.session_log  # the origin keeps a log: so does each run, unless told
    quiet = await fork(
        session.agent,
        at=2,
        tools=[lookup],
        safe_tools=["lookup"],
        session_log=False,
        name="quiet",
        root=tmp_path / "b",
    )
    assert not quiet.session_log and not (quiet.folder / "run-0" / "session.sqlite").exists()
    assert list(quiet.agent.tools) == ["lookup"]  # the tools given, not the origin's
