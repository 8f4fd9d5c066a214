"""SWE-agent trajectories (``.traj``), with and without function calling
(`ctxlab.io.formats.swe_agent.parse`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._format import SessionFormat
from ctxlab.io._readers import built_transcript
from ctxlab.io._transcript import Transcript
from ctxlab.io.formats.swe_agent.parse import from_swe_agent, is_swe_agent


def _read(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    if not isinstance(data, Mapping):
        msg = f"{where}: a SWE-agent trajectory is a JSON object"
        raise MessageFormatError(msg)
    builder, system = from_swe_agent(data, where)
    return built_transcript(name, builder, meta, system, ())


FORMAT = SessionFormat(
    name="swe_agent",
    tool="SWE-agent trajectories (.traj), v0 and function calling",
    learned_from="SWE-agent's .traj files (history, trajectory, info) as its runs write them",
    priority=170,
    never="mini-SWE-agent trajectories (their trajectory_format)",
    document=is_swe_agent,
    read=_read,
    census="history messages, trajectory steps",
    suffixes=(".traj",),
)
