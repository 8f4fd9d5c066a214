"""A sweep survives what kills its workers: a Dask worker killed mid-sweep (its task runs again
elsewhere, from the content it carries), the cluster closed mid-sweep or an executor that breaks
(every case still a row, the lost ones with their error), and the cache holds every case that
finished — written as each task arrives, checked on read."""

from __future__ import annotations

import os
import shutil
import signal
import threading
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from ctxlab import Transcript, sweep
from ctxlab.analysis import _sweep_cache
from ctxlab.exceptions import UsageError
from tests.analysis.test_sweep import CONFIGS, SESSIONS, FirstThenFails, _session
from tests.helpers import raised_at_once

MANY = [_session(f"s{n}", 6 + n) for n in range(6)]


def _entries(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.parquet"))


def _after_first_entry(monkeypatch: pytest.MonkeyPatch, action: Any) -> None:
    """Run ``action`` once, right after the first case is cached (mid-sweep, deterministically)."""
    put = _sweep_cache.SweepCache.put
    done = threading.Event()

    def put_then_act(self: Any, *args: Any) -> None:
        put(self, *args)
        if not done.is_set():
            done.set()
            action()

    monkeypatch.setattr(_sweep_cache.SweepCache, "put", put_then_act)


def test_a_worker_killed_mid_sweep_costs_nothing(
    cluster: tuple[Any, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, client = cluster
    expected = sweep(MANY, CONFIGS, (6_000,), progress=False)
    pids = list(client.run(os.getpid).values())
    _after_first_entry(monkeypatch, lambda: os.kill(pids[0], signal.SIGKILL))
    frame = sweep(MANY, CONFIGS, (6_000,), executor=client, cache_dir=tmp_path, progress=False)
    # The killed worker's tasks ran again on the other (or on its replacement).
    pd.testing.assert_frame_equal(frame, expected)
    assert len(_entries(tmp_path)) == len(frame) == 12


def test_a_cluster_closed_mid_sweep_returns_a_row_per_case(
    cluster: tuple[Any, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local, client = cluster
    _after_first_entry(monkeypatch, local.close)
    frame = sweep(MANY, CONFIGS, (6_000,), executor=client, cache_dir=tmp_path, progress=False)
    assert len(frame) == 12
    assert frame[["session", "config"]].values.tolist() == [
        [s.name, c] for s in MANY for c in CONFIGS
    ]
    lost = frame[frame["error"].notna()]
    assert len(lost) > 0 and lost["error"].str.contains("not computed").all()
    assert lost["requests"].isna().all()
    # Every case that finished is cached, and only those.
    assert len(_entries(tmp_path)) == int(frame["error"].isna().sum()) >= 1
    # The next sweep computes only what was lost.
    again = sweep(MANY, CONFIGS, (6_000,), cache_dir=tmp_path, progress=False)
    assert again.attrs["computed"] == len(lost) and again["error"].isna().all()


def test_a_broken_executor_leaves_rows_with_the_reason_and_the_finished_cases_cached(
    tmp_path: Path,
) -> None:
    frame = sweep(
        MANY[:3],
        CONFIGS,
        (6_000,),
        executor=FirstThenFails(BrokenProcessPool("A process in the pool was terminated")),
        cache_dir=tmp_path,
        progress=False,
    )
    assert len(frame) == 6
    lost = frame[frame["error"].notna()]
    assert len(lost) == 4  # two tasks of two configs
    assert lost["error"].str.contains("BrokenProcessPool: A process in the pool").all()
    assert len(_entries(tmp_path)) == 2


def test_an_entry_copied_over_another_cases_is_computed_again(tmp_path: Path) -> None:
    one, configs = [SESSIONS[0]], {"ctxlab": CONFIGS["ctxlab"]}
    first = sweep(one, configs, (6_000, 12_000), cache_dir=tmp_path, progress=False)
    assert first.loc[0, "tokens_sent"] != first.loc[1, "tokens_sent"]
    a, b = _entries(tmp_path)
    shutil.copyfile(a, b)  # one case's figures under the other's name
    again = sweep(one, configs, (6_000, 12_000), cache_dir=tmp_path, progress=False)
    assert again.attrs["computed"] == 1 and again.attrs["cached"] == 1
    pd.testing.assert_frame_equal(again, first)


def test_an_entry_with_a_wrong_type_is_computed_again(tmp_path: Path) -> None:
    one = [SESSIONS[1]]
    first = sweep(one, {"ctxlab": CONFIGS["ctxlab"]}, (6_000,), cache_dir=tmp_path, progress=False)
    (entry,) = _entries(tmp_path)
    damaged = pd.read_parquet(entry).astype({"peak": str})  # valid Parquet, a text figure
    damaged.to_parquet(entry)
    again = sweep(one, {"ctxlab": CONFIGS["ctxlab"]}, (6_000,), cache_dir=tmp_path, progress=False)
    assert again.attrs["computed"] == 1
    pd.testing.assert_frame_equal(again, first)
    entry.write_bytes(b"not parquet")
    assert (
        sweep(
            one, {"ctxlab": CONFIGS["ctxlab"]}, (6_000,), cache_dir=tmp_path, progress=False
        ).attrs["computed"]
        == 1
    )


def test_two_sweeps_writing_one_cache_at_once(tmp_path: Path) -> None:
    def run() -> None:
        sweep(MANY[:3], CONFIGS, (6_000,), cache_dir=tmp_path, progress=False)

    assert raised_at_once(run, threads=4) == []
    assert len(_entries(tmp_path)) == 6 and not list(tmp_path.glob("*.tmp"))
    served = sweep(MANY[:3], CONFIGS, (6_000,), cache_dir=tmp_path, progress=False)
    assert served.attrs["cached"] == 6


def test_a_cache_dir_that_is_a_file_is_refused(tmp_path: Path) -> None:
    file = tmp_path / "cache"
    file.write_text("mine")
    with pytest.raises(UsageError, match="is a file: give a folder"):
        sweep(SESSIONS, CONFIGS, (6_000,), cache_dir=file, progress=False)
    assert file.read_text() == "mine"


@pytest.mark.parametrize(
    ("windows", "match"),
    [
        ([0], "from 1 to"),
        ([-5], "got -5"),
        ([float("nan")], "got nan"),
        ("x", "a list of context windows"),
        ([], "is empty"),
        ([True], "got True"),
    ],
)
def test_windows_are_checked_before_anything_runs(windows: Any, match: str) -> None:
    with pytest.raises(UsageError, match=match):
        sweep(SESSIONS, CONFIGS, windows, progress=False)


def test_one_window_alone_is_a_list_of_one() -> None:
    frame = sweep([SESSIONS[1]], {"ctxlab": CONFIGS["ctxlab"]}, 6_000, progress=False)  # type: ignore[arg-type]
    assert frame["window"].tolist() == [6_000]


def test_the_executor_and_the_cases_are_checked() -> None:
    with pytest.raises(UsageError, match="executor must be"):
        sweep(SESSIONS, CONFIGS, executor=object(), progress=False)
    with pytest.raises(UsageError, match="triple"):
        sweep(SESSIONS, CONFIGS, cases=[("alpha", "ctxlab")], progress=False)  # type: ignore[list-item]
    with pytest.raises(UsageError, match="a case's window"):
        sweep(SESSIONS, CONFIGS, cases=[("alpha", "ctxlab", 0)], progress=False)


def test_a_transcript_name_of_the_frame_is_unique() -> None:
    twin = Transcript("alpha", {}, "x", SESSIONS[1].messages)
    frame = sweep([SESSIONS[0], twin], {"ctxlab": CONFIGS["ctxlab"]}, (6_000,), progress=False)
    assert frame["session"].tolist() == ["alpha", "alpha#2"]
