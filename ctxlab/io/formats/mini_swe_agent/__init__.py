"""mini-SWE-agent trajectories, 1.x and 2.x (`ctxlab.io.formats.mini_swe_agent.parse` says what is read and
where it was learned)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxlab.io._format import SessionFormat
from ctxlab.io._readers import built_transcript
from ctxlab.io._transcript import Transcript
from ctxlab.io.formats.mini_swe_agent.parse import from_mini_swe_agent, is_mini_swe_agent_list


def _read(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    builder, system, notes = from_mini_swe_agent(data, where)
    return built_transcript(name, builder, {**meta, **notes}, system, ())


def _is_trajectory(value: Mapping[str, Any]) -> bool:
    return "trajectory_format" in value and "messages" in value


FORMAT = SessionFormat(
    name="mini_swe_agent",
    tool="mini-SWE-agent trajectories (traj.json; a bare message list), 1.x and 2.x",
    learned_from="SWE-agent/mini-swe-agent agents/default.py, "
    "models/utils/actions_text.py, actions_toolcall.py",
    priority=165,
    never="SWE-agent trajectories and plain OpenAI messages: trajectory_format, or mini's "
    "extra/exit/mswea_bash_command",
    document=_is_trajectory,
    records=is_mini_swe_agent_list,
    read=_read,
    census="messages",
)
