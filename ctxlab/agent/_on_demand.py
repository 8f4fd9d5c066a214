"""`LiveAsker`: compaction on demand in a live agent — before each reasoning request, the
application's rules (`ctxlab.config.OnDemandCompaction`) are asked by the same `OnDemandAsker` a
replay holds, from what the agent knows then: the messages that arrived since its last request,
that request's size, the requests since the last compaction, and the wall clock.

A replay of the agent's own recording asks at the same requests: the asker sees the same
arrivals, the same estimated sizes, and — given the requests' send times as its ``times`` (each
manifest's ``sent_at``, by the reply the request produced) — the same pauses. Idle, live, is the
wall time between two requests being sent (the user's pause plus the model's answer).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ctxlab.messages import AssistantMessage, UserMessage
from ctxlab.pipeline import CompactionOrder
from ctxlab.pipeline._on_demand import OnDemandAsker

if TYPE_CHECKING:
    from ctxlab.agent._agent import Agent

__all__ = ["AskerState", "LiveAsker"]


@dataclasses.dataclass(frozen=True)
class AskerState:
    """What a `LiveAsker` holds before one request: kept with each step so that a fork there
    asks as the session did (`LiveAsker.restore`)."""

    asker: OnDemandAsker | None
    requests: int
    seen: int
    between: bool


class LiveAsker:
    """The agent's on-demand rules along its session: `before` each reasoning request, `sent`
    once it is prepared. Holds what the application itself would hold, and nothing while the
    config has no ``on_demand``."""

    def __init__(self, agent: Agent, clock: Callable[[], float] = time.time) -> None:
        self._agent = agent
        self._clock = clock
        self._times: dict[int, float] = {}
        # The asker's clock is keyed by request number: request n's send time.
        self._asker: OnDemandAsker | None = None
        self._requests = 0
        self._seen = agent._conversation.history_length
        """History length when the last request was prepared: what came after has arrived."""
        self._between = False
        """A compaction (manual, agentic) happened since the last request."""
        self._undo: OnDemandAsker | None = None
        """The asker as it was before the last `sent`, for a recovery that replaces it."""

    def before(self) -> CompactionOrder | None:
        """The compaction order of the reasoning request about to be prepared: forced, naming
        the rule (``asked``), when a rule asks; None (the config's own) when none does."""
        asker = self._current()
        if asker is None:
            return None
        # What arrived since the last request, and only that: O(new) a request, not O(history).
        history = self._agent._conversation.history_since(self._seen)
        arrived = [m for m in history if isinstance(m, UserMessage | AssistantMessage)]
        self._times[self._requests] = self._clock()
        return asker.order(asker.ask(self._requests, arrived), None)

    def sent(self, input_tokens: int, compacted: bool, *, recovery: bool = False) -> None:
        """Note the request just prepared (``recovery``: it replaces the last one, which the
        provider refused as too long)."""
        asker = self._asker
        if recovery:
            self._requests -= 1
            if asker is not None and self._undo is not None:
                asker = self._asker = self._undo
        if asker is not None:
            self._undo = dataclasses.replace(asker)
            asker.sent(self._requests, input_tokens, compacted or self._between)
        self._between = False
        self._requests += 1
        self._seen = self._agent._conversation.history_length

    def compacted(self) -> None:
        """A compaction outside a request (``compress_context``, the tool): the next request
        is the first after it, as after any compaction."""
        self._between = True

    def snapshot(self) -> AskerState:
        """What this asker holds now (before the request about to be prepared)."""
        asker = dataclasses.replace(self._asker) if self._asker is not None else None
        return AskerState(asker, self._requests, self._seen, self._between)

    def restore(self, state: AskerState) -> None:
        """Continue from ``state`` (a fork's point): the requests since the last compaction,
        the last request's size and what has arrived since are the session's. The clock is
        this agent's own: the pause before its first request is not known (the branch runs
        now, not when the session paused), so the idle rule waits for the next pause."""
        asker = state.asker
        if asker is not None:
            asker = dataclasses.replace(asker, times=self._times, last_time=None)
        self._asker, self._undo = asker, None
        self._requests, self._seen, self._between = state.requests, state.seen, state.between

    def _current(self) -> OnDemandAsker | None:
        policy = self._agent.context_config.on_demand
        if policy is None:
            self._asker = None
        elif self._asker is None:
            self._asker = OnDemandAsker(policy, self._times)
        elif self._asker.policy != policy:
            # A new policy from the next request on; what the application knows stays.
            self._asker = dataclasses.replace(self._asker, policy=policy)
        return self._asker
