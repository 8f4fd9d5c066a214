"""Goose sessions: the JSON Lines files of ``~/.local/share/goose/sessions/`` (to 1.9) and
``goose session export`` output (1.10 on) — `ctxlab.io.formats.goose.parse` says what is read and where it
was learned."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxlab.io._format import SessionFormat
from ctxlab.io._readers import built_transcript
from ctxlab.io._transcript import Transcript
from ctxlab.io.formats.goose.parse import from_goose, is_goose_export, is_goose_line


def _read(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    builder, notes, tools = from_goose(data if isinstance(data, list) else [data], where)
    return built_transcript(name, builder, {**meta, **notes}, "", tools)


def _is_goose(value: Mapping[str, Any]) -> bool:
    return is_goose_export(value) or is_goose_line(value)


FORMAT = SessionFormat(
    name="goose",
    tool="Goose sessions (JSONL to 1.9, session export from 1.10)",
    learned_from="block/goose crates/goose/src/conversation/message.rs, session/legacy.rs, "
    "session_manager.rs (2026)",
    priority=130,
    never="Anthropic or OpenAI messages: camelCase content types with created",
    document=_is_goose,
    line_format=True,
    read=_read,
    census="lines (metadata, messages)",
)
