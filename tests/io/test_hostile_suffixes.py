"""`sessions(folder, suffixes=...)`: one ending given as a string is that ending (iterated, the
string ``".traj"`` was its characters: ``README.txt`` ended in ``t`` and was listed as a
session); what is no ending is a `UsageError` naming the argument, before anything is read."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from ctxlab import sessions
from ctxlab.exceptions import UsageError
from tests.hostile import says

TRAJECTORY = Path(__file__).parents[1] / "fixtures" / "mini_swe_agent" / "toolcalls.traj.json"


def _folder(tmp_path: Path) -> Path:
    shutil.copy(TRAJECTORY, tmp_path / "run.traj")
    (tmp_path / "README.txt").write_text("not a session\n")
    (tmp_path / "at").write_text("ends in t\n")
    (tmp_path / "notes.json").write_text('{"not": "a session"}\n')
    return tmp_path


@pytest.mark.parametrize("suffixes", [".traj", [".traj"], (".TRAJ",), {".traj"}])
def test_one_ending_as_a_string_is_that_ending(tmp_path: Path, suffixes: Any) -> None:
    frame = sessions(_folder(tmp_path), suffixes=suffixes, workers=1, progress=False)
    assert [Path(p).name for p in frame["path"]] == ["run.traj"]
    assert frame["format"].tolist() == ["mini_swe_agent"] and frame["problem"].isna().all()


def test_several_endings_list_each(tmp_path: Path) -> None:
    frame = sessions(_folder(tmp_path), suffixes=[".traj", ".txt"], workers=1, progress=False)
    assert sorted(Path(p).name for p in frame["path"]) == ["README.txt", "run.traj"]


@pytest.mark.parametrize("bad", [5, None, "", [".traj", 3], [".traj", ""], b".traj", [b".j"]])
def test_what_is_no_ending_is_refused_naming_the_argument(tmp_path: Path, bad: Any) -> None:
    with pytest.raises(UsageError) as caught:
        sessions(_folder(tmp_path), suffixes=bad, workers=1, progress=False)
    says(str(caught.value), "suffixes", "'.jsonl'", repr(bad))
