"""A fork never touches its origin: after forking the demo session and held-out recordings at
several steps under several configs, both arrivals, and running every branch forward (each run
editing its own copy of the project), the original session's workspace tree and log file hash
as before, byte for byte, and the live agent's state, history and manifests are as they were."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from ctxlab import ContextConfig
from ctxlab.demo import DEMO_WORKSPACE, demo_config, workspace_tools
from ctxlab.fork import Branch, fork, run_forward
from ctxlab.io._transcript import corpus_dir
from ctxlab.models import DemoModel, MemorylessModel
from tests.conftest import requires_corpus
from tests.fork.helpers import (
    check_tests,
    demo_session,
    file_hash,
    project_tests_pass,
    tree_hash,
)

CONFIGS: dict[str, object] = {
    "original": None,
    "cut": demo_config(tool_result_limit=300),
    "masking": ContextConfig.preset("observation_masking").merge(tool_result_limit=1500),
    "eager": demo_config(trigger_ratio=0.5),
}


def _log_files(log: Path) -> dict[str, str]:
    # SQLite in WAL mode: the log is its file and, while open, its write-ahead file.
    return {p.name: file_hash(p) for p in log.parent.glob(log.name + "*")}


async def _grid(
    origin: Any,
    steps: tuple[int, ...],
    configs: Mapping[str, object],
    arrival: str,
    root: Path,
    workspace: Callable[[int], object],
    **options: Any,
) -> list[Branch]:
    """A branch of ``origin`` at each of ``steps`` under each of ``configs`` (named
    ``config@step``), arriving by ``arrival``, in ``workspace(step)``; ``options`` go to each
    `fork`."""
    return [
        await fork(
            origin,
            at=at,
            config=config,  # type: ignore[arg-type]
            name=f"{name}@{at}",
            arrival=arrival,  # type: ignore[arg-type]
            workspace=workspace(at),
            root=root,
            **options,
        )
        for at in steps
        for name, config in configs.items()
    ]


@pytest.mark.parametrize("arrival", ["as_it_was", "from_start"])
async def test_forking_the_demo_and_running_every_branch_leaves_it_byte_for_byte(
    tmp_path: Path, arrival: str
) -> None:
    session = await demo_session(tmp_path)
    agent = session.agent
    tree, log = tree_hash(session.workspace), _log_files(session.log)
    state, history, task = agent.context, agent.history, agent.tasks.state
    manifests = [m.to_dict() for m in agent.manifests]
    # At 0 the default workspace (a copy of it as it is now); else the project as it was, with
    # the session's edits before the fork made again.
    branches = await _grid(
        agent,
        (0, 2, 4),
        CONFIGS,
        arrival,
        tmp_path / "branches",
        workspace=lambda at: None if at == 0 else DEMO_WORKSPACE,
    )
    outcomes = await run_forward(branches, check=check_tests, max_steps=10)
    frame = outcomes.frame()
    assert len(frame) == 12 and frame["steps"].min() >= 1
    # The runs did act on their own copies: some fixed the project there.
    edited = [r.workspace for r in outcomes.runs if r.passed]
    assert edited and all(w is not None and w.is_relative_to(tmp_path / "branches") for w in edited)
    assert len({str(r.workspace) for r in outcomes.runs}) == 12
    assert tree_hash(session.workspace) == tree
    assert _log_files(session.log) == log
    assert agent.context is state and agent.history == history and agent.tasks.state == task
    assert [m.to_dict() for m in agent.manifests] == manifests


async def test_branches_of_a_session_stopped_before_its_fix_fix_their_copies_only(
    tmp_path: Path,
) -> None:
    # Three steps: the tests, the search, the read — then stopped, its project still broken.
    from ctxlab.demo import DEMO_PROMPT, demo_agent
    from ctxlab.exceptions import MaxStepsExceeded

    agent = demo_agent(tmp_path / "origin", model=MemorylessModel(), max_steps=3)
    with pytest.raises(MaxStepsExceeded):
        await agent(DEMO_PROMPT)
    tree = tree_hash(tmp_path / "origin")
    branches = [
        await fork(agent, at=3, config=config, name=name, root=tmp_path / "b")  # type: ignore[arg-type]
        for name, config in CONFIGS.items()
    ]
    outcomes = await run_forward(branches, runs=2, check=check_tests, max_steps=8)
    assert sum(r.passed is True for r in outcomes.runs) >= 4  # the branches fixed their copies
    assert tree_hash(tmp_path / "origin") == tree  # and the original stayed broken
    assert not project_tests_pass(tmp_path / "origin")


async def test_a_fork_of_a_demo_model_session_copies_its_model_and_leaves_its_files(
    tmp_path: Path,
) -> None:
    # The tour's session: DemoModel keeps a plan of its own; each run gets a new one.
    from ctxlab.demo import DEMO_PROMPT, demo_agent

    agent = demo_agent(tmp_path / "origin", model=DemoModel())
    await agent(DEMO_PROMPT)
    tree = tree_hash(tmp_path / "origin")
    branch = await fork(agent, at=3, config=demo_config(tool_result_limit=400), root=tmp_path / "b")
    assert branch.agent.model is not agent.model
    outcomes = await run_forward(branch, runs=2, max_steps=20)
    assert all(r.agent is not None and r.agent.model is not agent.model for r in outcomes.runs)
    assert tree_hash(tmp_path / "origin") == tree


@requires_corpus
@pytest.mark.parametrize(
    "name",
    [
        "swe_agent__ctf_rev__rock.jsonl",
        "tau_bench__gpt-4o-airline_task9_trial0.jsonl",
        "claude_code__fa812bfe_agent-a93ccab.jsonl",
    ],
)
@pytest.mark.parametrize("arrival", ["as_it_was", "from_start"])
async def test_forking_a_held_out_recording_leaves_the_file_and_the_named_folder(
    tmp_path: Path, name: str, arrival: str
) -> None:
    recording = corpus_dir() / "norm" / name
    folder = tmp_path / "project"
    DEMO_WORKSPACE.make(folder)  # a folder the user names, copied for each run
    before = (file_hash(recording), tree_hash(folder))
    branches = await _grid(
        recording,
        (1, 3),
        {"defaults": None, "masking": "observation_masking"},
        arrival,
        tmp_path / "branches",
        workspace=lambda _: folder,
        model=lambda: MemorylessModel(context_window=32_000),  # a new model for each branch
        tools=workspace_tools,
    )
    outcomes = await run_forward(branches, check=check_tests, max_steps=8, concurrency=2)
    assert len(outcomes.runs) == 4
    assert all(row.steps >= 1 for row in outcomes.frame().itertuples())
    assert all(r.agent is not None and r.agent.workspace != folder for r in outcomes.runs)
    assert (file_hash(recording), tree_hash(folder)) == before
