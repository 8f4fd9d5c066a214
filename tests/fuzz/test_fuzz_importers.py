"""Every importer of ``ctxlab.FORMATS`` — read from the registry, so a format another change
adds is fuzzed too — on hostile variants of its real seed files and on generated JSON, JSON
Lines and bytes, with its format given and detected: `load` returns a transcript or raises a
documented error, in bounded time and memory, writing nothing (see `tests.fuzz.contract`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab import Transcript, load
from ctxlab.exceptions import CtxlabError
from ctxlab.io import FORMATS
from tests.fuzz.contract import FUZZ, holds
from tests.fuzz.mutations import hostile_values, mutated_file
from tests.fuzz.seeds import seed_files
from tests.strategies import json_value


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, ...]]:
    return seed_files(tmp_path_factory.mktemp("seeds"))


def test_every_format_has_a_seed(seeds: dict[str, tuple[Path, ...]]) -> None:
    missing = [kind for kind in FORMATS if not seeds.get(kind)]
    assert not missing, (
        f"no seed file for {missing}: add a fixture under tests/fixtures (its format is found "
        "by loading it), or a small session to tests/fuzz/seeds.py WRITTEN"
    )


def _loaded(path: Path, kind: str | None) -> Transcript | None:
    def call() -> Transcript:
        try:
            return load(path, format=kind)  # type: ignore[arg-type]
        except CtxlabError as exc:
            # Which file: a user listing a folder must know which one to look at.
            assert path.name in str(exc), f"the error does not name the file: {exc}"
            raise

    return holds(call, watched=[path.parent])


@pytest.mark.parametrize("kind", FORMATS)
@FUZZ
@given(data=st.data())
def test_a_hostile_variant_of_a_real_file(
    kind: str, seeds: dict[str, tuple[Path, ...]], data: st.DataObject, tmp_path_factory: Any
) -> None:
    if not seeds.get(kind):
        pytest.skip(f"{kind} has no seed (test_every_format_has_a_seed says so)")
    seed = seeds[kind][data.draw(st.integers(0, 99), label="seed") % len(seeds[kind])]
    variant = data.draw(mutated_file(seed), label="variant")
    path = tmp_path_factory.mktemp("v") / seed.name
    path.write_bytes(variant)
    for given_kind in (kind, None):  # told, and detected
        transcript = _loaded(path, given_kind)
        if transcript is not None:
            _sound(transcript)


def _sound(transcript: Transcript) -> None:
    """What a loaded transcript promises whatever its file held: messages that round-trip,
    every tool call answered, usage of whole counts."""
    from ctxlab.messages import find_tool_pair_problems

    # Other tools' files are repaired on import; ctxlab's own are read as written (lossless):
    # a hand-edited one may hold an orphan result, which a replay then names (InvalidToolPairs).
    if transcript.meta.get("source", "ctxlab") != "ctxlab":
        assert find_tool_pair_problems(transcript.messages) == []
    for usage in transcript.usage.values():
        assert usage.total_input_tokens >= 0
    assert isinstance(transcript.name, str)


documents = st.one_of(
    json_value,
    st.lists(json_value, max_size=6),
    hostile_values,
    st.dictionaries(
        st.sampled_from(["messages", "data", "samples", "history", "spans", "resourceSpans"]),
        st.lists(json_value, max_size=4),
        max_size=3,
    ),
)


@FUZZ
@given(
    kind=st.sampled_from([None, *FORMATS]),
    content=st.one_of(
        documents.map(lambda v: json.dumps(v).encode()),
        st.lists(documents, min_size=1, max_size=6).map(
            lambda vs: "\n".join(json.dumps(v) for v in vs).encode()
        ),
        st.binary(max_size=600),
    ),
    name=st.sampled_from(["s.json", "s.jsonl", "s.traj", "s.eval", ".aider.chat.history.md"]),
)
def test_generated_files(
    kind: str | None, content: bytes, name: str, tmp_path_factory: Any
) -> None:
    path = tmp_path_factory.mktemp("g") / name
    path.write_bytes(content)
    transcript = _loaded(path, kind)
    if transcript is not None:
        _sound(transcript)


@FUZZ
@given(kind=st.sampled_from([None, *FORMATS]), value=documents)
def test_generated_data_in_memory(kind: str | None, value: Any) -> None:
    transcript = holds(lambda: load(value, format=kind))  # type: ignore[arg-type]
    if transcript is not None:
        _sound(transcript)
