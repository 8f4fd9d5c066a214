"""Codex CLI ``codex exec --json`` event streams (`ctxlab.io.formats.codex_exec.parse` says what is read and
where it was learned)."""

from __future__ import annotations

from typing import Any

from ctxlab.io._format import SessionFormat
from ctxlab.io._readers import built_transcript
from ctxlab.io._transcript import Transcript
from ctxlab.io.formats.codex_exec.parse import from_codex_exec, is_codex_exec_line


def _read(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    lines = data if isinstance(data, list) else [data]
    builder, notes = from_codex_exec(enumerate(lines, 1), where)
    return built_transcript(name, builder, {**meta, **notes}, "", ())


FORMAT = SessionFormat(
    name="codex_exec",
    tool="codex exec --json (three generations, September 2025 on)",
    learned_from="openai/codex codex-rs/exec/src/exec_events.rs, "
    "event_processor_with_jsonl_output.rs",
    priority=140,
    never="Codex rollouts (their lines have a payload)",
    document=is_codex_exec_line,
    read=_read,
    census="lines by event type",
)
