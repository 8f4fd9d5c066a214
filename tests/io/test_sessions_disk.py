"""`sessions` asked again from a new process answers from the table kept on disk while nothing
under the folder changed — reads again the session of a file that did, and every session when
ctxlab's code or the formats did, or when what was kept cannot be read
(`ctxlab.io._sessions_disk`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import ctxlab.io._folder as folder_module
from ctxlab import sessions
from ctxlab.io import _sessions_cache, _sessions_disk, _sessions_rows
from ctxlab.io._sessions_cache import forget
from tests.io.kept_tables import FIXTURES, fixture_sessions, refuse_reading


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Sessions of several formats, and a cache folder of this test's own."""
    monkeypatch.setenv("CTXLAB_SESSIONS_CACHE", str(tmp_path / "cache"))
    formats = ("claude_code", "codex", "cline", "mini_swe_agent")
    return fixture_sessions(tmp_path / "sessions", formats)


def _new_process() -> None:
    # What a new process starts with: no table nor rows in memory (the disk's are kept).
    _sessions_cache._KEPT.clear()
    _sessions_rows._KEPT.clear()


def test_a_new_process_answers_from_disk_without_reading(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = sessions(folder, workers=1, progress=False)
    assert first["problem"].isna().sum() > 5
    _new_process()
    refuse_reading(monkeypatch)  # a file read says so in its row
    pd.testing.assert_frame_equal(sessions(folder, workers=1, progress=False), first)


def test_a_process_started_anew_reads_nothing(folder: Path) -> None:
    first = sessions(folder, workers=1, progress=False)
    script = (
        "import sys, ctxlab, ctxlab.io._folder as f\n"
        "from ctxlab.exceptions import CtxlabError\n"
        "def refuse(*a, **k): raise CtxlabError('read again')\n"
        "f.read = refuse\n"
        "frame = ctxlab.sessions(sys.argv[1], workers=1, progress=False)\n"
        "print(len(frame), int(frame['problem'].isna().sum()))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(folder)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "CTXLAB_SESSIONS_CACHE": os.environ["CTXLAB_SESSIONS_CACHE"]},
    ).stdout.split()
    assert [int(n) for n in out] == [len(first), int(first["problem"].isna().sum())]


@pytest.mark.parametrize("change", ["a file", "ctxlab's code", "the table kept", "its owner"])
def test_what_changed_is_read_again(
    folder: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    first = sessions(folder, workers=1, progress=False)
    _new_process()
    target = next((folder / "codex").glob("*.jsonl"))
    if change == "a file":
        target.write_text(target.read_text() + "\n")
    elif change == "ctxlab's code":
        monkeypatch.setattr(_sessions_disk, "_code", lambda: ("another ctxlab",))
    elif change == "the table kept":
        for table in Path(os.environ["CTXLAB_SESSIONS_CACHE"]).glob("*.pkl"):
            table.write_bytes(b"not a table")
    else:  # a table another user wrote (a pickle runs code when read): not read
        monkeypatch.setattr(os, "getuid", lambda: os.stat(folder).st_uid + 1, raising=False)
    refuse_reading(monkeypatch)
    again = sessions(folder, workers=1, progress=False)
    assert len(again) == len(first)
    read_again = set(again.loc[again["problem"] == "read again", "path"])
    # A file changed: its session alone (the others' rows were kept on disk); else all.
    assert read_again == ({str(target)} if change == "a file" else set(first["path"]))


def test_off_keeps_nothing_on_disk(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXLAB_SESSIONS_CACHE", "off")
    sessions(folder, workers=1, progress=False)
    assert _sessions_disk.folder() is None
    assert not (folder.parent / "cache").exists()


def test_a_format_registered_here_keeps_nothing_on_disk(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("ctxlab.io._registry.added_here", lambda: ("a notebook's format",))
    sessions(folder, workers=1, progress=False)
    assert list((folder.parent / "cache").glob("*.pkl")) == []


def test_the_tables_kept_are_the_last_sixteen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CTXLAB_SESSIONS_CACHE", str(tmp_path / "cache"))
    source = FIXTURES / "sessions" / "claude_code_session.jsonl"
    for n in range(18):
        root = tmp_path / f"folder{n}"
        root.mkdir()
        shutil.copy2(source, root)  # (its time kept: a file just written is not kept)
        sessions(root, workers=1, progress=False)
    assert len(list((tmp_path / "cache").glob("*.sessions.pkl"))) == 16
    assert len(list((tmp_path / "cache").glob("*.rows.pkl"))) == 16  # each folder's rows
    assert list((tmp_path / "cache").glob("*.part")) == []


def test_a_file_rewritten_within_its_clock_tick_is_read_again(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A file rewritten at its size within one tick of its file system's clock (a second, two
    # on FAT) keeps its modification time too (here set back, as such a clock would leave it):
    # a table read just after the first write must not answer for the second.
    one = next((folder / "codex").glob("*.jsonl"))
    text = one.read_text()
    one.write_text(text)  # just written
    stat = one.stat()
    sessions(folder, workers=1, progress=False)
    one.write_text(text.replace('"gpt-', '"GPT-'))
    assert one.stat().st_size == stat.st_size
    os.utime(one, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    _new_process()
    refuse_reading(monkeypatch)
    again = sessions(folder, workers=1, progress=False)
    # That file's session read again (its rows were not kept: too recent), the others kept.
    assert set(again.loc[again["problem"] == "read again", "path"]) == {str(one)}


def test_a_link_in_place_of_a_table_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A link named as a folder's table (planted in a cache folder others may write) is not
    # followed: the file it points to is this user's, but not this folder's table.
    cache = tmp_path / "cache"
    monkeypatch.setenv("CTXLAB_SESSIONS_CACHE", str(cache))
    forget()
    roots = []
    for name in ("claude_code", "codex"):
        roots.append(tmp_path / name)
        shutil.copytree(FIXTURES / name, roots[-1])
    sessions(roots[0], workers=1, progress=False)
    (table,) = cache.glob("*.sessions.pkl")
    other = _sessions_cache.state_of(roots[1], folder_module._suffixes([".jsonl"]), 0)
    name = _sessions_disk._name(other)
    assert name is not None
    (cache / name).symlink_to(table)
    _new_process()
    refuse_reading(monkeypatch)
    again = sessions(roots[1], suffixes=[".jsonl"], workers=1, progress=False)
    assert set(again["problem"]) == {"read again"}


def test_a_process_whose_ctxlab_changed_since_its_import_keeps_nothing(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A kernel that imported ctxlab before a module was edited (or another version installed)
    # runs the code it loaded: its table must not be kept under the code now on disk, where a
    # new process would take it for its own. (Every module is newer than an import at 0.)
    monkeypatch.setattr(_sessions_disk, "_IMPORTED_NS", 0, raising=False)
    _sessions_disk._code.cache_clear()
    try:
        sessions(folder, workers=1, progress=False)
    finally:
        _sessions_disk._code.cache_clear()
    assert list((folder.parent / "cache").glob("*.pkl")) == []


def test_a_table_interrupted_while_written_leaves_no_file(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A cell interrupted while its table is written: the interrupt goes on, and no temporary
    # file is left in the cache folder (the tables kept are pruned, temporary files never).
    def interrupted(*_: Any, **__: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(_sessions_disk, "_dump", interrupted)
    with pytest.raises(KeyboardInterrupt):
        sessions(folder, workers=1, progress=False)
    assert list((folder.parent / "cache").iterdir()) == []
