"""A path no file system takes is refused by name before any file is touched (it raised
ValueError, UnicodeEncodeError, TypeError or a bare OSError from deep inside: issue 51's
signature fuzz), and what only the file system can tell — a read-only folder, a file on the
way — is a `WriteError` saying so, the folder left as it was."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from ctxlab import Agent, ScriptedModel, SessionLog
from ctxlab.demo import prepare_workspace
from ctxlab.exceptions import CtxlabError, UsageError, WriteError
from ctxlab.tokens import CountStore
from ctxlab.util._files import write_atomic
from ctxlab.util._path_args import path_argument
from tests.hostile import listing, read_only, says


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("a\x00b", "holds a NUL character, which no file name can"),
        ("a\ud800b", "holds a character no file name can be written in (a lone surrogate)"),
        ("", "is empty"),
        ("n" * 300, "has a name of 300 bytes: a file system takes names of up to 255"),
        ("é" * 200, "has a name of 400 bytes"),  # bytes, not characters: 200 of them fit
        ("a/" * 2_100, "is 4,200 bytes long: paths end at 4,096"),
    ],
)
def test_a_path_no_file_system_takes_is_refused_saying_why(value: str, said: str) -> None:
    with pytest.raises(UsageError) as caught:
        path_argument(value, "path", what="a session file")
    says(str(caught.value), "path cannot be a path to a session file", said)


@pytest.mark.parametrize("value", [42, None, b"/tmp/x.jsonl", ["a"], Path])
def test_what_is_no_path_is_refused_saying_what_a_path_is(value: Any) -> None:
    with pytest.raises(UsageError) as caught:
        path_argument(value, "root", what="a folder")
    says(str(caught.value), "root must be a path to a folder (text or a pathlib.Path)")


def test_a_path_a_file_system_takes_is_that_path(tmp_path: Path) -> None:
    assert path_argument(tmp_path / "s.jsonl", "path") == tmp_path / "s.jsonl"
    assert path_argument("é" * 127, "path") == Path("é" * 127)  # 254 bytes: one name
    assert path_argument(os.fsdecode(b"caf\xe9"), "path").name == "caf\udce9"  # undecoded


@pytest.mark.parametrize(
    "open_it",
    [
        lambda p: SessionLog(p),
        lambda p: CountStore(p),
        lambda p: write_atomic(p, "data"),
        lambda p: Agent(model=ScriptedModel([]), session_log=p),
        lambda p: Agent(model=ScriptedModel([]), workspace=p),
    ],
    ids=["SessionLog", "CountStore", "write_atomic", "Agent(session_log=)", "Agent(workspace=)"],
)
@pytest.mark.parametrize("name", ["a\x00b", "a\ud800b", "n" * 300])
def test_every_entry_point_that_opens_a_path_refuses_one_no_file_system_takes(
    tmp_path: Path, open_it: Any, name: str
) -> None:
    before = listing(tmp_path)
    with pytest.raises(UsageError) as caught:
        open_it(str(tmp_path / name))
    assert "cannot be a path to" in str(caught.value)
    assert listing(tmp_path) == before


def test_the_demo_workspace_in_a_read_only_folder_or_under_a_file_says_so(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    with pytest.raises(WriteError) as caught:
        prepare_workspace(blocker / "demo")
    says(str(caught.value), "cannot make the demo workspace", "a file stands where a folder")
    folder = tmp_path / "locked"
    folder.mkdir()
    with read_only(folder):
        with pytest.raises(WriteError) as caught:
            prepare_workspace(folder / "demo")
        says(str(caught.value), "cannot be written (a read-only file or folder)")
    assert listing(folder) == {}
    assert isinstance(caught.value, CtxlabError)
