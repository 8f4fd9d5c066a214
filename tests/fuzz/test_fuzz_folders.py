"""`sessions()` over folders of hostile files, and the stores a sweep keeps — the count store
and the Parquet cache — damaged: the listing has one row per file, a sweep one row per case with
the figures of a sweep without a cache (or a documented error before any work), time and memory
are bounded, and nothing is written but in the cache folder (see `tests.fuzz.contract`)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ctxlab import ContextConfig, sessions, sweep
from ctxlab.io import FORMATS
from ctxlab.io._listing import companion, session_suffixes
from ctxlab.messages import AssistantMessage, TextBlock, UserMessage
from ctxlab.tokens import ApproximateCounter, CountStore, TokenCache
from tests.fuzz.contract import FUZZ, holds
from tests.fuzz.mutations import DAMAGE, damage_with, mutated_file
from tests.fuzz.seeds import seed_files


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, ...]]:
    return seed_files(tmp_path_factory.mktemp("seeds"))


@FUZZ
@given(data=st.data())
def test_a_folder_of_hostile_files_lists_one_row_a_file(
    seeds: dict[str, tuple[Path, ...]], data: st.DataObject, tmp_path_factory: Any
) -> None:
    folder = tmp_path_factory.mktemp("folder")
    written: list[str] = []
    for n in range(data.draw(st.integers(1, 5), label="files")):
        kind = data.draw(st.sampled_from([k for k in FORMATS if seeds[k]]), label="format")
        seed = seeds[kind][data.draw(st.integers(0, 99), label="seed") % len(seeds[kind])]
        variant = data.draw(mutated_file(seed) | st.binary(max_size=300), label="variant")
        name = f"{n}-{seed.name}"
        (folder / name).write_bytes(variant)
        if name.lower().endswith(session_suffixes()):
            written.append(name)
    frame = holds(lambda: sessions(folder, workers=1, progress=False), watched=[folder])
    assert frame is not None  # sessions() raises nothing over what the files hold
    # One row a file (episode 0; a subagent a file holds is a row of its own, of that file).
    files = frame[frame["episode"].fillna(0) == 0]
    listed = [Path(p).name for p in files["path"]]
    assert len(set(listed)) == len(listed)
    assert set(listed) <= set(written) and {Path(p).name for p in frame["path"]} <= set(written)
    # Every written file is listed but Markdown that is no chat history (its bytes damaged) and a
    # part of a session listed under another of its files (a Cline task's UI messages).
    surely = [w for w in written if not w.lower().endswith(".md") and not companion(folder / w)]
    assert set(surely) <= set(listed)
    loaded = frame[frame["problem"].isna()]
    assert loaded["messages"].notna().all()  # (ctxlab's own format may hold none)
    assert frame.loc[frame["problem"].notna(), "messages"].isna().all()


def _session(n: int) -> list[UserMessage | AssistantMessage]:
    return [
        (UserMessage if i % 2 == 0 else AssistantMessage)(
            content=(TextBlock(text=f"message {i}: " + "word " * (i + 3)),)
        )
        for i in range(n)
    ]


class _Sound(bytes):
    """A sound store's bytes, shown short: Hypothesis prints every argument of a failing case,
    and a 68 kB repr is refused as a warning (an error here) that hides the real finding."""

    def __repr__(self) -> str:
        return f"<a sound count store, {len(self)} bytes>"


@pytest.fixture(scope="module")
def sound_store(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = tmp_path_factory.mktemp("store") / "c.sqlite"
    store = CountStore(path)
    TokenCache(ApproximateCounter(), store=store).count_ahead(_session(300))
    store.close()
    return _Sound(path.read_bytes())


@FUZZ
# Every draw is made up front by `given`, none from inside the test: with `st.data()` Hypothesis
# reported "inconsistent data generation" about one run in three under load.
@given(damage=DAMAGE, noise=st.none() | st.binary(max_size=5_000))
# Found by this test: one bit of the index flipped led SQLite to a sound row of a block that was
# not asked for, and the cache's bookkeeping raised KeyError (the offset is this store's index).
@example(damage=[("flip", 27726, b"\x10", 1, 1)], noise=None)
def test_a_damaged_count_store(
    sound_store: bytes, damage: Any, noise: bytes | None, tmp_path_factory: Any
) -> None:
    folder = tmp_path_factory.mktemp("store")
    path = folder / "c.sqlite"
    path.write_bytes(damage_with(sound_store, damage) if noise is None else noise)
    journals = [path.with_name(path.name + s) for s in ("-journal", "-wal", "-shm")]
    store = holds(
        lambda: CountStore(path, timeout=0.5), watched=[folder], may_write=[path, *journals]
    )
    session = _session(40)
    plain = TokenCache(ApproximateCounter())
    expected = [plain.message(m) for m in session]
    if store is None:
        return
    cache = TokenCache(ApproximateCounter(), store=store)

    def count() -> list[int]:
        cache.count_ahead(session)
        return [cache.message(m) for m in session]

    # A count the damage left readable may differ from a fresh one only if it is a count the
    # store had (a whole number in range): never a crash, and never a count out of range.
    counts = holds(count, watched=[folder], may_write=[path, *journals])
    assert counts is not None and len(counts) == len(expected)
    assert all(0 <= c < 2**41 for c in counts)
    holds(lambda: store.close())


@pytest.fixture(scope="module")
def sweep_inputs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any, pd.DataFrame, Path]:
    from tests.analysis.test_sweep import CONFIGS, SESSIONS

    sessions_ = SESSIONS[:1]
    configs = {"ctxlab": CONFIGS["ctxlab"], "tight": ContextConfig(trigger_ratio=0.5)}
    expected = sweep(sessions_, configs, (6_000,), progress=False)
    cache = tmp_path_factory.mktemp("sound-cache")
    sweep(sessions_, configs, (6_000,), cache_dir=cache, progress=False)
    return sessions_, configs, expected, cache


@FUZZ
@given(data=st.data())
def test_a_sweep_over_a_damaged_cache(
    sweep_inputs: tuple[Any, Any, pd.DataFrame, Path], data: st.DataObject, tmp_path_factory: Any
) -> None:
    sessions_, configs, expected, sound = sweep_inputs
    root = tmp_path_factory.mktemp("sweep")
    cache = root / "cache"
    shutil.copytree(sound, cache)
    entries = sorted(cache.iterdir())
    # Drawn whole, before anything is done: the draws never depend on the files (which hold
    # timings, and differ from run to run).
    plan = data.draw(
        st.lists(
            st.tuples(
                st.sampled_from(["keep", "damage", "junk", "folder"]),
                DAMAGE,
                st.binary(max_size=2_000),
            ),
            min_size=len(entries),
            max_size=len(entries),
        ),
        label="plan",
    )
    for entry, (choice, damage, junk) in zip(entries, plan, strict=True):
        if choice == "damage":
            entry.write_bytes(damage_with(entry.read_bytes(), damage))
        elif choice == "junk":
            entry.write_bytes(junk)
        elif choice == "folder" and entry.suffix == ".parquet":
            entry.unlink()
            entry.mkdir()  # the entry's name taken by a folder
    (root / "outside").mkdir()

    def run() -> pd.DataFrame:
        import warnings

        from ctxlab.exceptions import CacheNotWritten

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CacheNotWritten)  # said; the rows are what count
            return sweep(sessions_, configs, (6_000,), cache_dir=cache, progress=False)

    frame = holds(run, watched=[root], may_write=[cache])
    if frame is None:  # the count store refused before any work (a CountStoreError)
        return
    columns = [c for c in frame.columns if c != "replay_ms"]
    pd.testing.assert_frame_equal(frame[columns], expected[columns])
