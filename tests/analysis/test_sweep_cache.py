"""The sweep's Parquet cache, called directly (fast: no replay): an entry is served only for the
case it was computed for — the session's content, the config, the window, ctxlab's version, the
figures' definition and the cost model each make another key — and only whole: a figure changed,
of the wrong type, or an entry of another shape is computed again (None), never served."""

from __future__ import annotations

import builtins
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import ContextConfig, Transcript
from ctxlab.analysis import _sweep_cache
from ctxlab.analysis._comparison import COMPARISON_COLUMNS
from ctxlab.analysis._sweep_cache import (
    SWEEP_COLUMNS,
    SweepCache,
    figures_digest,
    transcript_key,
)
from ctxlab.exceptions import UsageError, WriteError
from ctxlab.messages import AssistantMessage, ProviderUsage, ToolSchema, UserMessage

CONFIG = ContextConfig()
ROW: dict[str, Any] = {
    "requests": 9,
    "tokens_sent": 41_210,
    "cost": 0.123456789,
    "cost_vs_baseline": -0.25,
    "cost_vs_no_compaction": 0.1,
    "compactions": 2,
    "retention": 0.875,
    "retention_min": 0.5,
    "retention_control": 0.125,
    "next_use_retention": 0.75,
    "next_use_floor": 0.25,
    "peak": 5_900,
    "errors": 0,
    "failed_at": None,
    "over_limit_billed": 1,
}


def _figures(row: dict[str, Any]) -> dict[str, Any]:
    return {c: row[c] for c in COMPARISON_COLUMNS}


def _transcript(**changes: Any) -> Transcript:
    fields: dict[str, Any] = {
        "name": "alpha",
        "meta": {},
        "system": "You triage logs.",
        "messages": (UserMessage(content="Find the error."), AssistantMessage(content="Done.")),
        "tools": (ToolSchema("grep", "Search files.", {"type": "object", "properties": {}}),),
        "usage": {1: ProviderUsage(input_tokens=1_200, output_tokens=30)},
    }
    fields.update(changes)
    return Transcript(
        fields["name"],
        fields["meta"],
        fields["system"],
        fields["messages"],
        tools=fields["tools"],
        usage=fields["usage"],
        times=fields.get("times", {}),
    )


@pytest.fixture
def cache(tmp_path: Path) -> SweepCache:
    return SweepCache(tmp_path / "cache", "price|rules|True|None")


def test_an_entry_put_is_served_for_its_own_case_only(cache: SweepCache) -> None:
    row = {"session": "alpha", "config": "ctxlab", "window": 6_000, **ROW, "error": None}
    cache.put("k1", CONFIG, 6_000, row)
    (entry,) = cache.folder.glob("*.parquet")
    assert entry.name == f"{_sweep_cache._case_key('k1', CONFIG, 6_000, cache.extra)}.parquet"
    got = cache.get("k1", CONFIG, 6_000)
    assert got is not None
    assert _figures(got) == ROW
    assert (got["session"], got["config"], got["window"], got["error"]) == (
        "alpha",
        "ctxlab",
        6_000,
        None,
    )
    # Another session's content, config, window or cost model: nothing served.
    assert cache.get("k2", CONFIG, 6_000) is None
    assert cache.get("k1", ContextConfig(trigger_ratio=0.5), 6_000) is None
    assert cache.get("k1", CONFIG, 12_000) is None
    other = SweepCache(cache.folder, "dearer|rules|True|None")
    assert other.get("k1", CONFIG, 6_000) is None


def test_the_key_holds_every_part_of_the_case(monkeypatch: pytest.MonkeyPatch) -> None:
    key = _sweep_cache._case_key
    base = key("s", CONFIG, 6_000, "x")
    assert len(base) == 24 and int(base, 16) >= 0
    assert base == key("s", ContextConfig(), 6_000, "x")
    changed = {
        key("t", CONFIG, 6_000, "x"),
        key("s", ContextConfig(trigger_ratio=0.5), 6_000, "x"),
        key("s", CONFIG, 6_001, "x"),
        key("s", CONFIG, 6_000, "y"),
    }
    monkeypatch.setattr(_sweep_cache, "__version__", "99.0.0")
    changed.add(key("s", CONFIG, 6_000, "x"))
    monkeypatch.undo()
    monkeypatch.setattr(_sweep_cache, "FIGURES", "another-definition")
    changed.add(key("s", CONFIG, 6_000, "x"))
    assert len(changed) == 6 and base not in changed


def test_a_sessions_key_is_its_content() -> None:
    base = transcript_key(_transcript())
    assert len(base) == 24
    assert transcript_key(_transcript()) == base
    # The name and meta are not content: a session renamed is the same replay.
    assert transcript_key(_transcript(name="beta", meta={"source": "x"})) == base
    schema = {"type": "object", "properties": {}}
    others = [
        _transcript(system="You write code."),
        _transcript(tools=(ToolSchema("rg", "Search files.", schema),)),
        _transcript(tools=(ToolSchema("grep", "Search the files.", schema),)),
        _transcript(tools=(ToolSchema("grep", "Search files.", {"type": "object"}),)),
        _transcript(tools=()),
        _transcript(messages=(UserMessage(content="Find the bug."),)),
        _transcript(usage={1: ProviderUsage(input_tokens=1_201, output_tokens=30)}),
        _transcript(usage={}),
        # The times the prompt cache expires on: the same messages an hour apart cost more.
        _transcript(times={1: 1_780_000_000.0}),
    ]
    keys = {transcript_key(t) for t in others}
    assert len(keys) == len(others) and base not in keys


