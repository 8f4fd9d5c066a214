"""Compaction on demand along a session: before each request, whether the application asks for
a summary (`ctxlab.config.OnDemandCompaction`'s rules), from what it knows then — the messages
that arrived since its last request, that request's input tokens, the requests since the last
compaction and the clock. A replay holds one `OnDemandAsker` and turns each ask into a forced
`CompactionOrder`; the pipeline then compacts as it always does (the prefix summarized, the
summary sent in its place, the tail kept)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ctxlab.config._config import ContextConfig
from ctxlab.config._on_demand import OnDemandCompaction
from ctxlab.manifest import AskRule
from ctxlab.messages import AssistantMessage, TextBlock, UserMessage
from ctxlab.pipeline._prepare_inputs import CompactionOrder

__all__ = ["OnDemandAsker", "on_demand_asker"]


def _new_task(arrived: Sequence[UserMessage | AssistantMessage]) -> bool:
    # The user spoke: a user message that answers no call and holds words (a results turn with
    # a harness's reminder beside the results is not a new task).
    return any(
        isinstance(m, UserMessage)
        and not m.tool_results
        and any(isinstance(b, TextBlock) and b.text.strip() for b in m.content)
        for m in arrived
    )


@dataclass
class OnDemandAsker:
    """The application's side of compaction on demand over one session's requests: `ask`
    before each request, `sent` after it. State is what the application itself would hold."""

    policy: OnDemandCompaction
    times: Mapping[int, float]
    """When each reply was recorded (by message index): the requests' clock."""
    since: int = 0
    """Requests sent since the last compaction (or the start)."""
    last_input: int | None = None
    """The last request's input tokens (None before the first)."""
    last_time: float | None = None
    """When the last request was sent, when known."""
    armed: bool = True
    """Whether the token mark may ask: not after a compaction that left the request at or
    above the mark (asking again could not bring it below: it would summarize at every
    request), until a request falls below it."""

    def ask(self, index: int, arrived: Sequence[UserMessage | AssistantMessage]) -> AskRule | None:
        """The rule by which the application asks for a summary before the request that
        produced reply ``index`` (``arrived``: the messages since its last request), or None."""
        if self.last_input is None or self.last_input < self.policy.min_tokens:
            return None  # nothing sent yet, or too little to be worth a summary call
        policy = self.policy
        if policy.at_task and _new_task(arrived):
            return "task"
        if policy.every_requests is not None and self.since >= policy.every_requests:
            return "requests"
        if policy.at_tokens is not None and self.armed and self.last_input >= policy.at_tokens:
            return "tokens"
        pause = self._pause(index)
        if policy.idle_seconds is not None and pause is not None and pause > policy.idle_seconds:
            return "idle"
        return None

    def order(self, rule: AskRule | None, idle: CompactionOrder | None) -> CompactionOrder | None:
        """The request's compaction order: forced when a rule asked, else ``idle`` (the order
        compacting while idle gave it, if any)."""
        if rule is None:
            return idle
        instructions = self.policy.instructions
        return CompactionOrder(force=True, instructions=instructions, keep_arrived=True, asked=rule)

    def sent(self, index: int, input_tokens: int, compacted: bool) -> None:
        """Note the request that produced reply ``index``: its input and whether it compacted."""
        # A request that compacted is the first one sent after its compaction.
        self.since = 1 if compacted else self.since + 1
        self.last_input = input_tokens
        mark = self.policy.at_tokens
        if mark is not None:
            self.armed = input_tokens < mark or (self.armed and not compacted)
        at = self.times.get(index)
        self.last_time = at if at is not None and math.isfinite(at) else None

    def _pause(self, index: int) -> float | None:
        at = self.times.get(index)
        if at is None or self.last_time is None or not math.isfinite(at):
            return None
        return max(at - self.last_time, 0.0)


def on_demand_asker(
    config: ContextConfig | None, times: Mapping[int, float] | None
) -> OnDemandAsker | None:
    """The asker of ``config``'s on-demand policy (None when it has none)."""
    if not isinstance(config, ContextConfig) or config.on_demand is None:
        return None
    return OnDemandAsker(config.on_demand, times or {})
