"""`agent_transcript`: an agent's session as a `Transcript`, to save, share or replay."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxlab.io._transcript import Transcript, usage_by_reply
from ctxlab.messages import Message, TextBlock, ToolResultBlock, UserMessage
from ctxlab.models import to_anthropic_block

if TYPE_CHECKING:
    from ctxlab.agent._agent import Agent

__all__ = ["SENT_RESULTS", "agent_transcript", "sent_results"]

SENT_RESULTS = "sent_results"
"""The meta key of a ctxlab transcript's tool results as its requests sent them: by call id,
each result in the Anthropic format, where it went cut or offloaded (the messages keep it
whole). A fork replaying the recording compares its requests with what was sent."""


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
            SENT_RESULTS: sent_results(history, agent._preparer.sent_results, agent.workspace),
        },
        system=agent.system_prompt,
        messages=history,
        tools=agent.tool_schemas(),
        usage=usage_by_reply(history, answered),
    )


def sent_results(
    history: Sequence[Message], sent: Mapping[str, ToolResultBlock], folder: Path | None = None
) -> dict[str, dict[str, Any]]:
    """The results of ``history`` that went differently from how it keeps them (``sent``: as
    the requests first sent each, by call id), in the Anthropic format — the paths under
    ``folder`` (the workspace) made relative, as a fork's run shows its own."""
    kept = {b.tool_use_id: b for m in history if isinstance(m, UserMessage) for b in m.tool_results}
    return {
        key: to_anthropic_block(_relative(block, folder))
        for key, block in sent.items()
        if key in kept and block != kept[key]
    }


def _relative(block: ToolResultBlock, folder: Path | None) -> ToolResultBlock:
    if folder is None:
        return block
    prefix = f"{str(folder).rstrip('/')}/"
    if isinstance(block.content, str):
        return block.model_copy(update={"content": block.content.replace(prefix, "")})
    parts = tuple(
        p.model_copy(update={"text": p.text.replace(prefix, "")}) if isinstance(p, TextBlock) else p
        for p in block.content
    )
    return block.model_copy(update={"content": parts})
