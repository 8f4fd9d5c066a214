"""Gemini CLI sessions: ``~/.gemini/tmp/<project>/chats/session-*.jsonl`` (older: one
``session-*.json``) — `ctxlab.io.formats._gemini` says what is read and where it was learned."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxlab.config._harness_presets import gemini_cli_trigger
from ctxlab.io._compaction_thresholds import ToolThreshold
from ctxlab.io._format import SessionFormat
from ctxlab.io._readers import built_transcript
from ctxlab.io._transcript import Transcript
from ctxlab.io.formats._gemini import from_gemini_cli, is_gemini_cli


def _read(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    builder, notes = from_gemini_cli(data if isinstance(data, list) else [data], where)
    return built_transcript(name, builder, {**meta, **notes}, "", ())


def _first_is_session(value: list[Any]) -> bool:
    return bool(value) and isinstance(value[0], Mapping) and is_gemini_cli(value[0])


THRESHOLDS = (
    # Chat compression at compressionThreshold (0.5) of the model's token limit.
    ToolThreshold(
        "gemini_cli",
        ((0,), None),
        "compressionThreshold 0.5 × the model's token limit",
        "gemini-cli packages/core/src/services/chatCompressionService.ts "
        "(DEFAULT_COMPRESSION_TOKEN_THRESHOLD)",
        gemini_cli_trigger,
    ),
)


FORMAT = SessionFormat(
    name="gemini_cli",
    tool="Gemini CLI chat recordings (JSONL sessions, older JSON sessions)",
    learned_from="google-gemini/gemini-cli packages/core/src/services/chatRecordingService.ts, "
    "chatRecordingTypes.ts, utils/sessionUtils.ts (2026)",
    priority=40,
    never="Gemini CLI's stream-json output or Gemini API contents: a session's metadata "
    "(sessionId + projectHash) or a message record (id, type, content, timestamp)",
    document=is_gemini_cli,
    records=_first_is_session,
    line_format=True,
    read=_read,
    census="lines (records, $set and $rewindTo updates)",
    thresholds=THRESHOLDS,
)