def test_an_entry_of_another_shape_is_not_served(cache: SweepCache) -> None:
    row = {"session": "alpha", "config": "ctxlab", "window": 6_000, **ROW, "error": None}
    cache.put("k1", CONFIG, 6_000, row)
    (entry,) = cache.folder.glob("*.parquet")
    good = pd.read_parquet(entry)
    pd.concat([good, good]).to_parquet(entry)  # two rows
    assert cache.get("k1", CONFIG, 6_000) is None
    good.drop(columns=["digest"]).to_parquet(entry)  # a column missing
    assert cache.get("k1", CONFIG, 6_000) is None
    good[list(reversed(good.columns))].to_parquet(entry)  # the columns in another order
    assert cache.get("k1", CONFIG, 6_000) is None
    good.assign(key="0" * 24).to_parquet(entry)  # another case's key, its digest recomputed
    assert cache.get("k1", CONFIG, 6_000) is None
    good.assign(error="boom").to_parquet(entry)  # an error row is never cached
    assert cache.get("k1", CONFIG, 6_000) is None
    good.assign(compactions=True).to_parquet(entry)  # a flag (numpy's bool_), not a count
    assert cache.get("k1", CONFIG, 6_000) is None
    good.to_parquet(entry)  # and back whole: served
    got = cache.get("k1", CONFIG, 6_000)
    assert got is not None and _figures(got) == ROW


def test_an_entry_that_cannot_be_written_is_named(cache: SweepCache) -> None:
    key = _sweep_cache._case_key("k1", CONFIG, 6_000, cache.extra)
    (cache.folder / f"{key}.parquet").mkdir()
    with pytest.raises(
        WriteError, match=r"^cannot write the sweep cache entry to '.*': it is a folder"
    ):
        cache.put("k1", CONFIG, 6_000, {"session": "a", "config": "c", "window": 6_000, **ROW})


def test_a_missing_figure_is_served_as_missing(cache: SweepCache) -> None:
    # ``failed_at`` and the cost of a failed replay are missing, not damaged.
    partial = {**ROW, "cost": None, "failed_at": 4}
    cache.put("k1", CONFIG, 6_000, {"session": "a", "config": "c", "window": 6_000, **partial})
    got = cache.get("k1", CONFIG, 6_000)
    assert got is not None
    assert got["cost"] is None and got["failed_at"] == 4 and got["peak"] == 5_900


def test_numpy_numbers_are_figures() -> None:
    row = {**ROW, "requests": np.int64(9), "cost": np.float64(0.5)}
    assert _sweep_cache._valid_figures(row)
    assert figures_digest("k", row) == figures_digest("k", {**ROW, "requests": 9, "cost": 0.5})
    assert not _sweep_cache._valid_figures({**ROW, "peak": "5900"})
    assert not _sweep_cache._valid_figures({**ROW, "peak": True})
    assert not _sweep_cache._valid_figures({**ROW, "error": "ValueError: x"})
    assert _sweep_cache._valid_figures({**ROW, "peak": None})


def test_the_digest_is_exact_and_reads_every_figure() -> None:
    base = figures_digest("k", ROW)
    assert len(base) == 24
    assert figures_digest("k", dict(ROW)) == base
    assert figures_digest("other", ROW) != base
    # A whole float is its integer; a missing figure is None or NaN alike.
    assert figures_digest("k", {**ROW, "peak": 5_900.0}) == base
    assert figures_digest("k", {**ROW, "failed_at": float("nan")}) == base
    assert figures_digest("k", {k: v for k, v in ROW.items() if k != "failed_at"}) == base
    # The last bit of a float changes it.
    assert figures_digest("k", {**ROW, "cost": math.nextafter(ROW["cost"], 1.0)}) != base
    # A figure 0 is not a missing one.
    assert figures_digest("k", {**ROW, "failed_at": 0}) != base
    # Columns that are not figures are not in it.
    assert figures_digest("k", {**ROW, "session": "beta", "error": "x"}) == base


@settings(database=None, max_examples=60, deadline=None)
@given(
    column=st.sampled_from(COMPARISON_COLUMNS),
    value=st.one_of(
        st.integers(min_value=-(2**60), max_value=2**60),
        st.floats(allow_nan=False, allow_infinity=False),
    ),
)
def test_any_one_figure_changed_changes_the_digest(column: str, value: float) -> None:
    changed = {**ROW, column: value}
    same = value == ROW[column] and ROW[column] is not None
    assert (figures_digest("k", changed) == figures_digest("k", ROW)) is same


def test_a_cache_folder_is_made_or_refused_by_name(tmp_path: Path) -> None:
    deep = tmp_path / "a" / "b"
    cache = SweepCache(deep, "x")
    assert deep.is_dir() and cache.folder == deep and cache.extra == "x"
    SweepCache(deep, "x")  # an existing folder is fine
    file = tmp_path / "file"
    file.write_text("mine")
    with pytest.raises(UsageError, match=r"'.*file' is a file: give a folder"):
        SweepCache(file, "x")
    with pytest.raises(UsageError) as caught:
        SweepCache(file / "sub", "x")
    # The system's reason in words, not the exception's repr.
    assert (
        str(caught.value)
        == f"cannot create the cache folder {str(file / 'sub')!r}: Not a directory"
    )
    assert file.read_text() == "mine"


def test_without_pyarrow_the_cache_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = builtins.__import__

    def no_pyarrow(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "pyarrow":
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    with pytest.raises(UsageError) as caught:
        SweepCache(tmp_path / "cache", "x")
    assert str(caught.value) == (
        "cache_dir= needs pyarrow for its Parquet files: pip install 'ctxlab[sweep]'"
    )
    assert not (tmp_path / "cache").exists()


def test_the_columns_are_the_frames() -> None:
    assert ("session", "config", "window", *COMPARISON_COLUMNS, "error") == SWEEP_COLUMNS
