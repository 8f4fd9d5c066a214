"""Bad input to a fork: a step that does not exist, a config that fails validation or leaves
no room, a tool that cannot be isolated, a branch whose model errs — each a clear `ForkError`
naming what to change, or a row with its error while the other branches finish; the original
untouched in every case."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from ctxlab import ContextConfig
from ctxlab.agent import Agent
from ctxlab.demo import DEMO_PROMPT, DEMO_WORKSPACE, demo_agent, prepare_workspace
from ctxlab.exceptions import ForkError, ModelError, RateLimitError
from ctxlab.fork import Workspace, fork, run_forward
from ctxlab.models import FunctionModel, MemorylessModel
from tests.fork.helpers import Session, check_tests, demo_session, file_hash, tree_hash


def _untouched(session: Session) -> tuple[str, str, object]:
    return tree_hash(session.workspace), file_hash(session.log), session.agent.context


@pytest.mark.parametrize("at", [6, 7, -7, 100])
async def test_a_step_the_session_never_made(tmp_path: Path, at: int) -> None:
    session = await demo_session(tmp_path)
    before = _untouched(session)
    with pytest.raises(
        ForkError, match=r"no step .*: this session has steps 0 to 5 \(or 6, the end"
    ):
        await fork(session.agent, at=at + (1 if at == 6 else 0), root=tmp_path / "b")
    assert _untouched(session) == before
    assert not (tmp_path / "b").exists() or not any((tmp_path / "b").iterdir())


@pytest.mark.parametrize(
    ("config", "says"),
    [
        ({"trigger_ratio": 2.0}, "trigger_ratio"),
        ({"context_buffer_ratio": 0.9, "trigger_ratio": 0.5}, "context_buffer_ratio"),
        ({"tool_result_limit": -5}, "tool_result_limit"),
        ("no_such_preset", "no preset 'no_such_preset'"),
        (42, "must be a ContextConfig"),
    ],
)
async def test_a_config_that_fails_validation(tmp_path: Path, config: object, says: str) -> None:
    session = await demo_session(tmp_path)
    before = _untouched(session)
    with pytest.raises(ForkError, match="the branch's config is not valid") as caught:
        await fork(session.agent, at=2, config=config, root=tmp_path / "b")  # type: ignore[arg-type]
    assert says in str(caught.value)
    assert _untouched(session) == before


async def test_a_config_that_leaves_the_model_no_room(tmp_path: Path) -> None:
    session = await demo_session(tmp_path)
    tight = ContextConfig.model_validate({"budget": {"output_reservation": 8_000}})
    with pytest.raises(ForkError, match="no room for input"):
        await fork(session.agent, at=2, config=tight, root=tmp_path / "b")
    assert not any((tmp_path / "b").iterdir())  # its folder was cleaned up


async def test_a_config_the_session_cannot_be_replayed_under(tmp_path: Path) -> None:
    # System and tool schemas alone are over 600 tokens: no request fits this cap.
    session = await demo_session(tmp_path)
    before = _untouched(session)
    capped = ContextConfig.model_validate({"budget": {"max_input_tokens": 600}})
    with pytest.raises(ForkError, match=r"cannot arrive as if from the start: replaying"):
        await fork(session.agent, at=3, config=capped, arrival="from_start", root=tmp_path / "b")
    assert not any((tmp_path / "b").iterdir())  # its folder was cleaned up
    # Forked as it was, the branch is made; its first request fails: a row with the error.
    branch = await fork(session.agent, at=3, config=capped, root=tmp_path / "c")
    (row,) = (await run_forward(branch)).frame().to_dict("records")
    assert row["error"].startswith("ContextBudgetExceeded:") and row["steps"] == 1
    assert _untouched(session) == before


async def test_a_tool_that_cannot_be_isolated_is_refused_unless_called_safe(
    tmp_path: Path,
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("kept\n")

    def note(text: str) -> str:
        """Append a line to the team's notes.

        Args:
            text: The line.
        """
        with notes.open("a") as file:
            file.write(text + "\n")
        return "noted"

    agent = demo_agent(tmp_path / "origin", model=MemorylessModel())
    agent.add_tool(note)
    await agent(DEMO_PROMPT)
    with pytest.raises(ForkError, match=r"tool 'note' cannot be isolated .* safe_tools"):
        await fork(agent, at=2, root=tmp_path / "b")
    branch = await fork(agent, at=2, safe_tools=["note"], root=tmp_path / "b")
    assert "note" in branch.agent.tools  # shared, as the user said it may be
    # The workspace tools are remade over the branch's copy: none is the original's (each
    # tool of a run runs in its folder: the shared one is the original inside it).
    originals = {id(t) for t in agent.tools.values()}
    assert [
        n for n, t in branch.agent.tools.items() if id(getattr(t, "inner", t)) in originals
    ] == ["note"]
    # safe_tools=True: every tool that cannot be remade is shared (the workspace's still remade).
    every = await fork(agent, at=2, safe_tools=True, root=tmp_path / "b")
    assert [n for n, t in every.agent.tools.items() if id(getattr(t, "inner", t)) in originals] == [
        "note"
    ]
    assert set(every.agent.tools) == set(agent.tools)


async def test_a_branch_whose_model_errs_is_a_row_and_the_others_finish(tmp_path: Path) -> None:
    session = await demo_session(tmp_path)
    before = _untouched(session)

    def failing(request: object, info: object) -> str:
        raise RateLimitError("rate-limited by the provider (429): wait and retry")

    good = await fork(session.agent, at=2, name="good", workspace=DEMO_WORKSPACE, root=tmp_path)
    bad = await fork(
        session.agent,
        at=2,
        name="bad",
        model=lambda: FunctionModel(failing, context_window=8_000),
        workspace=DEMO_WORKSPACE,
        root=tmp_path,
    )
    outcomes = await run_forward([bad, good], runs=2, check=check_tests)
    frame = outcomes.frame().set_index(["branch", "run"])
    assert (
        list(frame.loc["bad", "error"])
        == ["RateLimitError: rate-limited by the provider (429): wait and retry"] * 2
    )
    assert list(frame.loc["bad", "passed"]) == [False, False]  # checked all the same
    assert list(frame.loc["good", "passed"]) == [True, True]
    assert frame.loc["good", "error"].isna().all()
    assert _untouched(session) == before
    assert issubclass(RateLimitError, ModelError)


async def test_a_run_whose_workspace_cannot_be_made_is_a_row(tmp_path: Path) -> None:
    session = await demo_session(tmp_path)
    calls: list[Path] = []

    def fill(folder: Path) -> None:
        calls.append(folder)
        if len(calls) > 1:  # run 0 (made by fork) works; the next run's folder does not
            msg = "disk full"
            raise OSError(msg)
        prepare_workspace(folder)

    branch = await fork(session.agent, at=2, workspace=Workspace(fill), root=tmp_path / "b")
    outcomes = await run_forward(branch, runs=2)
    first, second = outcomes.frame().to_dict("records")
    assert pd.isna(first["error"]) and first["steps"] == 4
    assert (first["run"], second["run"]) == (0, 1)  # the run that could not be made, numbered
    assert second["error"] == (
        "ForkError: could not fill a branch's workspace with fill: OSError: disk full"
    )


async def test_a_root_inside_the_workspace_it_copies(tmp_path: Path) -> None:
    session = await demo_session(tmp_path)
    before = _untouched(session)
    for workspace in (None, DEMO_WORKSPACE):  # copied, or filled afresh
        with pytest.raises(ForkError, match="inside the workspace it copies"):
            await fork(
                session.agent, at=2, workspace=workspace, root=session.workspace / "branches"
            )
    assert _untouched(session) == before  # not even an empty folder was made there


async def test_a_recording_needs_a_model(tmp_path: Path) -> None:
    session = await demo_session(tmp_path)
    with pytest.raises(ForkError, match="a recording has no model"):
        await fork(session.agent.transcript(), at=2, root=tmp_path / "b")


async def test_run_forward_arguments(tmp_path: Path) -> None:
    session = await demo_session(tmp_path)
    one = await fork(session.agent, at=2, name="same", root=tmp_path / "b")
    two = await fork(session.agent, at=3, name="same", root=tmp_path / "c")
    end = await fork(session.agent, at=6, name="end", root=tmp_path / "d")
    with pytest.raises(ForkError, match="names must differ"):
        await run_forward([one, two])
    with pytest.raises(ForkError, match="runs must be a whole number from 1"):
        await run_forward(one, runs=0)
    with pytest.raises(ForkError, match="reference 'nope' is none of the branches"):
        await run_forward(one, reference="nope")
    with pytest.raises(ForkError, match="forks where its session had replied"):
        await run_forward(end)
    with pytest.raises(ForkError, match=r"made by ctxlab\.fork"):
        await run_forward([session.agent])  # type: ignore[list-item]
    # At the end, with a prompt, the branch goes on: a new call of its own.
    done = await run_forward(end, prompt="Run the tests once more.", max_steps=4)
    assert done.runs[0].reply is not None
    assert isinstance(session.agent, Agent)
