"""`ForkPoint`: the session as it was when one of its reasoning requests was prepared — what a
fork of a live agent starts from (`ctxlab.fork`).

The agent keeps, for every reasoning request it prepares, a `StepMark`: the committed working
state and task state the request was prepared from, how long the durable history and the list
of manifests were then, and the request as prepared. The marks hold references to immutable
values (states, messages), never copies, so keeping one per step costs a few pointers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ctxlab.exceptions import ForkError
from ctxlab.manifest import ContextManifest
from ctxlab.materials import ContextRequest, Materials
from ctxlab.materials._tasks import TaskState
from ctxlab.messages import Message
from ctxlab.messages._request import ModelRequest
from ctxlab.messages._state import WorkingState
from ctxlab.util._checks import shown

if TYPE_CHECKING:
    from ctxlab.agent._agent import Agent
    from ctxlab.agent._on_demand import AskerState

__all__ = [
    "REASONING",
    "ForkPoint",
    "StepMark",
    "checked_step",
    "fork_point",
    "request_materials",
    "step_manifests",
    "step_requests",
]

REASONING = ("reasoning", "recovery")
"""The purposes that count as a step (the Lab's rows): a recovery request stands in for the
reasoning request the provider refused."""


@dataclass
class StepMark:
    """What an agent keeps of one reasoning request, to fork there later."""

    state: WorkingState
    """The committed working state the request was prepared from (before its compaction)."""
    task: TaskState
    """The task state then."""
    history_length: int
    """How many messages the durable history held then."""
    manifest_index: int
    """How many manifests came before (summary calls of this request's compaction excluded)."""
    request: ModelRequest | None = None
    """The request as prepared (None when its preparation failed)."""
    asker: AskerState | None = None
    """The on-demand rules' state before the request (`ctxlab.config.OnDemandCompaction`)."""


@dataclass(frozen=True)
class ForkPoint:
    """The session as it was at one step, before that step's request was prepared."""

    step: int
    """The step (the request's number among the reasoning requests, the Lab's x); the number
    of steps for the point after the last one (the session as it is now)."""
    state: WorkingState
    """The working state the step's request was prepared from (compactions before it
    applied; the step's own compaction, if it made one, not yet)."""
    task: TaskState
    """The task state then (todo list, requirements, ...)."""
    history: tuple[Message, ...]
    """The durable history up to then: every message, uncompacted."""
    manifests: tuple[ContextManifest, ...]
    """The manifests of every request before the step (summary calls included)."""
    request: ModelRequest | None = None
    """The request the session sent at this step (None at the end, or when it failed)."""
    asker: AskerState | None = None
    """The on-demand rules' state then: a fork asks as the session would have (None: a point
    that did not keep it, whose fork starts the rules afresh)."""


def step_manifests(manifests: list[ContextManifest]) -> list[int]:
    """The positions in ``manifests`` of the steps (reasoning and recovery requests)."""
    return [i for i, m in enumerate(manifests) if m.purpose in REASONING]


def checked_step(at: object, count: int, what: str) -> int:
    """``at`` as one of ``count`` steps (negative counts from the last; ``count`` is the end);
    `ForkError` naming the steps there are otherwise (``what`` names the session)."""
    if not isinstance(at, int) or isinstance(at, bool):
        msg = f"a fork's step is a request number (an int), got {shown(at)}"
        raise ForkError(msg)
    step = at + count if at < 0 else at
    if not 0 <= step <= count:
        msg = (
            f"no step {shown(at)}: {what} has steps 0 to {count - 1} (or {count}, the end: the "
            "session as it is now)"
            if count
            else f"no step {shown(at)}: {what} has made no request yet; fork it at 0 (its state "
            "now)"
        )
        raise ForkError(msg)
    return step


def step_requests(agent: Agent) -> list[ModelRequest | None]:
    """The request ``agent`` sent at each of its steps (None where its preparation failed, or
    for a step made before this agent object existed)."""
    manifests = agent.manifests
    marks = agent._preparer.marks
    return [
        mark.request if (mark := marks.get(manifests[i].request_id)) is not None else None
        for i in step_manifests(manifests)
    ]


def fork_point(agent: Agent, step: int) -> ForkPoint:
    """The session of ``agent`` as it was at ``step`` (negative counts from the last step;
    the number of steps is the end: the session as it is now). `ForkError` for a step the
    session never made, or made before this agent object existed (a resumed session)."""
    manifests = agent.manifests
    steps = step_manifests(manifests)
    count = len(steps)
    at = checked_step(step, count, "this session")
    if at == count:
        asker = agent._preparer.on_demand.snapshot()
        return ForkPoint(
            count, agent.context, agent.tasks.state, agent.history, tuple(manifests), None, asker
        )
    manifest = manifests[steps[at]]
    mark = agent._preparer.marks.get(manifest.request_id)
    if mark is None:
        msg = (
            f"step {at} was made before this agent object existed (a session resumed from its "
            "log): its working state was not kept. Fork the session's recording instead "
            f"(ctxlab.fork.fork): fork(agent.transcript(), at={at}, ...)"
        )
        raise ForkError(msg)
    history = agent.history[: mark.history_length]
    manifests_before = tuple(manifests[: mark.manifest_index])
    return ForkPoint(at, mark.state, mark.task, history, manifests_before, mark.request, mark.asker)


async def request_materials(agent: Agent) -> Materials:
    """What ``agent``'s next reasoning request holds besides its conversation — System parts,
    workspace material, sources — loaded once: what a replay of its session (a fork arriving
    *as if from the start*) counts at every step."""
    request = ContextRequest(agent.agent_id, agent.user_id, agent.session_id, "replay", "reasoning")
    return await agent._materials.load(
        "reasoning",
        request,
        count=agent.token_cache.text,
        workspace_max_tokens=agent.context_config.budget.workspace_max_tokens,
    )
