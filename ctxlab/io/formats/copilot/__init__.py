"""GitHub Copilot CLI sessions: ``~/.copilot/session-state/<id>/events.jsonl``
(`ctxlab.io.formats.copilot.parse` says what is read and where it was learned)."""

from __future__ import annotations

from typing import Any

from ctxlab.io._format import SessionFormat
from ctxlab.io._readers import built_transcript
from ctxlab.io._transcript import Transcript
from ctxlab.io.formats.copilot.parse import from_copilot, is_copilot_line


def _read(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    lines = data if isinstance(data, list) else [data]
    builder, system, notes = from_copilot(enumerate(lines, 1), where)
    # A session is a folder named by its id, holding events.jsonl: named for the session.
    named = str(notes.get("session_id") or name) if name == "events" else name
    return built_transcript(named, builder, {**meta, **notes}, system, ())


FORMAT = SessionFormat(
    name="copilot",
    tool="GitHub Copilot CLI session events (events.jsonl), CLI to 1.0.81",
    learned_from="github/copilot-sdk nodejs/src/generated/session-events.ts (commit cc0438d)",
    priority=80,
    never="Claude Code or Codex lines: an event with Copilot's dotted type and data",
    document=is_copilot_line,
    line_format=True,
    read=_read,
    census="lines by event type",
)
