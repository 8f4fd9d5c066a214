"""The digest of what `load` makes of every file and folder of a tree: one line per source, the
transcript's whole content (name, System text, messages, tools, usage, times, meta) or the
error it raised, hashed — so that a refactoring of io/ can be checked to load everything as
before (`tests/io/test_load_digests.py`; the pinned digests in ``tests/fixtures/load_digests.json``
were taken on the code before the format registry)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxlab import load
from ctxlab.exceptions import CtxlabError
from ctxlab.io._transcript import Transcript, corpus_dir

_NOT_SESSIONS = {"LICENSE", "README.md", "SOURCE.md", "load_digests.json"}


def sources(root: Path) -> Iterator[Path]:
    """Every file (but licences, READMEs, scripts) and every folder under ``root``, sorted."""
    for path in sorted(root.rglob("*")):
        if path.name in _NOT_SESSIONS or path.suffix in (".py", ".pyc", ".csv"):
            continue
        if "__pycache__" not in path.parts:
            yield path


def shown(transcript: Transcript) -> str:
    """Everything a transcript holds, as text (every field; the repr of each value)."""
    parts = (
        transcript.name,
        transcript.system,
        repr(transcript.messages),
        repr(transcript.tools),
        repr(sorted(transcript.usage.items())),
        repr(sorted(transcript.times.items())),
        repr(transcript.meta),
    )
    return "\x00".join(parts)


def digest(path: Path, root: Path) -> str:
    """The hash of what `load` makes of ``path`` (its error's type and text when it fails),
    with ``root`` taken out of every path it mentions."""
    try:
        text = shown(load(path))
    except CtxlabError as exc:
        text = f"{type(exc).__name__}: {exc}"
    text = text.replace(str(root.resolve()), "<root>").replace(str(root), "<root>")
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def digests(root: Path) -> dict[str, str]:
    """The digest of every source under ``root``, keyed by its path relative to it."""
    return {str(p.relative_to(root)): digest(p, root) for p in sources(root)}


def raw_corpus() -> Path:
    """The corpus's raw files' folder, the digests' second tree; the test is skipped, saying
    what to set, where no corpus is here."""
    raw = corpus_dir() / "raw"
    if not raw.is_dir():
        pytest.skip("no corpus: set CTXLAB_CORPUS to the folder holding raw/")
    return raw
