"""AutoGen AgentChat saved state, 0.4–0.7 (`ctxlab.io.formats.autogen.parse` says what is read and where it
was learned); ``episode`` picks the agent."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._format import SessionFormat
from ctxlab.io._readers import built_transcript
from ctxlab.io._transcript import Transcript
from ctxlab.io.formats.autogen.parse import from_autogen, is_autogen_state


def _read(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    if not isinstance(data, Mapping):
        msg = f"{where}: an AutoGen state is a JSON object (type, version, ...)"
        raise MessageFormatError(msg)
    builder, system, notes = from_autogen(data, where, episode)
    return built_transcript(name, builder, {**meta, **notes}, system, ())


FORMAT = SessionFormat(
    name="autogen",
    tool="AutoGen AgentChat save_state() of a team or an agent, 0.4–0.7",
    learned_from="microsoft/autogen autogen_agentchat/state/_states.py, "
    "autogen_core/models/_types.py, autogen_agentchat/messages.py",
    priority=110,
    never="other JSON objects: a state's type and version",
    document=is_autogen_state,
    read=_read,
    episodes=True,
    census="every list of messages in the state",
)
