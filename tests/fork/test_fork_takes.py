"""What a fork takes from its origin and where it puts its branches: a temporary folder of the
process's own without ``root=`` (one for every branch); a root inside a folder the branches copy
refused, whichever folder that is; a live agent forked only between its calls; from a recording,
its System text and name, and no session log unless asked."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ctxlab.demo import DEMO_WORKSPACE, prepare_workspace
from ctxlab.exceptions import ForkError
from ctxlab.fork import fork
from ctxlab.models import MemorylessModel
from tests.fork.helpers import demo_session, tree_hash


async def test_without_root_branches_go_to_one_temporary_folder(tmp_path: Path) -> None:
    session = await demo_session(tmp_path)
    one = await fork(session.agent, at=2, name="one")
    two = await fork(session.agent, at=2, name="two")
    assert one.folder.parent == two.folder.parent
    assert one.folder.parent.name.startswith("ctxlab-forks-")
    assert not one.folder.parent.is_relative_to(tmp_path)
    assert (one.folder.name, two.folder.name) == ("one", "two")


async def test_a_root_inside_the_folder_given_to_copy_is_refused(tmp_path: Path) -> None:
    session = await demo_session(tmp_path)
    project = prepare_workspace(tmp_path / "project")
    tree = tree_hash(project)
    with pytest.raises(ForkError, match="inside the workspace it copies"):
        await fork(session.agent, at=2, workspace=project, root=project / "branches")
    assert tree_hash(project) == tree and not (project / "branches").exists()
    # Control: beside it, the branch is made, a copy of that folder.
    branch = await fork(session.agent, at=2, workspace=project, root=tmp_path / "b")
    assert tree_hash(branch.agent.workspace) == tree  # type: ignore[arg-type]
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
    branch = await fork(
        recording, at=2, model=MemorylessModel(), workspace=DEMO_WORKSPACE, root=tmp_path / "b"
    )
    assert recording.name and recording.system
    assert branch.agent.system_prompt == recording.system
    assert branch.agent.name == recording.name
    assert branch.origin == recording.name
    assert not branch.session_log  # a recording keeps no log unless asked
    logged = await fork(
        recording,
        at=2,
        model=MemorylessModel(),
        session_log=True,
        name="logged",
        root=tmp_path / "b",
    )
    assert logged.session_log and (logged.folder / "run-0" / "session.sqlite").exists()
