"""Letta agent files (``.af``), v1 and v2 (`ctxlab.io.formats.letta.parse` says what is read and where it
was learned); ``episode`` picks the agent."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._format import SessionFormat
from ctxlab.io._readers import built_transcript
from ctxlab.io._transcript import Transcript
from ctxlab.io.formats.letta.parse import from_letta, is_letta_agent_file


def _read(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    if not isinstance(data, Mapping):
        msg = f"{where}: a Letta agent file is a JSON object (agents, tools, ...)"
        raise MessageFormatError(msg)
    builder, system, tools, notes = from_letta(data, where, episode)
    return built_transcript(name, builder, {**meta, **notes}, system, tools)


FORMAT = SessionFormat(
    name="letta",
    tool="Letta agent files (.af), v1 and v2",
    learned_from="letta-ai/letta letta/schemas/agent_file.py, "
    "serialize_schemas/pydantic_agent_schema.py; letta-ai/agent-file",
    priority=100,
    never="other JSON objects: an agent's messages with its llm_config, or agents",
    document=is_letta_agent_file,
    read=_read,
    episodes=True,
    census="every agent's messages",
    suffixes=(".af",),
)
