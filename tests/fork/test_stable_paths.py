"""What a run's model is shown does not depend on the run's folder: two runs of a deterministic
model — runs 1 and 10 of a branch, branches of names of other lengths under roots of other
lengths — send the same requests (equal input tokens, equal dollars), their offload hints and
tool results naming files by their path in the run's workspace. And a relative path resolves
in the run's own workspace, never the origin's, even for a user's tool that opens it with plain
``open()`` while the process works in the origin's folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxlab.agent import Tool
from ctxlab.analysis import price_for
from ctxlab.demo import DEMO_WORKSPACE, demo_config, workspace_tools
from ctxlab.fork import Outcomes, fork, run_forward
from ctxlab.fork._forward import forward
from ctxlab.models import ScriptedModel, tool_call
from ctxlab.pipeline import TRUNCATION_MARKER
from tests.fork.helpers import demo_session, offload_hints, tree_hash
from tests.helpers import results_of

SONNET = price_for("claude-sonnet-4-6")
ROOTS = ("b", "a-much-longer-folder-name-for-these-branches/and/deeper")
NAMES = ("x", "a-branch-with-a-name-of-many-more-characters")


def _shown(requests: list[object]) -> str:
    return "".join(m.model_dump_json() for r in requests if r for m in r.messages)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("arrival", "limit", "at"),
    [("as_it_was", 250, 3), ("from_start", 250, 3), ("as_it_was", 4000, 0)],
)
async def test_two_runs_of_a_deterministic_model_cost_the_same(
    tmp_path: Path, arrival: str, limit: int, at: int
) -> None:
    session = await demo_session(tmp_path / "s")
    config = demo_config(tool_result_limit=limit)
    frames = []
    for root, name in zip(ROOTS, NAMES, strict=True):
        branch = await fork(
            session.agent,
            at=at,
            name=name,
            config=config,
            arrival=arrival,  # type: ignore[arg-type]
            workspace=DEMO_WORKSPACE,
            root=tmp_path / root,
        )
        # Runs 1 and 10: folder names that tokenize differently.
        runs = [await forward(await branch.spawn(n), None, 6, None) for n in (1, 10)]
        outcomes = Outcomes(runs, branch.name, price=SONNET)
        frames.append(outcomes.frame())
        for run in outcomes.runs:
            text = _shown(run.requests)
            # No folder of the run's (nor the origin's, whose files it copied): paths in its
            # workspace.
            assert str(branch.folder) not in text and str(tmp_path) not in text
            if limit < 1000:  # the grid offloads: its hints are shown
                assert TRUNCATION_MARKER in text
                assert "'context_offload/tool_result-" in text
            else:  # the run's own failing tests' output, whole: its traceback names files
                assert 'File \\"tests/test_report.py\\", line 15, in test_discount_row' in text
    tokens = [t for f in frames for t in f["tokens"]]
    costs = [c for f in frames for c in f["cost"]]
    assert len(tokens) == 4 and len(set(tokens)) == 1 and tokens[0] > 0, tokens
    assert len(set(costs)) == 1 and costs[0] > 0, costs


def _plain_tools(opened: list[str]) -> object:
    """The demo's tools, and two of the user's that open the path they are given themselves."""

    def tools(folder: Path) -> list[Tool]:
        def peek(path: str) -> str:
            """Read a file."""
            opened.append(path)
            with open(path, encoding="utf-8") as file:
                return file.read()

        def note(path: str, text: str) -> str:
            """Write a file."""
            opened.append(path)
            with open(path, "w", encoding="utf-8") as file:
                file.write(text)
            return "written"

        return [*workspace_tools(folder), Tool.from_function(peek), Tool.from_function(note)]

    return tools


async def test_a_plain_open_of_a_relative_path_stays_in_the_runs_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = await demo_session(tmp_path / "s", tool_result_limit=300)
    origin = session.workspace.resolve()
    hints = offload_hints(session.agent.context.conversation)
    assert all(h.startswith(f"{origin}/") for h in hints.values())  # the origin's own files
    # A file whose text names the origin's folder (a tool's own "offloaded to <path>" note) is
    # shown to the run with its workspace's paths, so it cannot equal the origin's bytes: take
    # one that names none. The call ids are random, so "the first in order" was one of either
    # kind by chance (CI failed on it once).
    names = sorted(h.removeprefix(f"{origin}/") for h in hints.values())
    texts = {name: (origin / name).read_text(encoding="utf-8") for name in names}
    relative = next(name for name in names if str(origin) not in texts[name])
    offloaded = texts[relative]
    opened: list[str] = []
    model = ScriptedModel(
        [
            [
                tool_call("peek", {"path": relative}),
                tool_call("note", {"path": "notes.txt", "text": "mine"}),
                tool_call("note", {"path": relative, "text": "overwritten"}),
            ],
            "Done.",
        ]
    )
    branch = await fork(
        session.agent,
        at=len(session.sent),
        model=model,
        tools=_plain_tools(opened),
        root=tmp_path / "b",
    )
    # The notebook works in the origin's project; the origin's file now reads otherwise, so
    # that reading it instead of the run's copy shows.
    monkeypatch.chdir(origin)
    (origin / relative).write_text("the origin's file", encoding="utf-8")
    before = tree_hash(origin)
    (run,) = (await run_forward(branch, runs=1, prompt="Read it.", max_steps=3)).runs
    assert run.workspace is not None and run.reply == "Done.", run.error
    assert opened == [relative, "notes.txt", relative]
    # The hint the run was shown names the path the tool opened, relative to its workspace.
    assert f"'{relative}'" in _shown(run.requests)
    assert run.agent is not None
    ask = run.agent.history[-3]  # the scripted calls; their results; the final reply
    assert [u.name for u in ask.tool_uses] == ["peek", "note", "note"]  # type: ignore[union-attr]
    results = results_of(run.agent.history)
    assert [results[u.id] for u in ask.tool_uses] == [offloaded, "written", "written"]  # type: ignore[union-attr]
    assert (run.workspace / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert (run.workspace / relative).read_text(encoding="utf-8") == "overwritten"
    assert tree_hash(origin) == before and not (origin / "notes.txt").exists()
    assert Path.cwd() == origin  # the working folder set back after each tool
