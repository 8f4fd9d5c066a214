"""`agent_transcript`: an agent's session as a `Transcript`, to save, share or replay."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxlab.io._transcript import Transcript, usage_by_reply

if TYPE_CHECKING:
    from ctxlab.agent._agent import Agent

__all__ = ["agent_transcript"]


def agent_transcript(agent: Agent) -> Transcript:
    """The durable history, System prompt and tool schemas of ``agent``, with the provider usage
    of each answered request placed on the assistant message it produced."""
    history = tuple(agent.history)
    answered = [
        m.provider_usage
        for m in agent.manifests
        if m.purpose in ("reasoning", "recovery") and m.provider_usage is not None
    ]
    return Transcript(
        name=agent.session_id,
        meta={
            "source": "ctxlab",
            "agent_id": agent.agent_id,
            "session_id": agent.session_id,
            "model": agent.model.name,
        },
        system=agent.system_prompt,
        messages=history,
        tools=agent.tool_schemas(),
        usage=usage_by_reply(history, answered),
    )
