"""Where a fork's folders go and what it is given to build a branch with, refused by a
`ForkError` that names the argument and what to pass instead (docs/errors.md: nothing else
escapes a public entry point): a root that is a file or lies under one, a read-only root, a
root or name too long for the file system, a name or root of another type, tools, safe tools
or tools to redo of another kind, a tools or model function that fails. Nothing is made, and
the origin is untouched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxlab.demo import workspace_tools
from ctxlab.exceptions import ForkError
from ctxlab.fork import MAX_NAME, fork, run_forward
from ctxlab.models import MemorylessModel
from tests.fork.helpers import Session, demo_session, file_hash, tree_hash


def _untouched(session: Session) -> tuple[str, str]:
    return tree_hash(session.workspace), file_hash(session.log)


def _entries(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*")) if folder.is_dir() else []


async def test_a_root_that_is_a_file_or_under_one(tmp_path: Path) -> None:
    session = await demo_session(tmp_path / "s")
    before = _untouched(session)
    afile = tmp_path / "notes.txt"
    afile.write_text("mine\n")
    with pytest.raises(
        ForkError, match=r"^root '.*notes\.txt' is a file, not a folder: pass root= a folder"
    ):
        await fork(session.agent, at=2, root=afile)
    with pytest.raises(
        ForkError,
        match=r"^could not make a branch's folder under '.*notes\.txt/branches': a part of its "
        r"path is a file, not a folder: pass root= a folder$",
    ):
        await fork(session.agent, at=2, root=afile / "branches")
    assert afile.read_text() == "mine\n"
    assert _untouched(session) == before


@pytest.mark.skipif(
    os.geteuid() == 0,
    reason="running as root: chmod does not stop root from writing, so no folder is read-only",
)
async def test_a_read_only_root(tmp_path: Path) -> None:
    session = await demo_session(tmp_path / "s")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        for root in (locked, locked / "branches"):
            with pytest.raises(
                ForkError,
                match=r"^could not make a branch's folder under '.*locked.*': permission denied "
                r"\(a read-only folder\?\): pass root= a folder you can write to$",
            ):
                await fork(session.agent, at=2, root=root)
        assert _entries(locked) == []
    finally:
        locked.chmod(0o755)
    # Control: writable again, the same root takes the branch.
    assert (await fork(session.agent, at=2, root=locked)).folder.parent == locked


async def test_a_name_or_root_too_long(tmp_path: Path) -> None:
    session = await demo_session(tmp_path / "s")
    before = _untouched(session)
    with pytest.raises(
        ForkError,
        match=rf"^name is 600 characters long: a branch's name labels its rows and names its "
        rf"folder; give one of at most {MAX_NAME}$",
    ):
        await fork(session.agent, at=2, name="n" * 600, root=tmp_path / "b")
    assert _entries(tmp_path / "b") == []
    with pytest.raises(ForkError, match=r"the path is too long for the file system: pass root="):
        await fork(session.agent, at=2, root=tmp_path / ("d" * 300))
    # At the limit, of characters of two bytes each: the name is whole, its folder cut to fit
    # (200 bytes would be taken too; 300 would not), and a second is numbered beside it.
    long = "é" * MAX_NAME
    one = await fork(session.agent, at=2, name=long, root=tmp_path / "b")
    two = await fork(session.agent, at=2, name=long, root=tmp_path / "b")
    assert (one.name, two.name) == (long, f"{long}-2")
    assert one.folder.name == "é" * 50 and two.folder.name == "é" * 50 + "-2"
    assert _untouched(session) == before


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        (
            {"tools": 42},
            r"tools must be a function building the branch's tools over the folder it is given, "
            r"or a list of tools \(Tool objects or plain functions\); got int",
        ),
        ({"tools": "read_file"}, "tools must be a function building .*; got str"),
        ({"tools": [42]}, r"tools\[0\] \(int\) is not a tool: tools must be a function"),
        ({"safe_tools": 42}, r"safe_tools takes tool names \(e\.g\. safe_tools=\['edit_file'\]\)"),
        ({"redo": [1, 2]}, r"redo takes tool names \(e\.g\. redo=\['edit_file'\]\); got \[1, 2\]"),
        ({"name": 7}, "name must be a string .*, got int"),
        ({"root": 42}, "root must be the path of a folder .*, got 42"),
        ({"root": ""}, "root must be the path of a folder .*, got ''"),
        ({"session_log": "yes"}, "session_log must be True, False or None"),
        ({"arrival": "sideways"}, "arrival must be one of"),
        ({"workspace": 3}, "workspace must be a folder"),
        ({"workspace": "/no/such/folder"}, "is not a folder"),
        ({"model": "claude"}, "model must be a ctxlab Model or a function making one"),
    ],
)
async def test_arguments_of_another_kind(
    tmp_path: Path, arguments: dict[str, object], says: str
) -> None:
    session = await demo_session(tmp_path / "s")
    before = _untouched(session)
    given = {"root": tmp_path / "b", **arguments}
    with pytest.raises(ForkError, match=says):
        await fork(session.agent, at=2, **given)  # type: ignore[arg-type]
    assert _entries(tmp_path / "b") == []
    assert not Path("original").exists()  # root="" is no license to write here
    assert _untouched(session) == before


async def test_one_tool_name_is_one_name_not_its_letters(tmp_path: Path) -> None:
    session = await demo_session(tmp_path / "s")
    branch = await fork(session.agent, at=3, redo="edit_file", root=tmp_path / "b")
    assert branch.workspace is not None and branch.workspace.redo == ("edit_file",)


async def test_a_tools_or_model_function_that_fails(tmp_path: Path) -> None:
    session = await demo_session(tmp_path / "s")
    recording = session.agent.transcript()

    def no_tools(folder: Path) -> list[object]:
        msg = "no such project"
        raise FileNotFoundError(msg)

    def no_model() -> MemorylessModel:
        msg = "no key"
        raise KeyError(msg)

    for arguments, says in (
        (
            {"tools": no_tools, "model": MemorylessModel()},
            r"^branch 'original' cannot be made: the tools function no_tools failed over the branch's folder '.*workspace': "
            r"FileNotFoundError: no such project\. tools must be a function",
        ),
        (
            {"tools": lambda folder: [3], "model": MemorylessModel()},
            r"^branch 'original' cannot be made: the tools function <lambda> built a int \(not a tool\): it must return tools$",
        ),
        (
            {"tools": workspace_tools, "model": no_model},
            r"^the model function no_model failed: KeyError: 'no key'$",
        ),
    ):
        with pytest.raises(ForkError, match=says):
            await fork(recording, at=2, root=tmp_path / "b", **arguments)  # type: ignore[arg-type]
        assert _entries(tmp_path / "b") == []  # the branch's folder was cleaned up
    # Control: the same recording forks with a tools function and a model that work, and runs.
    branch = await fork(
        recording, at=2, tools=workspace_tools, model=MemorylessModel(), root=tmp_path / "b"
    )
    assert (await run_forward(branch, max_steps=2)).runs[0].requests
