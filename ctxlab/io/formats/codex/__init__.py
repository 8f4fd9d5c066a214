"""Codex CLI rollouts: ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`` (`ctxlab.io.formats.codex.parse`
says what is read and where it was learned)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxlab.config._harness_presets import codex_trigger
from ctxlab.io._compaction_thresholds import ToolThreshold
from ctxlab.io._format import SessionFormat
from ctxlab.io._readers import built_transcript
from ctxlab.io._transcript import Transcript
from ctxlab.io.formats.codex.parse import from_codex, is_codex_line


def _read(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    lines = data if isinstance(data, list) else [data]
    builder, system, notes = from_codex(enumerate(lines, 1), where)
    return built_transcript(name, builder, {**meta, **notes}, system, ())


def _first_is_line(value: list[Any]) -> bool:
    return bool(value) and isinstance(value[0], Mapping) and is_codex_line(value[0])


THRESHOLDS = (
    # Auto-compaction at 90 % of the model's window (a configured limit can only lower it).
    ToolThreshold(
        "codex",
        ((0,), None),
        "90 % of the context window (model_auto_compact_token_limit can lower it)",
        "codex-rs/protocol/src/openai_models.rs (auto_compact_token_limit)",
        codex_trigger,
    ),
)


FORMAT = SessionFormat(
    name="codex",
    tool="Codex CLI rollouts (rollout-*.jsonl), 2025–2026",
    learned_from="openai/codex codex-rs/protocol/src/protocol.rs (RolloutLine, RolloutItem), "
    "models.rs (ResponseItem)",
    priority=70,
    never="codex exec --json events: a rollout line has timestamp, type and payload",
    document=is_codex_line,
    records=_first_is_line,
    line_format=True,
    read=_read,
    census="lines by type and payload type",
    thresholds=THRESHOLDS,
)
