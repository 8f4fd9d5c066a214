"""An agent as static HTML: its model, window, what its context holds, its latest request."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ctxlab.manifest._html import manifest_html
from ctxlab.util._html import escape, table_html

if TYPE_CHECKING:
    from ctxlab.agent._agent import Agent

__all__ = ["agent_html"]


def agent_html(agent: Agent) -> str:
    """The agent at a glance: model, window, what its context holds, its latest request."""
    model = agent.model
    facts: list[list[Any]] = [
        ["model", f"{model.name} ({model.context_window:,}-token window)"],
        ["tools", ", ".join(t.name for t in agent.tool_schemas()) or "none"],
        [
            "in context",
            f"{len(agent.context.conversation)} messages"
            + (" and a summary" if agent.context.summary else ""),
        ],
        ["said in all", f"{len(agent.history)} messages"],
        ["requests prepared", len(agent.manifests)],
    ]
    latest = manifest_html(agent.manifests[-1]) if agent.manifests else ""
    return f"<b>Agent {escape(agent.name)}</b>" + table_html(facts, ["", ""]) + latest
