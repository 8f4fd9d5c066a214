"""smolagents memory steps (`ctxlab.io.formats.smolagents.parse` says what is read and where it was
learned)."""

from __future__ import annotations

from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._format import SessionFormat
from ctxlab.io._readers import built_transcript
from ctxlab.io._transcript import Transcript
from ctxlab.io.formats.smolagents.parse import from_smolagents, is_smolagents_steps


def _read(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    if not isinstance(data, list):
        msg = f"{where}: smolagents memory is a list of steps (agent.memory.get_full_steps())"
        raise MessageFormatError(msg)
    builder, system, notes = from_smolagents(data, where)
    return built_transcript(name, builder, {**meta, **notes}, system, ())


FORMAT = SessionFormat(
    name="smolagents",
    tool="smolagents 1.x memory steps (get_full_steps, get_succinct_steps)",
    learned_from="huggingface/smolagents src/smolagents/memory.py, models.py, monitoring.py",
    priority=160,
    never="chat messages: steps with step_number, model_output or task",
    records=is_smolagents_steps,
    read=_read,
    census="steps",
)
