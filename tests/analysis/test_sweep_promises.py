"""What `sweep` and its worker (`run_group`) promise, on the values: every part of the cost model
(summary calls, the unrecorded part, not only the price) keys the cache; the counts are whole
numbers in the frame; a failing config is a row naming its error's type; a worker given one
window alone runs it; a cache that cannot be written is said once, with the number of problems."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

from ctxlab import sweep
from ctxlab.analysis import _sweep
from ctxlab.analysis._sweep import COUNTS_FILE, run_group
from ctxlab.config import ContextConfig
from ctxlab.exceptions import CacheNotWritten, UsageError
from tests.analysis.test_sweep import CONFIGS, MODEL, SESSIONS

ONE = {"ctxlab": CONFIGS["ctxlab"]}


def test_every_part_of_the_cost_model_keys_the_cache(tmp_path: Path) -> None:
    one = [SESSIONS[1]]
    first = sweep(one, ONE, (6_000,), cache_dir=tmp_path, progress=False)
    assert first.attrs["computed"] == 1
    without = sweep(one, ONE, (6_000,), cache_dir=tmp_path, progress=False, summary_calls=False)
    assert without.attrs["computed"] == 1 and without.attrs["cached"] == 0
    # The summary calls priced or not: another cost, never the first one served.
    assert without["cost"].iloc[0] < first["cost"].iloc[0]
    unrecorded = sweep(
        one, ONE, (6_000,), cache_dir=tmp_path, progress=False, unrecorded_tokens=500
    )
    assert unrecorded.attrs["computed"] == 1
    assert unrecorded["tokens_sent"].iloc[0] > first["tokens_sent"].iloc[0]
    again = sweep(one, ONE, (6_000,), cache_dir=tmp_path, progress=False)
    assert again.attrs["cached"] == 1
    pd.testing.assert_frame_equal(again, first)


def test_the_counts_are_whole_numbers_and_the_attrs_say_how_the_rows_came() -> None:
    frame = sweep(SESSIONS, ONE, (6_000,), progress=False)
    integers = ("window", "requests", "tokens_sent", "compactions", "peak", "errors")
    for column in (*integers, "failed_at", "over_limit_billed"):
        assert str(frame[column].dtype) == "Int64", column
    assert frame.attrs["interrupted"] is False
    assert frame.attrs["cache_problems"] == []
    assert (frame.attrs["computed"], frame.attrs["cached"]) == (2, 0)
    assert len(frame.attrs["findings"]) == 1 and "6,000" in frame.attrs["findings"][0]


def test_a_worker_runs_one_window_given_alone_and_names_a_failures_type() -> None:
    broken = ContextConfig.model_construct(**{**ContextConfig().__dict__, "trigger_ratio": "high"})
    rows = run_group(
        SESSIONS[1], 6_000, {"good": ContextConfig(), "broken": broken}, None, None, True
    )
    assert [(r["config"], r["window"]) for r in rows] == [("good", 6_000), ("broken", 6_000)]
    good, bad = rows
    assert good["error"] is None and good["requests"] == 10 and type(good["requests"]) is int
    assert bad["error"].startswith("ContextConfigError: ") or bad["error"].split(":")[0].endswith(
        "Error"
    )
    assert "config is invalid" in bad["error"] and "requests" not in bad
    assert _sweep._PROBLEM not in good  # a store that served: nothing to say


def test_a_cache_that_cannot_be_written_is_said_once_with_its_count(tmp_path: Path) -> None:
    first = tmp_path / "first"
    sweep(SESSIONS, ONE, (6_000,), cache_dir=first, progress=False)
    cache = tmp_path / "cache"
    cache.mkdir()
    for entry in first.glob("*.parquet"):
        (cache / entry.name).mkdir()
    with pytest.warns(CacheNotWritten) as warned:
        frame = sweep(SESSIONS, ONE, (6_000,), cache_dir=cache, progress=False)
    assert len(warned) == 1
    problems = frame.attrs["cache_problems"]
    assert len(problems) == 2
    message = str(warned[0].message)
    assert message == (
        f"the sweep's cache in {str(cache)!r} was not fully written (2 problem(s); "
        f"frame.attrs['cache_problems'] lists them): {problems[0]}. Every computed row is "
        "returned; a later sweep computes the missing entries again"
    )


def test_a_count_store_problem_is_said_once_for_all_its_rows(tmp_path: Path) -> None:
    store = tmp_path / COUNTS_FILE
    rows = run_group(SESSIONS[1], (6_000,), ONE, None, None, True, str(store))
    assert [r["error"] for r in rows] == [None] and _sweep._PROBLEM not in rows[0]
    assert store.is_file()  # the counts were kept
    store.write_bytes(b"damaged since the sweep began" * 50)
    rows = run_group(SESSIONS[1], (6_000, 7_000), ONE, None, None, True, str(store))
    assert len({r[_sweep._PROBLEM] for r in rows}) == 1 and len(rows) == 2


BROKEN = ContextConfig.model_construct(**{**ContextConfig().__dict__, "trigger_ratio": "high"})


def test_an_invalid_config_first_costs_the_others_nothing() -> None:
    # The what-if's baseline is its first config's: an invalid one there once lost the sweep.
    alone = sweep(SESSIONS, ONE, (6_000,), progress=False)
    frame = sweep(SESSIONS, {"broken": BROKEN, **ONE}, (6_000,), progress=False)
    assert frame["config"].tolist() == ["broken", "ctxlab", "broken", "ctxlab"]
    bad = frame[frame["config"] == "broken"]
    assert bad["error"].str.startswith("UsageError: the context config is invalid").all()
    assert bad["requests"].isna().all()
    good = frame[frame["config"] == "ctxlab"].reset_index(drop=True)
    assert good["error"].isna().all()
    pd.testing.assert_frame_equal(good.drop(columns="error"), alone.drop(columns="error"))
    only = sweep(SESSIONS, {"broken": BROKEN}, (6_000, 7_000), progress=False)
    assert len(only) == 4 and only["error"].str.contains("trigger_ratio").all()


def test_a_cached_case_is_served_under_the_names_it_is_asked_by(tmp_path: Path) -> None:
    # The key is the content, not the names: a session or a config renamed is served, and the
    # row says the names of this sweep.
    first = sweep(
        [SESSIONS[1]], {"a": CONFIGS["ctxlab"]}, (6_000,), cache_dir=tmp_path, progress=False
    )
    renamed = SESSIONS[1].__class__("gamma", MODEL, SESSIONS[1].system, SESSIONS[1].messages)
    again = sweep([renamed], {"b": CONFIGS["ctxlab"]}, (6_000,), cache_dir=tmp_path, progress=False)
    assert again.attrs["cached"] == 1
    assert again[["session", "config", "window"]].values.tolist() == [["gamma", "b", 6_000]]
    assert again["cost"].tolist() == first["cost"].tolist()
    assert (tmp_path / COUNTS_FILE).is_file()  # the session's counts kept beside the cases


def test_an_error_row_is_never_cached(tmp_path: Path) -> None:
    configs = {"broken": BROKEN, **ONE}
    first = sweep(SESSIONS, configs, (6_000,), cache_dir=tmp_path, progress=False)
    assert len(list(tmp_path.glob("*.parquet"))) == 2  # the good cases only
    again = sweep(SESSIONS, configs, (6_000,), cache_dir=tmp_path, progress=False)
    assert (again.attrs["computed"], again.attrs["cached"]) == (2, 2)
    pd.testing.assert_frame_equal(again, first)


def test_a_bad_cost_model_or_executor_is_refused_before_any_work(tmp_path: Path) -> None:
    missing = [tmp_path / "missing.jsonl"]  # loading it would be the error otherwise
    with pytest.raises(UsageError, match="price"):
        sweep(missing, ONE, price="cheap", progress=False)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="unrecorded_tokens"):
        sweep(missing, ONE, unrecorded_tokens=-5, progress=False)
    with pytest.raises(UsageError) as caught:
        sweep(missing, ONE, executor=object(), progress=False)
    assert str(caught.value).startswith(
        "executor must be None, a concurrent.futures.Executor or a dask.distributed.Client, "
        "got <object object at 0x"
    )


def test_the_cache_warning_points_at_the_callers_line(tmp_path: Path) -> None:
    if "MUTANT_UNDER_TEST" in os.environ:
        pytest.skip("under mutmut a trampoline's frame stands between the caller and sweep")
    first = tmp_path / "first"
    sweep([SESSIONS[1]], ONE, (6_000,), cache_dir=first, progress=False)
    cache = tmp_path / "cache"
    cache.mkdir()
    for entry in first.glob("*.parquet"):
        (cache / entry.name).mkdir()
    with pytest.warns(CacheNotWritten) as warned:
        sweep([SESSIONS[1]], ONE, (6_000,), cache_dir=cache, progress=False)
    assert warned[0].filename == __file__
