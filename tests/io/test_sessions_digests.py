"""Every figure `sessions` shows is unchanged by its speed work (issue 54 item 4): the rows of
``sessions`` over tests/fixtures (and over the corpus's raw files, when ``CTXLAB_CORPUS`` is
set) hash as pinned in ``tests/fixtures/sessions_digests.json``, taken with main's code before
the inventory walk was made faster. A row is hashed whole but for its modification time and
with the folder taken out of its path (neither is a figure of the file). The controls show the
digest sees one figure of one row change, and one character of a session file."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd

from ctxlab import ApproximateCounter, AssistantMessage, TokenCache, load, sessions
from ctxlab.io._transcript import corpus_dir
from tests.io.digests import raw_corpus

FIXTURES = Path(__file__).parents[1] / "fixtures"
PINNED = json.loads((FIXTURES / "sessions_digests.json").read_text())
_PINS = ("digests.json", "figures.json")


def _shown(value: Any) -> str:
    # pandas' gaps (None, NaN, NA) as one text: the figure is "none", whatever its dtype.
    return (
        "<none>"
        if value is None or (not isinstance(value, str) and pd.isna(value))
        else (repr(value))
    )


def row_digests(root: Path) -> dict[str, str]:
    """Each row of ``sessions(root)`` hashed, keyed by its path below ``root`` and episode."""
    frame = sessions(root, progress=False, workers=1)
    out: dict[str, str] = {}
    for row in frame.to_dict("records"):
        where = str(Path(row["path"]).relative_to(root))
        if where.endswith(_PINS):
            continue  # the pinned figures themselves (this file's among them), not a session
        text = "\x00".join(
            f"{column}={_shown(value)}".replace(str(root), "<root>")
            for column, value in row.items()
            if column not in ("path", "modified")
        )
        key = f"{where}#{_shown(row['episode'])}"
        out[key] = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return out


def _changed(found: dict[str, str], pinned: dict[str, str]) -> list[str]:
    return sorted(key for key in pinned if found.get(key) != pinned[key])


def test_every_fixture_row_shows_the_figures_it_showed_before() -> None:
    found = row_digests(FIXTURES)
    assert len(found) == len(PINNED["fixtures"]) >= 60
    assert _changed(found, PINNED["fixtures"]) == []


def test_every_corpus_row_shows_the_figures_it_showed_before() -> None:
    raw = raw_corpus()
    found = row_digests(raw)
    assert len(found) == len(PINNED["corpus"]) >= 40
    assert _changed(found, PINNED["corpus"]) == []


def test_the_digest_sees_one_figure_and_one_character(tmp_path: Path) -> None:
    source = FIXTURES / "sessions" / "claude_code_session.jsonl"
    shutil.copy(source, tmp_path / source.name)
    before = row_digests(tmp_path)
    text = (tmp_path / source.name).read_text()
    at = text.index('"text": "') + len('"text": "')
    # Words added to a reply: its size (conversation_tokens) is another figure.
    (tmp_path / source.name).write_text(text[:at] + "a few more words " + text[at:])
    after = row_digests(tmp_path)
    assert list(before) == list(after) and before != after  # the same row, another figure
    frame = sessions(tmp_path, progress=False, workers=1)
    assert int(frame.loc[0, "messages"]) > 1  # a real row, not a problem's


def _as_load_says(root: Path) -> list[str]:
    # Each loaded row of ``sessions(root)`` beside what `load` says of its file: the rows whose
    # figures differ.
    frame = sessions(root, progress=False, workers=1)
    differ = []
    for row in frame[frame["problem"].isna()].to_dict("records"):
        transcript = load(row["path"], episode=int(row["episode"]))
        census = transcript.census
        said = {
            "messages": len(transcript.messages),
            "requests": sum(isinstance(m, AssistantMessage) for m in transcript.messages),
            "conversation_tokens": TokenCache(ApproximateCounter()).messages(transcript.messages),
            "unaccounted": (census.unplaced_line() or None) if census is not None else None,
        }
        shown = {key: row[key] for key in said}
        if {k: None if pd.isna(v) else v for k, v in shown.items()} != said:
            differ.append(f"{row['path']}#{row['episode']}: {shown} != {said}")
    return differ


def test_what_a_row_shows_is_what_load_says_of_its_file() -> None:
    assert _as_load_says(FIXTURES) == []
    raw = corpus_dir() / "raw"
    if raw.is_dir():
        assert _as_load_says(raw) == []
