"""A transcript saved by ctxlab: a meta line and a line a message."""

from __future__ import annotations

from pathlib import Path

from ctxlab import load
from tests.io.contracts import FIXTURES, Case
from tests.io.contracts.count import Lines


def _saved(folder: Path) -> Path:
    path = folder / "saved.jsonl"
    load(FIXTURES / "goose" / "export.json").save(path)
    return path


CONTRACT = [Case(_saved, records=Lines(), label="saved.jsonl")]
