"""A recording played back through the real agent loop: the model answers each reasoning request
with the next recorded assistant message, each tool answers with the recorded result of its
call, and every user turn of the recording is sent as a new call.

Unlike a replay (`ctxlab.replay`, the pipeline alone), this runs everything an agent runs —
compaction with its summary requests, overflow handling, the usage notice, the session log — so
what a config does to a *live* agent (its summary requests' sizes, above all) can be measured on
sessions that were recorded elsewhere.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from ctxlab.agent._tools import Tool
from ctxlab.messages import AssistantMessage, TextBlock, ToolResultBlock, UserMessage
from ctxlab.models import ScriptedModel

__all__ = ["Playback", "play", "recorded_model", "recorded_tools"]

Message = UserMessage | AssistantMessage


class _AnyArguments(BaseModel):
    model_config = ConfigDict(extra="allow")


def _nothing() -> str:
    return ""


@dataclass
class _RecordedTool(Tool):
    results: Mapping[str, ToolResultBlock] = field(default_factory=dict)

    async def run(self, tool_use_id: str, arguments: Mapping[str, Any]) -> ToolResultBlock:
        recorded = self.results.get(tool_use_id)
        if recorded is None:
            return ToolResultBlock(
                tool_use_id=tool_use_id, content="No result was recorded.", is_error=True
            )
        return recorded


def recorded_tools(messages: Sequence[Message]) -> list[Tool]:
    """One tool per tool name the recording calls, answering each call with its recorded
    result (an error result for a call the recording never answered)."""
    results = {
        r.tool_use_id: r for m in messages if isinstance(m, UserMessage) for r in m.tool_results
    }
    names = dict.fromkeys(
        u.name for m in messages if isinstance(m, AssistantMessage) for u in m.tool_uses
    )
    return [
        _RecordedTool(
            name, "A tool of the recorded session.", _nothing, _AnyArguments, results=results
        )
        for name in names
    ]


def recorded_model(messages: Sequence[Message], *, context_window: int) -> ScriptedModel:
    """A model that answers with the recording's assistant messages, in order (its summaries are
    offline: `extractive_summarizer`)."""
    replies = [m for m in messages if isinstance(m, AssistantMessage)]
    return ScriptedModel(replies, name="recorded", context_window=context_window)


@dataclass
class Playback:
    """What `play` did."""

    calls: int = 0
    """Agent calls made (one per user turn of the recording)."""
    error: str | None = None
    """Why the playback stopped early, if it did."""


def _prompt(message: UserMessage) -> str:
    return "\n".join(b.text for b in message.content if isinstance(b, TextBlock)).strip()


async def play(agent: Any, messages: Sequence[Message]) -> Playback:
    """Send each user turn of ``messages`` to ``agent`` (built with `recorded_model` and
    `recorded_tools` of the same messages), in order; stops at the first error and says why."""
    done = Playback()
    for message in messages:
        if not isinstance(message, UserMessage) or message.tool_results:
            continue
        prompt = _prompt(message)
        if not prompt:
            continue
        try:
            await agent(prompt)
        except Exception as exc:  # a recording the loop cannot follow: reported, not raised
            if agent.model.remaining == 0:
                # A recording that ends on a tool call: its last result was the last word.
                done.calls += 1
                return done
            done.error = f"{type(exc).__name__}: {exc}"
            return done
        done.calls += 1
        if agent.model.remaining == 0:
            break
    return done
