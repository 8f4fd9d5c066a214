"""How a branch arrives at its fork: the `ForkPoint` it continues from, in one of two named ways.

- ``"as_it_was"`` — the state the session had at that step (a live agent's own record of it;
  a recording's request as its agent sent it, `recorded_requests`); the new config acts from
  the branch's first request on. Its earlier requests are the session's own (a recording's
  *as recorded*).
- ``"from_start"`` — the session's conversation up to that step replayed under the new config
  (`ctxlab.replay`: compactions where that config would have made them, summaries offline),
  counting the branch agent's own System parts, sources and tool schemas; the task state is
  the session's at the step. Its earlier requests are the replay's.

The branch's first request is then prepared by the branch agent itself from that state.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from ctxlab.agent import Agent, ForkPoint
from ctxlab.agent._forkpoint import REASONING, checked_step, request_materials
from ctxlab.analysis import recorded_requests, replay
from ctxlab.events import ContextBuildEvent
from ctxlab.exceptions import ForkError
from ctxlab.fork._offloads import RunOffloader
from ctxlab.io._transcript import Transcript
from ctxlab.manifest import ContextManifest
from ctxlab.materials._tasks import TaskState
from ctxlab.messages import AssistantMessage, Message, UserMessage
from ctxlab.messages._request import ModelRequest
from ctxlab.messages._state import WorkingState
from ctxlab.pipeline import Summarizer, extractive_summarizer
from ctxlab.sources import ReplaySession

__all__ = [
    "ARRIVALS",
    "ARRIVAL_FOLDER",
    "Arrival",
    "checked_arrival",
    "checked_step",
    "recorded_point",
    "replayed_point",
]

Arrival = Literal["as_it_was", "from_start"]
ARRIVALS: dict[Arrival, str] = {"as_it_was": "as it was", "from_start": "as if from the start"}
"""The two ways a branch arrives at its fork, and how they are named."""

ARRIVAL_FOLDER = "arrival"
"""Where, in a branch's folder, a replay up to the fork (*as if from the start*) offloads."""


def checked_arrival(value: object) -> Arrival:
    """``value`` if it names an arrival; `ForkError` listing them otherwise."""
    if value not in ARRIVALS:
        msg = f"arrival must be one of {list(ARRIVALS)} ({', '.join(ARRIVALS.values())}), got {value!r}"
        raise ForkError(msg)
    return value


async def recorded_point(
    transcript: Transcript, at: int, agent: Agent
) -> tuple[ForkPoint, list[ModelRequest | None]]:
    """The recording as it was at step ``at`` (its agent's request then), and the requests
    before it as recorded (manifests counted with ``agent``'s counter, at its model's
    window)."""
    requests = recorded_requests(transcript)
    step = checked_step(at, len(requests), f"recording {transcript.name!r}")
    session = ReplaySession(
        transcript,
        context_window=agent.model.context_window,
        counter=agent.token_cache.counter,
        view="recorded",
    )
    sent: list[ModelRequest | None] = []
    session.subscribe(
        lambda e: sent.append(e.request) if isinstance(e, ContextBuildEvent) else None
    )
    manifests = await session.run()
    messages = transcript.messages
    if step < len(requests):
        request = requests[step]
        conversation: tuple[Message, ...] = tuple(request.messages)
        history = messages[: request.reply]
        at_step = sent[step]
    else:
        first = next((i for i, m in enumerate(messages) if isinstance(m, UserMessage)), 0)
        conversation = (
            (*requests[-1].messages, *messages[requests[-1].reply :])
            if requests
            else messages[first:]
        )
        history, at_step = messages, None
    point = ForkPoint(
        step,
        WorkingState(conversation=conversation),
        TaskState(),
        tuple(history),
        tuple(manifests[:step]),
        at_step,
    )
    return point, sent[:step]


async def replayed_point(
    history: Sequence[Message],
    task: TaskState,
    at: int,
    agent: Agent,
    offloads: Path,
    summarizer: Summarizer | None = extractive_summarizer,
) -> tuple[ForkPoint, list[ModelRequest | None]]:
    """``history`` (the session's messages before step ``at``) replayed under ``agent``'s
    config, counting its System parts, sources and tool schemas: the state it arrives at, the
    replay's requests before it. What the replay offloads is written under ``offloads`` (the
    branch's own folder, shared by its runs: their states name those files alike)."""
    conversation = [m for m in history if isinstance(m, UserMessage | AssistantMessage)]
    start = next((i for i, m in enumerate(conversation) if isinstance(m, UserMessage)), None)
    if start is None:
        msg = "the session holds no user message before this step: there is nothing to replay"
        raise ForkError(msg)
    materials = await request_materials(agent)
    state = WorkingState()
    manifests: list[ContextManifest] = []
    sent: list[ModelRequest | None] = []
    last = start
    async for replayed in replay(
        conversation,
        context_window=agent.model.context_window,
        counter=agent.token_cache,
        config=agent.context_config,
        summarizer=summarizer,
        materials=materials,
        max_output_tokens=agent.model.max_output_tokens,
        tools=agent.tool_schemas(),
        # Named relative to that folder: the same path in each run's workspace (its copy).
        offloader=RunOffloader(offloads),
    ):
        manifests.append(replayed.manifest)
        sent.append(replayed.request)
        state, last = replayed.state, replayed.index
    # The messages after the last replayed request (its reply, the results since) join as an
    # agent's would: appended to the state that request left.
    rest = conversation[last:] if manifests else conversation[start:]
    state = state.append(*rest)
    point = ForkPoint(at, state, task, tuple(history), tuple(manifests), None)
    return point, sent


def reasoning_count(manifests: Sequence[ContextManifest]) -> int:
    """How many steps (reasoning and recovery requests) ``manifests`` hold."""
    return sum(m.purpose in REASONING for m in manifests)


def replies(history: Sequence[Message]) -> int:
    """The assistant messages of ``history``."""
    return sum(isinstance(m, AssistantMessage) for m in history)
