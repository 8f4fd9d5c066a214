"""A branch's files and tools, without a session: what `workspace_of` makes of what `fork` was
given (redo tools merged, a folder resolved, the agent's by default), a workspace always a new
folder (a filler's failure named), the calls redone on a copy and the notes on each that went
otherwise; tools remade over each run's folder, shared only when called safe, built by the
caller's function — each run's own, never the original's."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxlab.agent import Tool
from ctxlab.demo import prepare_workspace, workspace_tools
from ctxlab.exceptions import ForkError
from ctxlab.fork._tools import plan_tools
from ctxlab.fork._workspace import Workspace, redo_calls, workspace_of
from ctxlab.messages import AssistantMessage, ToolResultBlock, ToolUseBlock, UserMessage


def test_what_a_fork_is_given_for_its_files(tmp_path: Path) -> None:
    given = Workspace(prepare_workspace, ("edit_file",))
    assert workspace_of(given) is given
    # redo= adds to the Workspace's own, each once, in order.
    merged = workspace_of(given, ("run_tests", "edit_file"))
    assert merged == Workspace(prepare_workspace, ("edit_file", "run_tests"))
    folder = tmp_path / "project"
    folder.mkdir()
    assert workspace_of(str(tmp_path / "." / "project"), ["edit_file"]) == Workspace(
        folder.resolve(), ("edit_file",)
    )
    assert workspace_of(prepare_workspace) == Workspace(prepare_workspace, ())
    # None: the origin agent's workspace, or none at all.
    assert workspace_of(None, ["edit_file"], default=folder) == Workspace(folder, ("edit_file",))
    assert workspace_of(None) is None


def test_a_workspace_is_always_a_new_folder(tmp_path: Path) -> None:
    made = Workspace(prepare_workspace).make(tmp_path / "w")
    assert made == tmp_path / "w" and (made / "ledger").is_dir()
    copied = Workspace(made).make(tmp_path / "copy")
    assert sorted(p.relative_to(copied) for p in copied.rglob("*")) == sorted(
        p.relative_to(made) for p in made.rglob("*")
    )
    with pytest.raises(ForkError, match="exists already; a branch's workspace is always a new"):
        Workspace(made).make(tmp_path / "copy")

    def broken(folder: Path) -> None:
        raise PermissionError("read-only disk")

    with pytest.raises(
        ForkError, match="could not fill a branch's workspace with broken: PermissionError: read-"
    ):
        Workspace(broken).make(tmp_path / "other")


async def test_calls_redone_on_a_copy_and_the_notes_on_each(tmp_path: Path) -> None:
    folder = prepare_workspace(tmp_path / "w")
    tools = {t.name: t for t in workspace_tools(folder)}
    target = "ledger/totals.py"
    text = (folder / target).read_text()
    line = next(x for x in text.splitlines() if "/ 10" in x)
    edit = {"path": target, "old": line, "new": line.replace("/ 10", "/ 100")}
    agreed = await tools["edit_file"].run("a", edit)
    # Back to the start, then the session: the same edit (same result), an edit recorded with
    # another result, a listing not redone, a call of a tool the branch lacks, one unanswered.
    (folder / target).write_text(text)
    history = [
        UserMessage(content="Fix it."),
        AssistantMessage(
            content=(
                ToolUseBlock(id="a", name="edit_file", input=edit),
                ToolUseBlock(id="b", name="list_files", input={}),
            )
        ),
        UserMessage(
            content=(
                ToolResultBlock(tool_use_id="a", content=agreed.text),
                ToolResultBlock(tool_use_id="b", content="ledger/"),
            )
        ),
        AssistantMessage(
            content=(
                ToolUseBlock(id="c", name="edit_file", input=edit),
                ToolUseBlock(id="d", name="deploy", input={}),
            )
        ),
        UserMessage(content=(ToolResultBlock(tool_use_id="c", content="edited"),)),
        AssistantMessage(content=(ToolUseBlock(id="e", name="edit_file", input=edit),)),
    ]
    notes = await redo_calls(history, ("edit_file", "deploy"), tools)
    assert "/ 100" in (folder / target).read_text()  # the first edit was made again
    assert len(notes) == 3
    assert notes[0].startswith("redo: edit_file {") and notes[0].endswith(", recorded 'edited'")
    assert notes[1] == "redo: the branch has no tool 'deploy' to run d again"
    assert notes[2].endswith("recorded no result")
    assert await redo_calls(history, (), tools) == []  # nothing to redo: nothing run


async def test_each_runs_tools_are_its_own(tmp_path: Path) -> None:
    def lookup(word: str) -> str:
        """Look a word up.

        Args:
            word: The word.
        """
        return word

    origin = tmp_path / "origin"
    tools = [*workspace_tools(prepare_workspace(origin)), lookup]
    with pytest.raises(ForkError, match=r"tool 'lookup' cannot be isolated"):
        plan_tools(tools, ())
    plan = plan_tools(tools, ["lookup"])
    assert plan.needs_folder
    mine = prepare_workspace(tmp_path / "run-0")
    (mine / "mine.txt").write_text("only in the run's folder\n")
    built = plan.build(mine)
    listing = await next(t for t in built if isinstance(t, Tool) and t.name == "list_files").run(
        "x", {}
    )
    assert "mine.txt" in listing.text  # remade over the run's folder, not the origin's
    assert [t.name for t in built if isinstance(t, Tool)] == [
        "list_files",
        "read_file",
        "grep",
        "edit_file",
        "run_tests",
        "lookup",
    ]
    # Without a folder only the shared tools come: the others act on one.
    assert [t.name for t in plan.build(None) if isinstance(t, Tool)] == ["lookup"]
    assert plan_tools(tools, True).shared[0].name == "lookup"
    # A function building the tools for a folder is called with each run's folder.
    folders: list[Path] = []

    def factory(folder: Path) -> list[Tool]:
        folders.append(folder)
        return workspace_tools(folder)

    built_by = plan_tools(factory, ())
    assert built_by.needs_folder and built_by.factory is factory
    assert [t.name for t in built_by.build(mine)][:2] == ["list_files", "read_file"]
    assert folders == [mine]
    assert not plan_tools(None, ()).needs_folder and plan_tools(None, ()).build(mine) == []
    assert not plan_tools([lookup], True).needs_folder  # shared only: no folder needed
