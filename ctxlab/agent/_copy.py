"""`copy_agent`: a second agent from the same point — for trying two configs side by side."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from ctxlab.exceptions import AgentBusy

if TYPE_CHECKING:
    from ctxlab.agent._agent import Agent

__all__ = ["copy_agent"]


def copy_agent(agent: Agent, **overrides: Any) -> Agent:
    """A new agent with ``agent``'s model, tools, config, instructions, sources, task state and
    working state and history as they are now; ``overrides`` go to `Agent` (e.g.
    ``context_config=...``). Source registrations are copied with their options and keep their
    source instances (000: without re-running any setup). The copy gets a new session id, so
    the two never write into one session of a shared log."""
    if agent.running:
        msg = "copy the agent between calls: a call is running"
        raise AgentBusy(msg)
    settings: dict[str, Any] = {
        "name": agent.name,
        "system_prompt": agent.system_prompt,
        "model": agent.model,
        "tools": list(agent.tools.values()),
        "context_config": agent.context_config,
        "workspace": agent.workspace,
        "permission": agent._runner.permission,
        "approver": agent._runner.approver,
        "counter": agent.token_cache.counter,
        "max_steps": agent.max_steps,
        "agent_id": agent.agent_id,
        "user_id": agent.user_id,
        "summary_model": agent.summary_model,
        "selection_policy": agent._materials.selection_policy,
        **overrides,
    }
    copy = type(agent)(**settings)  # the agent's own class: a subclass copies as itself
    for name, registration in agent.sources.items():
        copy.sources[name] = dataclasses.replace(registration)
    copy.instructions.update(agent.instructions)
    copy._tasks.state = agent.tasks.state
    copy._tasks.options = agent.tasks.options
    copy._tasks.todo_enabled = agent._tasks.todo_enabled
    copy._tasks.mode_tool_enabled = agent._tasks.mode_tool_enabled
    if not copy.history:  # (a copy told to resume a logged session keeps what it resumed)
        copy._conversation.commit(agent.context, history=agent.history)
    return copy
