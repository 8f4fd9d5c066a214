"""A branch reads what its context tells it to read: the offload hints in the state at a fork
(the origin's files *as it was*, the replay's *as if from the start*) name files in the run's
own workspace (by their path in it: the same in every run), which its ``read_file`` reads back whole — the origin's full results, checked
against the origin's durable history — whether the workspace is a copy of the origin's or the
demo project filled afresh. The origin is untouched."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ctxlab.demo import DEMO_WORKSPACE
from ctxlab.fork import Branch, BranchRun, fork, run_forward
from tests.fork.helpers import demo_session, file_hash, offload_hints, tree_hash
from tests.helpers import results_of

_EVICTED = re.compile(r"characters offloaded to '([^']+)'; read that file")


def _hints(run: BranchRun) -> dict[str, str]:
    """The path each truncated result of the run's state names, by tool call id."""
    assert run.agent is not None
    return offload_hints(run.agent.context.conversation)


async def _read_back(run: BranchRun, path: str) -> str:
    """What the run's own ``read_file`` shows of ``path``, its line numbers taken off."""
    assert run.agent is not None
    shown = await run.agent.tools["read_file"].run("read", {"path": path, "limit": 100_000})
    assert not shown.is_error, shown.text
    return "\n".join(line[7:] for line in shown.text.splitlines())


async def _followed(run: BranchRun, path: str, home: Path, hops: list[str]) -> str:
    """The text at the end of the hints from ``path``: a result over ``max_result_chars`` was
    evicted to one file, then its preview truncated into a second, which names the first."""
    # Named by its path in the run's workspace (the same in every run's), a file there.
    assert not Path(path).is_absolute() and (home / path).is_file(), path
    hops.append(path)
    text = await _read_back(run, path)
    inner = _EVICTED.search(text)
    return text if inner is None else await _followed(run, inner.group(1), home, hops)


@pytest.mark.parametrize("arrival", ["as_it_was", "from_start"])
@pytest.mark.parametrize("workspace", [None, DEMO_WORKSPACE], ids=["copied", "filled"])
async def test_the_branch_reads_the_files_its_hints_name(
    tmp_path: Path, arrival: str, workspace: object
) -> None:
    session = await demo_session(tmp_path, tool_result_limit=300)
    before = tree_hash(session.workspace), file_hash(session.log)
    originals = results_of(session.agent.history)
    branch: Branch = await fork(
        session.agent,
        at=-1,
        arrival=arrival,  # type: ignore[arg-type]
        workspace=workspace,
        root=tmp_path / "b",
    )
    hand = branch.untouched()
    assert hand is not None and hand.workspace is not None
    again = (await run_forward(branch, runs=2, prompt="Done?", max_steps=2)).runs[1]
    assert again.workspace is not None and again.workspace != hand.workspace
    for run, home in ((hand, hand.workspace), (again, again.workspace)):
        hints = _hints(run)
        assert len(hints) >= 2, hints  # the session offloaded its long results
        hops: list[str] = []
        for call, path in hints.items():
            assert (await _followed(run, path, home, hops)) == originals[call].rstrip("\n")
        assert len(hops) > len(hints)  # one file named another: followed there too
        assert not run.notes
    assert (tree_hash(session.workspace), file_hash(session.log)) == before


async def test_a_file_gone_from_the_origin_is_noted_and_its_hint_kept(tmp_path: Path) -> None:
    session = await demo_session(tmp_path, tool_result_limit=300)
    named = offload_hints(session.agent.context.conversation)
    assert len(named) >= 2
    lost = sorted(named)[0]
    gone = Path(named[lost])
    gone.unlink()
    # Forked at the end (the session as it is now): the state whose hints were read.
    end = len(session.sent)
    branch = await fork(session.agent, at=end, workspace=DEMO_WORKSPACE, root=tmp_path / "b")
    hand = branch.untouched()
    assert hand is not None and hand.workspace is not None
    # The hint of the file gone is as it was (there is nothing to copy); the others name the
    # copy by its path in the run's workspace.
    origin = str(session.workspace.resolve()) + "/"
    assert _hints(hand) == {
        call: path if call == lost else path.removeprefix(origin) for call, path in named.items()
    }
    assert all(path.startswith(origin) for path in named.values())
    assert [n for n in hand.notes if n.startswith("offload:")] == [
        f"offload: {gone} (named by the context at the fork) not copied: it is gone, or leads "
        "out of its folder"
    ]
    assert all((hand.workspace / p).is_file() for c, p in _hints(hand).items() if c != lost)
