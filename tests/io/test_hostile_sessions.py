"""`sessions()` never loses the listing over one odd file — a usage no text can have, a ctxlab
meta line of odd values, a damaged ``.eval``, a file deleted while the folder is listed, a
worker process that dies — each is one row with its problem, every other row whole; and an
argument it cannot use (``workers="4"``) is a `UsageError` before anything is read."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from ctxlab import sessions
from ctxlab.exceptions import UsageError
from ctxlab.io import _folder
from tests.hostile import says

FIXTURES = Path(__file__).parents[1] / "fixtures"
GOOD = FIXTURES / "sessions" / "claude_code_session.jsonl"


def _odd_files(folder: Path) -> dict[str, str]:
    """Odd files written into ``folder``: name → what its problem must say."""
    text = GOOD.read_text()
    (folder / "huge.jsonl").write_text(
        text.replace('"input_tokens": ', '"input_tokens": 99999999999999999999999', 1)
    )
    meta = {"type": "meta", "models": 5, "skipped": "x", "compactions": 3, "repairs": {"a": 1}}
    odd_meta = json.dumps(meta) + "\n" + json.dumps({"role": "user", "content": "hi"}) + "\n"
    (folder / "odd_meta.jsonl").write_text(odd_meta)
    (folder / "bad.eval").write_bytes(b"PK\x03\x04" + b"\x00" * 200)
    (folder / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    return {
        "huge": "usage field 'input_tokens'",
        "bad": "bad.eval",
        "deep": "deep.json",
    }


def _expected_good(tmp_path: Path) -> pd.Series:
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(GOOD, alone / "good.jsonl")
    return sessions(alone, progress=False).query("episode == 0").iloc[0]


@pytest.mark.parametrize("workers", [1, 2])
def test_one_odd_file_is_one_row_with_its_problem(tmp_path: Path, workers: int) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    problems = _odd_files(folder)
    # Enough files for the parallel path (24), most of them sound.
    for n in range(22):
        shutil.copy(GOOD, folder / f"good{n:02}.jsonl")
    # One row a file (its main thread: the fixture's subagent has rows of its own, episode 1).
    frame = sessions(folder, workers=workers, progress=False).query("episode == 0")
    assert len(frame) == 22 + 4
    by_name = {
        Path(p).stem: row for p, (_, row) in zip(frame["path"], frame.iterrows(), strict=True)
    }
    for name, said in problems.items():
        assert isinstance(by_name[name]["problem"], str), name
        says(by_name[name]["problem"], said)
    # The odd meta loads: its odd figures are left out, not the file.
    odd = by_name["odd_meta"]
    assert pd.isna(odd["problem"]) and odd["messages"] == 1
    assert pd.isna(odd["models"]) and odd["recorded_compactions"] == 0 and odd["skipped"] == 0
    expected = _expected_good(tmp_path)
    goods = frame[frame["path"].str.contains("good")]
    assert len(goods) == 22 and goods["problem"].isna().all()
    for column in ("messages", "requests", "tool_calls", "conversation_tokens"):
        assert (goods[column] == expected[column]).all(), column


def test_a_file_deleted_while_the_folder_is_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("a.jsonl", "b.jsonl", "c.jsonl"):
        shutil.copy(GOOD, tmp_path / name)
    read = _folder.read

    def read_then_delete(path: Any, **options: Any) -> Any:
        if Path(path).name == "a.jsonl" and (tmp_path / "b.jsonl").exists():
            (tmp_path / "b.jsonl").unlink()  # gone after the listing, before it is read
        return read(path, **options)

    monkeypatch.setattr(_folder, "read", read_then_delete)
    frame = sessions(tmp_path, workers=1, progress=False).query("episode == 0")
    assert [Path(p).name for p in frame["path"]] == ["a.jsonl", "b.jsonl", "c.jsonl"]
    assert frame["problem"].isna().tolist() == [True, False, True]
    says(frame["problem"].iloc[1], "cannot read it", "no such file")


def test_a_worker_process_that_dies_costs_its_rows_figures_not_the_listing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(30):
        shutil.copy(GOOD, tmp_path / f"s{n:02}.jsonl")
    read = _folder.read

    def die_on_one(path: Any, **options: Any) -> Any:
        if Path(path).name == "s03.jsonl":
            os._exit(3)  # the worker process ends (killed, out of memory)
        return read(path, **options)

    # Worker processes are forked here: they inherit the patch.
    monkeypatch.setattr(_folder, "read", die_on_one)
    frame = sessions(tmp_path, workers=2, progress=False).query("episode == 0")
    assert len(frame) == 30 and frame["path"].is_unique
    lost = frame[frame["problem"].notna()]
    assert len(lost) >= 1 and lost["problem"].str.contains("its process failed").all()
    assert "s03.jsonl" in {Path(p).name for p in lost["path"]}


def test_rows_a_dead_process_cost_are_read_again_at_the_next_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Rows are kept per session while its files stay as they were: a row that says its
    # process failed is about that read, not the file, and is not kept.
    folder = tmp_path / "s"
    folder.mkdir()
    long_ago = (1_600_000_000_000_000_000, 1_600_000_000_000_000_000)
    for n in range(30):
        shutil.copy(GOOD, folder / f"s{n:02}.jsonl")
        os.utime(folder / f"s{n:02}.jsonl", ns=long_ago)  # settled: its rows may be kept
    read = _folder.read

    def die_on_one(path: Any, **options: Any) -> Any:
        if Path(path).name == "s03.jsonl":
            os._exit(3)
        return read(path, **options)

    monkeypatch.setattr(_folder, "read", die_on_one)
    first = sessions(folder, workers=2, progress=False)
    assert first["problem"].str.contains("its process failed").any()
    monkeypatch.setattr(_folder, "read", read)
    again = sessions(folder, workers=1, progress=False)  # nothing changed: not the table kept
    assert again["problem"].isna().all(), again["problem"].dropna().tolist()
    # Nor the rows kept, when another file changed (the folder's table is then not asked).
    monkeypatch.setattr(_folder, "read", die_on_one)
    sessions(folder, workers=2, progress=False)
    monkeypatch.setattr(_folder, "read", read)
    os.utime(folder / "s29.jsonl", ns=(long_ago[0], long_ago[1] + 10**9))
    again = sessions(folder, workers=1, progress=False)
    assert again["problem"].isna().all(), again["problem"].dropna().tolist()


@pytest.mark.parametrize("workers", ["4", 0, -1, 2.5, True])
def test_workers_it_cannot_use_are_refused_before_reading(tmp_path: Path, workers: Any) -> None:
    shutil.copy(GOOD, tmp_path / "a.jsonl")
    with pytest.raises(UsageError) as caught:
        sessions(tmp_path, workers=workers, progress=False)
    says(str(caught.value), "workers must be a whole number from 1", repr(workers))


def test_figures_that_cannot_be_read_are_said_on_the_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(GOOD, tmp_path / "a.jsonl")

    def odd(transcript: Any) -> dict[str, Any]:
        raise OverflowError("a figure past 64 bits")

    monkeypatch.setattr(_folder, "_figures", odd)
    (problem,) = sessions(tmp_path, workers=1, progress=False).query("episode == 0")["problem"]
    says(problem, "loaded, but its figures could not be read", "past 64 bits")
