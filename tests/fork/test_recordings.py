"""Forks of recordings: the demo session saved to a file and forked back (its project rebuilt at
the fork by redoing its edits), and a recording with its own compaction forked *as it was* after
it — the branch starts from the summary, as the recorded agent's requests did."""

from __future__ import annotations

from pathlib import Path

import ctxlab
from ctxlab.analysis import recorded_requests
from ctxlab.demo import DEMO_WORKSPACE, demo_config, task_done, workspace_tools
from ctxlab.fork import fork, run_forward
from ctxlab.models import MemorylessModel
from tests.fork.helpers import demo_session, file_hash, project_tests_pass

FIXTURE = Path(__file__).parents[1] / "fixtures" / "sessions" / "claude_code_session.jsonl"


async def test_a_saved_demo_session_forks_and_finishes_from_its_file(tmp_path: Path) -> None:
    session = await demo_session(tmp_path)
    saved = session.agent.transcript().save(tmp_path / "demo.jsonl")
    before = file_hash(saved)
    branches = [
        await fork(
            saved,
            at=at,
            name=f"{name}@{at}",
            config=config,
            arrival=arrival,  # type: ignore[arg-type]
            model=MemorylessModel(),
            tools=workspace_tools,
            workspace=DEMO_WORKSPACE,
            root=tmp_path / "b",
        )
        for at in (2, 4)  # before and after the session's edit
        for name, config in (("same", demo_config()), ("cut", demo_config(tool_result_limit=300)))
        for arrival in ("as_it_was", "from_start")
        if arrival == "as_it_was" or name == "cut"
    ]
    # After the edit, the redone edit_file call brought each copy to the fixed project.
    after_edit = [b for b in branches if b.at == 4]
    assert all(project_tests_pass(b.agent.workspace) for b in after_edit)  # type: ignore[arg-type]
    # Each redone call gave what the session had recorded (else a note says how it differed).
    assert all(run.notes == [] for b in branches if (run := b.untouched()) is not None)
    outcomes = await run_forward(branches, check=task_done, max_steps=10)
    frame = outcomes.frame().set_index("branch")
    assert frame["passed"].all()
    assert frame.loc["same@2", "steps"] == 4 and frame.loc["cut@2", "steps"] == 5
    assert file_hash(saved) == before


async def test_a_recording_forked_after_its_own_compaction_starts_from_its_summary(
    tmp_path: Path,
) -> None:
    transcript = ctxlab.load(FIXTURE)
    requests = recorded_requests(transcript)
    at = next(r.number for r in requests if r.compaction is not None)
    branch = await fork(
        FIXTURE, at=at, model=MemorylessModel(context_window=200_000), root=tmp_path / "b"
    )
    summary = requests[at].messages[0]
    assert branch.point.state.conversation[0] == summary  # the summary opens it
    assert len(branch.point.state.conversation) < at * 2  # not the conversation before it
    assert len(branch.point.manifests) == at  # the requests before it, as recorded
    outcomes = await run_forward(branch, max_steps=3)
    (run,) = outcomes.runs
    first = run.requests[0]
    assert first is not None and first.messages[0] == summary


async def test_a_redone_call_that_gives_another_result_is_noted(tmp_path: Path) -> None:
    # The session's workspace as it is now holds the fix: redoing the edit there fails.
    session = await demo_session(tmp_path)
    branch = await fork(session.agent, at=4, redo=["edit_file"], root=tmp_path / "b")
    run = branch.untouched()
    assert run is not None and len(run.notes) == 1
    assert run.notes[0].startswith("redo: edit_file ")
    assert "occurs 0 times" in run.notes[0] and "recorded 'edited ledger/totals.py" in run.notes[0]
    outcomes = await run_forward(branch, max_steps=3)
    assert outcomes.frame()["notes"][0] == run.notes[0]
