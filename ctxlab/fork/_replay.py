"""A branch replaying its recording (`RecordedModel`): tools that answer the recorded calls
with the recorded results, so that nothing runs on the user's machine while the recording
answers; a call the recording never made (the model handed over to, from where the contexts
part) runs the user's own tool over the run's folder, or is told no such tool was given."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, create_model

from ctxlab.agent import Tool
from ctxlab.exceptions import ForkError, ToolDefinitionError
from ctxlab.fork._recorded_model import RecordedModel
from ctxlab.fork._tools import ToolPlan
from ctxlab.messages import ToolResultBlock, ToolUseBlock
from ctxlab.models import Model

__all__ = ["ReplayedTool", "model_and_tools", "replay_plan"]

_ANY = create_model("recorded_arguments", __config__=ConfigDict(extra="allow"))


@dataclass(eq=False)
class ReplayedTool(Tool):
    """A tool of the recording: the recorded result for a recorded call, else ``real``'s."""

    results: Mapping[str, ToolResultBlock] = field(default_factory=dict, repr=False)
    real: Tool | None = field(default=None, repr=False)

    async def run(self, tool_use_id: str, arguments: Mapping[str, Any]) -> ToolResultBlock:
        recorded = self.results.get(tool_use_id)
        if recorded is not None:
            return recorded
        if self.real is not None:
            return await self.real.run(tool_use_id, arguments)
        return ToolResultBlock(
            tool_use_id=tool_use_id,
            content=(
                f"{self.name} is a tool of the recording, given no real tool to run: pass "
                "fork tools=... to run the calls made after the contexts part"
            ),
            is_error=True,
        )


def _unrun(**_: Any) -> str:  # pragma: no cover - ReplayedTool.run answers before it
    return ""


def replay_plan(model: RecordedModel, plan: ToolPlan) -> ToolPlan:
    """The branch's tools: every tool the recording called, answering its recorded calls, over
    the user's ``plan`` (built over each run's folder) for the calls it did not make."""
    results = model.recorded_results()
    names = {
        block.name: None
        for message in model.transcript.messages
        for block in message.content
        if isinstance(block, ToolUseBlock)
    }

    def build(folder: Path) -> list[Tool]:
        real = [t if isinstance(t, Tool) else Tool.from_function(t) for t in plan.build(folder)]
        by_name = {t.name: t for t in real}
        made: list[Tool] = [t for t in real if t.name not in names]
        for name in names:
            mine = by_name.get(name)
            try:
                replayed = ReplayedTool(
                    name=name,
                    description=mine.description if mine else "A tool of the recording.",
                    fn=mine.fn if mine else _unrun,
                    arguments=mine.arguments if mine else _ANY,
                    always_allowed=mine.always_allowed if mine else False,
                    results=results,
                    real=mine,
                )
            except ToolDefinitionError:
                continue  # a name no tool may take: its calls are told there is no such tool
            made.append(replayed)
        return made

    return ToolPlan(factory=build)


def model_and_tools(
    model: Model | str | Any, plan: ToolPlan, transcript: Any, step: int
) -> tuple[Any, ToolPlan]:
    """A branch's model and tools: a recording replaying itself (``"recorded"``, a
    `RecordedModel`) from ``step`` answers its recorded calls with their recorded results;
    any other model keeps ``plan``."""
    if model == "recorded":
        model = RecordedModel(transcript)
    if not isinstance(model, RecordedModel):
        return model, plan
    if model.transcript.messages != transcript.messages:
        msg = (
            f"the RecordedModel replays {model.transcript.name!r}, not the recording forked "
            f"({transcript.name!r}): give it the same recording, or model='recorded'"
        )
        raise ForkError(msg)
    replaying = model.starting_at(step)
    return replaying, replay_plan(replaying, plan)
