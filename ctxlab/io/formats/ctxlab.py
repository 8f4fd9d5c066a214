"""ctxlab's own JSON Lines: a ``meta`` line, then one message a line (`Transcript.save`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxlab.io._format import FileSource, SessionFormat
from ctxlab.io._transcript import Transcript, read_transcript


def _is_ctxlab(value: Mapping[str, Any]) -> bool:
    return value.get("type") == "meta"


def _read_file(source: FileSource) -> tuple[Transcript, list[Any] | None]:
    # Its meta line carries the notes of the load it was saved from (totals among them): what
    # it holds of its own is its messages and their usage.
    values = [value for _, value in source.records] or [source.document]
    return read_transcript(source.path), values[1:]


FORMAT = SessionFormat(
    name="ctxlab",
    tool="ctxlab (Transcript.save, SessionLog)",
    learned_from="ctxlab/io/_transcript.py",
    priority=10,
    never="another tool's JSON Lines: only a first line of type 'meta'",
    document=_is_ctxlab,
    read_file=_read_file,
    census="lines",
)
