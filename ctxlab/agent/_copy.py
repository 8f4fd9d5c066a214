"""`copy_agent`: a second agent from the same point — for trying two configs side by side;
`AgentSettings`: what makes an agent the agent it is apart from its session, kept to build more
of it later (a fork's branches); `begin_at`: a new agent that continues a session from one of
its steps."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ctxlab.agent._forkpoint import REASONING, ForkPoint
from ctxlab.exceptions import AgentBusy, UsageError
from ctxlab.materials import SourceRegistration
from ctxlab.materials._tasks import TaskOptions, TaskState

if TYPE_CHECKING:
    from ctxlab.agent._agent import Agent

__all__ = ["AgentSettings", "agent_settings", "begin_at", "copy_agent"]


@dataclass(frozen=True)
class AgentSettings:
    """An agent's settings as they were when taken (`agent_settings`): its constructor's
    arguments, sources, instructions and task state and options. `build` makes a new agent of
    them; later changes to the agent they were taken from do not reach them."""

    kind: type[Agent]
    """The agent's class (a subclass builds as itself)."""
    arguments: dict[str, Any]
    """`Agent`'s keyword arguments (name, system prompt, model, tools, config, ...)."""
    sources: dict[str, SourceRegistration] = field(default_factory=dict)
    """Source registrations, copied with their options (the source objects are shared)."""
    instructions: dict[str, str] = field(default_factory=dict)
    task: TaskState = field(default_factory=TaskState)
    task_options: TaskOptions = field(default_factory=TaskOptions)
    todo_enabled: bool = False
    mode_tool_enabled: bool = False

    def build(self, **overrides: Any) -> Agent:
        """A new agent of these settings; ``overrides`` replace constructor arguments."""
        agent = self.kind(**{**self.arguments, **overrides})
        for name, registration in self.sources.items():
            agent.sources[name] = dataclasses.replace(registration)
        agent.instructions.update(self.instructions)
        agent._tasks.state = self.task
        agent._tasks.options = self.task_options
        agent._tasks.todo_enabled = self.todo_enabled
        agent._tasks.mode_tool_enabled = self.mode_tool_enabled
        return agent


def agent_settings(agent: Agent) -> AgentSettings:
    """``agent``'s settings now (see `AgentSettings`); its session (working state, history,
    session id, log) is not part of them."""
    arguments: dict[str, Any] = {
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
    }
    return AgentSettings(
        type(agent),
        arguments,
        {n: dataclasses.replace(r) for n, r in agent.sources.items()},
        dict(agent.instructions),
        agent.tasks.state,
        agent.tasks.options,
        agent._tasks.todo_enabled,
        agent._tasks.mode_tool_enabled,
    )


def copy_agent(agent: Agent, *, start: ForkPoint | None = None, **overrides: Any) -> Agent:
    """A new agent with ``agent``'s model, tools, config, instructions, sources, task state and
    working state and history as they are now; ``overrides`` go to `Agent` (e.g.
    ``context_config=...``). Source registrations are copied with their options and keep their
    source instances (000: without re-running any setup). The copy gets a new session id, so
    the two never write into one session of a shared log. With ``start`` (`fork_point`) the
    copy continues from that step instead of from now (`begin_at`)."""
    if agent.running:
        msg = "copy the agent between calls: a call is running"
        raise AgentBusy(msg)
    copy = agent_settings(agent).build(**overrides)
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
    if point.asker is not None:
        preparer.on_demand.restore(point.asker)
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
