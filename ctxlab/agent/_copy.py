"""`copy_agent`: a second agent from the same point — for trying two configs side by side; and
`begin_at`: a new agent that continues a session from one of its steps (a fork's)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from ctxlab.agent._forkpoint import REASONING, ForkPoint
from ctxlab.exceptions import AgentBusy, UsageError

if TYPE_CHECKING:
    from ctxlab.agent._agent import Agent

__all__ = ["begin_at", "copy_agent"]


def copy_agent(agent: Agent, *, start: ForkPoint | None = None, **overrides: Any) -> Agent:
    """A new agent with ``agent``'s model, tools, config, instructions, sources, task state and
    working state and history as they are now; ``overrides`` go to `Agent` (e.g.
    ``context_config=...``). Source registrations are copied with their options and keep their
    source instances (000: without re-running any setup). The copy gets a new session id, so
    the two never write into one session of a shared log. With ``start`` (`fork_point`)
    the copy continues from that step instead of from now (`begin_at`)."""
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
    if start is not None:
        begin_at(copy, start)
    elif not copy.history:  # (a copy told to resume a logged session keeps what it resumed)
        copy._conversation.commit(agent.context, history=agent.history)
    return copy


def begin_at(agent: Agent, point: ForkPoint, *, origin: dict[str, Any] | None = None) -> None:
    """Make ``agent`` (new: no call made, nothing logged) continue from ``point``: its working
    state, task state and durable history become the point's, and the manifests before it are
    its own first manifests (the Lab draws them; the next request's diff is to the last).

    With a session log, the history is written as the session's first turn, with a ``fork``
    event holding ``origin`` (where the point came from)."""
    if agent.history or agent.manifests or agent._recorder.turns:
        msg = "begin_at needs a new agent: this one has a history of its own already"
        raise UsageError(msg)
    agent._conversation.commit(point.state, history=point.history)
    agent._tasks.state = point.task
    preparer = agent._preparer
    preparer.manifests.extend(point.manifests)
    # The manifest the next request's diff is to: the last request sent, as the agent's was.
    preparer._previous = next(
        (
            m
            for m in reversed(point.manifests)
            if m.purpose in REASONING and m.validation == "passed"
        ),
        None,
    )
    agent._recorder.commit_start(
        list(point.history),
        point.state,
        point.task,
        ("fork", {"step": point.step, **(origin or {})}),
    )
