"""A sweep whose cache cannot be written loses nothing: an entry's name taken by a folder, a
disk that fills while the Parquet files or the token counts are written, a read-only count
store — every computed row is returned, equal to a sweep without a cache, with a
`CacheNotWritten` warning and ``frame.attrs["cache_problems"]`` saying why. A count file that is
not a ctxlab count store is said before any work, by name, and left as it was."""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from ctxlab import sweep
from ctxlab.analysis._sweep import COUNTS_FILE
from ctxlab.exceptions import CacheNotWritten, CountStoreError
from ctxlab.util import _files
from tests.analysis.test_sweep import CONFIGS, SESSIONS
from tests.hostile import read_only, says

WINDOWS = (6_000,)


@pytest.fixture(scope="module")
def expected() -> pd.DataFrame:
    return sweep(SESSIONS, CONFIGS, WINDOWS, progress=False)


def _same_rows(frame: pd.DataFrame, expected: pd.DataFrame) -> None:
    columns = [c for c in frame.columns if c != "replay_ms"]
    pd.testing.assert_frame_equal(frame[columns], expected[columns])


def test_entries_whose_names_are_taken_by_folders_cost_no_row(
    tmp_path: Path, expected: pd.DataFrame
) -> None:
    # The entries' names, learned from a first sweep; each then taken by a folder.
    first = tmp_path / "first"
    sweep(SESSIONS, CONFIGS, WINDOWS, cache_dir=first, progress=False)
    names = sorted(p.name for p in first.glob("*.parquet"))
    assert len(names) == 4
    cache = tmp_path / "cache"
    cache.mkdir()
    for name in names:
        (cache / name).mkdir()
    with pytest.warns(CacheNotWritten) as warned:
        frame = sweep(SESSIONS, CONFIGS, WINDOWS, cache_dir=cache, progress=False)
    _same_rows(frame, expected)
    assert frame.attrs["computed"] == 4 and frame["error"].isna().all()
    says(str(warned[0].message), "not fully written", "every computed row is returned")
    problems = frame.attrs["cache_problems"]
    assert len(problems) == 4 and all("it is a folder" in p for p in problems)
    assert all((cache / name).is_dir() for name in names)  # the folders are left alone


def test_a_disk_that_fills_while_the_cache_is_written_costs_no_row(
    tmp_path: Path, expected: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = os.fsync

    def full(fd: int) -> None:
        real(fd)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_files.os, "fsync", full)
    with pytest.warns(CacheNotWritten, match="No space left on device"):
        frame = sweep(SESSIONS, CONFIGS, WINDOWS, cache_dir=tmp_path, progress=False)
    _same_rows(frame, expected)
    assert frame["error"].isna().all()
    assert list(tmp_path.glob("*.parquet")) == []  # no fragment either
    assert [p.name for p in tmp_path.iterdir() if not p.name.startswith(COUNTS_FILE)] == []


def test_a_count_store_whose_disk_fills_costs_no_row(
    tmp_path: Path, expected: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = sqlite3.connect

    def small_disk(*args: object, **kwargs: object) -> sqlite3.Connection:
        # SQLite's own bound on the file's pages: room for the table, not for its counts.
        db = real(*args, **kwargs)  # type: ignore[arg-type]
        db.execute("PRAGMA page_size = 512")  # (applies when the file is created)
        db.execute("PRAGMA max_page_count = 2")
        return db

    monkeypatch.setattr("ctxlab.tokens._store.sqlite3.connect", small_disk)
    # A disk with next to no room left, as read after the failure: full, not a size limit.
    monkeypatch.setattr("ctxlab.util._room.free_bytes", lambda folder: 4_096)
    with pytest.warns(CacheNotWritten) as warned:
        frame = sweep(SESSIONS, CONFIGS, WINDOWS, cache_dir=tmp_path, progress=False)
    _same_rows(frame, expected)
    assert frame["error"].isna().all()
    says(str(warned[0].message), "database or disk is full", "the disk is full")


def test_a_read_only_count_store_is_read_and_the_rows_are_whole(
    tmp_path: Path, expected: pd.DataFrame
) -> None:
    sweep(SESSIONS, CONFIGS, WINDOWS, cache_dir=tmp_path, progress=False)
    for entry in tmp_path.glob("*.parquet"):
        entry.unlink()  # the cases computed again, over the counts kept
    store = tmp_path / COUNTS_FILE
    before = store.read_bytes()
    with read_only(store):
        frame = sweep(SESSIONS, CONFIGS, WINDOWS, cache_dir=tmp_path, progress=False)
    _same_rows(frame, expected)
    assert store.read_bytes() == before


def test_a_foreign_count_file_is_said_before_any_work(tmp_path: Path) -> None:
    store = tmp_path / COUNTS_FILE
    with sqlite3.connect(store) as db:
        db.execute("CREATE TABLE counts (word TEXT, n INTEGER)")
    db.close()
    before = store.read_bytes()
    with pytest.raises(CountStoreError) as caught:
        # A path that does not exist: had the sessions been loaded first, this would be the
        # error instead.
        sweep([tmp_path / "missing.jsonl"], CONFIGS, WINDOWS, cache_dir=tmp_path, progress=False)
    says(str(caught.value), COUNTS_FILE, "not a ctxlab count store", "name another file")
    assert "no such column" not in str(caught.value)
    assert store.read_bytes() == before


def test_a_worker_that_cannot_open_the_count_store_counts_without_it(
    tmp_path: Path, expected: pd.DataFrame
) -> None:
    from ctxlab.analysis._sweep import run_group

    store = tmp_path / COUNTS_FILE
    store.write_bytes(b"damaged since the sweep began" * 50)
    rows = run_group(SESSIONS[0], WINDOWS, CONFIGS, None, None, True, str(store))
    assert [r["error"] for r in rows] == [None, None]
    assert [r["requests"] for r in rows] == expected["requests"][:2].tolist()
    assert all("not a ctxlab count store" in r["cache_problem"] for r in rows)


def test_an_entry_whose_figure_changed_is_computed_again(
    tmp_path: Path, expected: pd.DataFrame
) -> None:
    sweep(SESSIONS, CONFIGS, WINDOWS, cache_dir=tmp_path, progress=False)
    entry = sorted(tmp_path.glob("*.parquet"))[0]
    frame = pd.read_parquet(entry)
    frame["tokens_sent"] = frame["tokens_sent"] + 1  # a flipped bit, say: key and digest stay
    frame.to_parquet(entry)
    again = sweep(SESSIONS, CONFIGS, WINDOWS, cache_dir=tmp_path, progress=False)
    assert again.attrs["computed"] == 1 and again.attrs["cached"] == 3
    _same_rows(again, expected)
