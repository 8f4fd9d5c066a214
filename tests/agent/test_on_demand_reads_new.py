"""`LiveAsker.before` reads only what arrived (review of stop 64): it copied the agent's whole
history at every reasoning request (``history[seen:]`` of a fresh tuple), O(n) a request and
O(n²) a session. It now reads the messages after its place, counted here by the history list
itself: every message read, by iteration or by a slice. The control: a read of the whole
history (``ConversationOwner.history``) is counted whole."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from ctxlab.agent._conversation import ConversationOwner
from ctxlab.agent._on_demand import LiveAsker
from ctxlab.config import OnDemandCompaction
from ctxlab.config._config import ContextConfig
from ctxlab.messages import AssistantMessage, UserMessage


class _Counted(list[Any]):
    """A history list that counts the messages read from it."""

    reads = 0

    def __iter__(self) -> Any:
        for message in super().__iter__():
            self.reads += 1
            yield message

    def __getitem__(self, key: Any) -> Any:
        got = super().__getitem__(key)
        self.reads += len(got) if isinstance(key, slice) else 1
        return got


def _session(turns: int) -> tuple[ConversationOwner, LiveAsker, _Counted]:
    owner = ConversationOwner()
    history = owner._history = _Counted()
    config = ContextConfig(on_demand=OnDemandCompaction(at_task=True))
    agent = SimpleNamespace(_conversation=owner, context_config=config)
    asker = LiveAsker(agent, clock=lambda: 0.0)  # type: ignore[arg-type]
    for n in range(turns):
        owner.append(UserMessage(content=f"task {n}"))
        asker.before()
        asker.sent(100, compacted=False)
        owner.append(AssistantMessage(content=f"done {n}"))
    return owner, asker, history


def test_each_request_reads_only_what_arrived() -> None:
    for turns in (50, 400):
        _, _, history = _session(turns)
        # The first request reads its one message, each later one the reply and the new task.
        assert history.reads == 1 + 2 * (turns - 1), turns


def test_the_control_a_whole_read_is_counted_whole() -> None:
    owner, _, history = _session(50)
    before = history.reads
    assert len(owner.history) == 100
    assert history.reads - before == 100
