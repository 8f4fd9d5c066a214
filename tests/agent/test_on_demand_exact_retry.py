"""A compaction on demand whose request the exact count then finds too long (review of stop
63): the agent prepares the request again, compacting at its lines (`Preparer._counted`), not
as the rule ordered. What is emitted says what was sent: the event's trigger and rule are the
record's (`CompactionRecord.asked`), and the session log says the same as the event."""

from __future__ import annotations

from pathlib import Path

from ctxlab.agent import Agent
from ctxlab.agent._on_demand import LiveAsker
from ctxlab.config import OnDemandCompaction
from ctxlab.demo import DEMO_PROMPT, demo_agent, demo_config
from ctxlab.events import CompactionEvent
from ctxlab.manifest import asked_by
from ctxlab.messages._request import ModelRequest
from ctxlab.models import DemoModel
from ctxlab.session import SessionLog
from tests.agent.test_on_demand_live import SECOND_TASK, WINDOW, Clock


class _Exact(DemoModel):
    """Counts exactly: a small count, except once, when asked to, far above any limit."""

    exact_counts = True
    over = False

    async def count_tokens(self, request: ModelRequest) -> int:
        if self.over:
            self.over = False
            return 10**9
        return 10


async def _run(folder: Path, over: bool, reserve: float) -> tuple[Agent, list[CompactionEvent]]:
    model = _Exact(context_window=WINDOW)
    config = demo_config(on_demand=OnDemandCompaction(at_task=True), reserve_ratio=reserve)
    agent = demo_agent(
        folder / "ws", model=model, context_config=config, session_log=SessionLog(folder / "l")
    )
    agent._preparer.on_demand = LiveAsker(agent, Clock())
    events: list[CompactionEvent] = []
    agent.subscribe(lambda e: events.append(e) if isinstance(e, CompactionEvent) else None)
    await agent(DEMO_PROMPT)
    model.over = over  # the first request of the second task: the one the task rule asks at
    await agent(SECOND_TASK)
    return agent, events


def _logged(agent: Agent) -> list[dict]:
    store, key = agent.log.store, agent.log.key
    assert store is not None
    return [p for _, p in store.event_payloads(key, ["compaction"])]


async def _events(folder: Path, over: bool) -> tuple[list[CompactionEvent], list[dict]]:
    # A thin reserve: the retry at the lines has something to summarize.
    agent, events = await _run(folder, over, 0.005)
    return events, _logged(agent)


async def test_a_retry_at_the_lines_is_not_said_to_be_asked(tmp_path: Path) -> None:
    events, logged = await _events(tmp_path, over=True)
    assert len(events) == 1
    (event,) = events
    assert event.record.asked is None  # the retry compacted at the lines: no rule's order
    assert (event.trigger, event.asked) == ("automatic", None)
    assert [(p["trigger"], p["asked"]) for p in logged] == [(event.trigger, event.asked)]


async def test_the_control_without_the_retry_the_rule_is_said(tmp_path: Path) -> None:
    events, logged = await _events(tmp_path, over=False)
    assert [(e.trigger, e.asked, e.record.asked) for e in events] == [("on_demand", "task", "task")]
    assert [(p["trigger"], p["asked"]) for p in logged] == [("on_demand", "task")]


async def test_a_retry_with_nothing_to_compact_keeps_the_asked_compaction(tmp_path: Path) -> None:
    # The default reserve holds the whole short session: the retry at the lines finds nothing
    # to summarize. The compaction the rule asked for (its summary call made and billed) is
    # the one sent, and said — not dropped, leaving a paid summary behind no compaction.
    agent, events = await _run(tmp_path, over=True, reserve=0.1)
    summaries = [m for m in agent.manifests if m.purpose == "summary"]
    assert [(e.trigger, e.asked, e.record.asked) for e in events] == [("on_demand", "task", "task")]
    assert len(summaries) == len(events)
    assert [(p["trigger"], p["asked"]) for p in _logged(agent)] == [("on_demand", "task")]
    compacted = [m for m in agent.manifests if any(asked_by(t) for t in m.transforms)]
    assert [m.purpose for m in compacted] == ["reasoning"]
    assert compacted[0].exact_input_tokens == 10**9  # sent as counted: too long, said so
