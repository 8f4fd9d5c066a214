"""ATIF trajectories, v1.0 to v1.7 (`ctxlab.io.formats.atif.parse` says what is read and where
it was learned)."""

from __future__ import annotations

from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._format import SessionFormat
from ctxlab.io._readers import built_transcript
from ctxlab.io._transcript import Transcript
from ctxlab.io.formats._chat import tool_schemas
from ctxlab.io.formats.atif.parse import from_atif, is_atif


def _read(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    if not isinstance(data, dict) or not isinstance(data.get("steps"), list):
        msg = f"{where}: an ATIF trajectory is a JSON object with a list of steps"
        raise MessageFormatError(msg)
    builder, system, notes = from_atif(data, where, episode)
    chosen = data["subagent_trajectories"][episode - 1] if episode else data
    agent = chosen.get("agent")
    tools = tool_schemas(agent.get("tool_definitions") if isinstance(agent, dict) else None, where)
    return built_transcript(name, builder, {**meta, **notes}, system, tools)


FORMAT = SessionFormat(
    name="atif",
    tool="ATIF trajectories (Harbor's Agent Trajectory Interchange Format), v1.0 to v1.7",
    learned_from="harbor-framework/harbor rfcs/0001-trajectory-format.md, "
    "src/harbor/models/trajectories/ (trajectory.py, step.py, metrics.py, ...)",
    priority=175,
    never="SWE-agent and mini-SWE-agent trajectories: ATIF's schema_version 'ATIF-v1.N' with "
    "an agent object",
    document=is_atif,
    read=_read,
    episodes=True,
    census="steps",
)
