"""Gemini CLI ``--output-format stream-json`` output (`ctxlab.io.formats.gemini_stream.parse` says what is
read and where it was learned); its ``--output-format json`` result is claimed too, and refused
by the reader saying what to record instead."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxlab.io._format import SessionFormat
from ctxlab.io._readers import built_transcript
from ctxlab.io._transcript import Transcript
from ctxlab.io.formats.gemini_stream.parse import (
    from_gemini_stream,
    is_gemini_json_output,
    is_gemini_stream,
    is_gemini_stream_line,
)


def _read(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    lines = data if isinstance(data, list) else [data]
    builder, notes = from_gemini_stream(enumerate(lines, 1), where)
    return built_transcript(name, builder, {**meta, **notes}, "", ())


def _is_document(value: Mapping[str, Any]) -> bool:
    return is_gemini_stream_line(value) or is_gemini_json_output(value)


def _is_stream(values: list[Any]) -> bool:
    return is_gemini_stream(values[:20])  # its init line or timestamps missing: by its events


FORMAT = SessionFormat(
    name="gemini_stream",
    tool="Gemini CLI --output-format stream-json (and json, refused saying why)",
    learned_from="google-gemini/gemini-cli packages/core/src/output/types.ts, "
    "stream-json-formatter.ts, packages/cli/src/nonInteractiveCli.ts (2026-08)",
    priority=50,
    never="Gemini CLI's recorded sessions (their records have ids and a type of their own)",
    document=_is_document,
    records=is_gemini_stream,
    lines=_is_stream,
    read=_read,
    census="lines by event type",
)
