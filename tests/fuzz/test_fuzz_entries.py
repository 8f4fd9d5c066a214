"""What `load` accepts, every user's entry point runs (`tests.fuzz.entries`): `Lab.open` in both
views, `WhatIfLab.open` with a slider's move and its table, `replay`, and `fork` at a few steps
run forward by the offline model — on every fixture as it is, on the corpus (``make fuzz``), on
hostile variants of every format's seeds, and on generated sessions. Each returns or raises a
documented error with a message, in bounded time, writing only where it was told.

The unit suite's share: every fixture at one window (memory unmeasured: tracemalloc makes the
Lab several times slower) and a few drawn inputs per test; ``make fuzz`` adds every window with
memory measured, the corpus, and its thousands of draws."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import Transcript, load
from ctxlab.config._presets import PRESETS
from ctxlab.io import FORMATS
from tests.fuzz.contract import AT_LENGTH, EXAMPLES, FUZZ, MEGABYTES, at_length, holds
from tests.fuzz.entries import ENTRIES, WINDOWS, corpus_sessions, drive
from tests.fuzz.generated import claude_code_sessions, ctxlab_sessions
from tests.fuzz.mutations import mutated_file
from tests.fuzz.seeds import seed_files

# Imported here, untimed (seconds under tracemalloc), not by the first entry point drawn.
pytest.importorskip(
    "ctxlab.widgets", reason="the Lab needs the widgets extra: pip install 'ctxlab[lab]'"
)


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, ...]]:
    return seed_files(tmp_path_factory.mktemp("seeds"))


def _loaded(path: Path, kind: str | None = None) -> Transcript | None:
    return holds(lambda: load(path, format=kind), watched=[path.parent])  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", FORMATS)
async def test_every_fixture_through_every_entry(
    kind: str, seeds: dict[str, tuple[Path, ...]], tmp_path: Path
) -> None:
    if not seeds.get(kind):
        pytest.skip(f"{kind} has no seed (test_every_format_has_a_seed says so)")
    for number, seed in enumerate(seeds[kind]):
        transcript = load(seed)  # a seed is a sound session of its format
        windows = WINDOWS if AT_LENGTH else WINDOWS[number % len(WINDOWS) :][:1]
        for window in windows:
            await drive(
                transcript,
                tmp_path / f"{number}-{window}",
                window=window,
                path=seed,
                megabytes=MEGABYTES if AT_LENGTH else None,
            )


@at_length
@pytest.mark.parametrize(
    ("number", "path"), list(enumerate(corpus_sessions())), ids=lambda v: getattr(v, "name", str(v))
)
async def test_every_corpus_session_through_every_entry(
    number: int, path: Path, tmp_path: Path
) -> None:
    transcript = _loaded(path)
    if transcript is None:
        pytest.skip(f"{path.name}: load refuses it (a documented error)")
    # One window a session, in turn (the corpus has dozens: every window of each would double
    # `make fuzz`); a real session runs long under tracemalloc — a minute, not a hang.
    window = WINDOWS[number % len(WINDOWS)]
    await drive(transcript, tmp_path, window=window, path=path, seconds=600)


@pytest.mark.parametrize("kind", FORMATS)
@settings(FUZZ, max_examples=max(EXAMPLES // 10, 3))
@given(data=st.data())
async def test_a_hostile_variant_through_an_entry(
    kind: str, seeds: dict[str, tuple[Path, ...]], data: st.DataObject, tmp_path_factory: Any
) -> None:
    if not seeds.get(kind):
        pytest.skip(f"{kind} has no seed (test_every_format_has_a_seed says so)")
    seed = seeds[kind][data.draw(st.integers(0, 99), label="seed") % len(seeds[kind])]
    folder = tmp_path_factory.mktemp("variant")
    path = folder / seed.name
    path.write_bytes(data.draw(mutated_file(seed), label="variant"))
    await _one_entry(
        path, data.draw(st.sampled_from([kind, None]), label="format"), data, tmp_path_factory
    )


@settings(FUZZ, max_examples=max(EXAMPLES, 10))
@given(content=ctxlab_sessions() | claude_code_sessions(), data=st.data())
async def test_a_generated_session_through_an_entry(
    content: bytes, data: st.DataObject, tmp_path_factory: Any
) -> None:
    folder = tmp_path_factory.mktemp("generated")
    path = folder / "session.jsonl"
    path.write_bytes(content)
    await _one_entry(path, None, data, tmp_path_factory)


async def _one_entry(path: Path, kind: str | None, data: st.DataObject, factory: Any) -> None:
    # The file loaded (or refused, by a documented error), then one entry point drawn, at a
    # window drawn: a draw costs about a second, not the five of every entry.
    transcript = _loaded(path, kind)
    if transcript is None:
        return
    await drive(
        transcript,
        factory.mktemp("out"),
        window=data.draw(st.sampled_from(WINDOWS), label="window"),
        path=path,
        entries=(data.draw(st.sampled_from(ENTRIES), label="entry"),),
        preset=data.draw(st.sampled_from([None, *PRESETS]), label="preset"),
    )
