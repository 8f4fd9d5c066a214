"""Writing a user's file whole or not at all (`ctxlab.util._files.write_atomic`), and the
writers that use it: `Transcript.save`, `Lab.report`, the sweep CLI's ``--out``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxlab import Transcript, load
from ctxlab.__main__ import main
from ctxlab.exceptions import WriteError
from ctxlab.messages import AssistantMessage, TextBlock, UserMessage
from ctxlab.util._files import current_umask, write_atomic


def _transcript() -> Transcript:
    return Transcript(
        name="t",
        meta={},
        system="",
        messages=(
            UserMessage(content=(TextBlock(text="hello"),)),
            AssistantMessage(content=(TextBlock(text="hi there"),)),
        ),
    )


def test_a_failed_write_leaves_the_previous_file_and_no_fragment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "session.jsonl"
    target.write_text("the previous session\n", encoding="utf-8")
    real = os.fsync

    def disk_full(fd: int) -> None:
        real(fd)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(WriteError, match=r"No space left on device.*unchanged"):
        _transcript().save(target)
    assert target.read_text(encoding="utf-8") == "the previous session\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.jsonl"]


def test_a_write_replaces_the_file_whole(tmp_path: Path) -> None:
    target = tmp_path / "session.jsonl"
    target.write_text("old\n" * 1000, encoding="utf-8")
    _transcript().save(target)
    assert [m.content[0].text for m in load(target).messages] == ["hello", "hi there"]  # type: ignore[union-attr]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.jsonl"]


def test_a_missing_folder_or_a_folder_as_target_is_named(tmp_path: Path) -> None:
    with pytest.raises(WriteError, match="does not exist; create it first"):
        write_atomic(tmp_path / "missing" / "x.html", "x", what="report")
    with pytest.raises(WriteError, match="it is a folder"):
        write_atomic(tmp_path, "x", what="report")


def test_the_sweep_cli_refuses_an_unwritable_out_before_it_sweeps(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nowhere" / "sweep.csv"
    # No session given: had the check come after the sweep, the error would be about sessions.
    assert main(["sweep", "--out", str(missing), str(tmp_path / "none.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "does not exist; create it first" in err and "Traceback" not in err
    assert main(["sweep", "--out", str(tmp_path), str(tmp_path / "none.jsonl")]) == 2
    assert "is a folder" in capsys.readouterr().err


def test_the_sweep_cli_refuses_bad_workers_cache_and_windows_before_it_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache_file = tmp_path / "cache.txt"
    cache_file.write_text("not a folder")
    session = str(tmp_path / "none.jsonl")
    for argv, said in [
        (["sweep", "--workers", "-1", session], "--workers must be 0"),
        (["sweep", "--cache", str(cache_file), session], "is a file; give a folder"),
        (["sweep", "--window", "-5", session], "--window must be a positive"),
    ]:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert said in err and "Traceback" not in err
    assert cache_file.read_text() == "not a folder"


def test_a_write_keeps_the_files_mode(tmp_path: Path) -> None:
    target = tmp_path / "session.jsonl"
    target.write_text("old\n", encoding="utf-8")
    target.chmod(0o664)
    _transcript().save(target)
    assert target.stat().st_mode & 0o7777 == 0o664
    target.chmod(0o640)
    write_atomic(target, "x", what="report")
    assert target.stat().st_mode & 0o7777 == 0o640


def test_a_new_file_gets_the_mode_the_umask_gives(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        assert write_atomic(tmp_path / "a.html", "x").stat().st_mode & 0o7777 == 0o640
        os.umask(0o002)
        assert write_atomic(tmp_path / "b.html", "x").stat().st_mode & 0o7777 == 0o664
        # Read without setting it (another thread's files never get a wrong mode meanwhile).
        assert current_umask() == 0o002
    finally:
        os.umask(old)


def test_a_name_near_the_file_systems_limit_is_written(tmp_path: Path) -> None:
    for name in ("s" * 246, "é" * 120 + ".jsonl"):
        assert len(name.encode()) <= 255
        target = write_atomic(tmp_path / name, "x", what="transcript")
        assert target.read_text() == "x"
    assert sorted(len(p.name) for p in tmp_path.iterdir()) == [126, 246]


def test_a_transcript_of_a_246_character_name_saves_and_loads(tmp_path: Path) -> None:
    path = tmp_path / ("s" * 240 + ".jsonl")
    assert len(path.name) == 246
    _transcript().save(path)
    assert [m.role for m in load(path).messages] == ["user", "assistant"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


def _swept(tmp_path: Path) -> list[str]:
    """A session for the sweep CLI, and its arguments (two presets, one window)."""
    session = tmp_path / "s.jsonl"
    _transcript().save(session)
    return ["sweep", "--preset", "ctxlab", "--preset", "harness", str(session)]


def test_the_sweep_cli_writes_its_frame_to_out_and_says_how_many_cases(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sweep.csv"
    assert main([*_swept(tmp_path), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    rows = out.read_text(encoding="utf-8").splitlines()
    # A header and one row per preset; nothing on standard output.
    assert len(rows) == 3 and captured.out == ""
    assert "2 cases -> " in captured.err


def test_a_sweep_whose_out_fails_at_the_end_puts_its_frame_on_standard_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*_args: object, **_kwargs: object) -> None:
        raise WriteError("disk full")

    monkeypatch.setattr("ctxlab.__main__.write_atomic", refuse)
    assert main([*_swept(tmp_path), "--out", str(tmp_path / "sweep.csv")]) == 2
    captured = capsys.readouterr()
    assert "disk full; the results follow on standard output" in captured.err
    assert len(captured.out.splitlines()) == 3
