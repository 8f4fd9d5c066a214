"""Compaction on demand in a live agent (issue 56): before each reasoning request the agent asks
``ContextConfig.on_demand``'s rules — the same asker a replay holds — and compacts where one
holds, logging which rule asked and pricing the summary call.

Differential: a live run of the demo agent on `DemoModel` compacts at the same requests, by the
same rules, as a replay of its own recording under the same config (the replay given the
requests' send times as its clock). The control: a config whose rule never holds compacts
nowhere, live or replayed."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ctxlab import ApproximateCounter
from ctxlab.agent import Agent
from ctxlab.agent._on_demand import LiveAsker
from ctxlab.analysis import replay
from ctxlab.analysis._cost import costs_of_manifests
from ctxlab.analysis._price import Price
from ctxlab.config import OnDemandCompaction
from ctxlab.config._config import ContextConfig
from ctxlab.demo import DEMO_PROMPT, demo_agent, demo_config
from ctxlab.events import CompactionEvent
from ctxlab.messages import AssistantMessage
from ctxlab.models import DemoModel
from ctxlab.session import SessionLog

WINDOW = 200_000  # wide: the trigger line never fires, only the rules compact
LONG_PAUSE = 7  # the request sent after a long pause (a slow tool, a user away)
SECOND_TASK = "Now list the files of the project and say which one holds the tests."


class Clock:
    """A wall clock for the live run: 10 s between requests, 15 minutes before one."""

    def __init__(self) -> None:
        self.times: list[float] = []

    def __call__(self) -> float:
        n = len(self.times)
        self.times.append(1_700_000_000.0 + 10.0 * n + (900.0 if n >= LONG_PAUSE else 0.0))
        return self.times[-1]


def _config(policy: OnDemandCompaction) -> ContextConfig:
    return demo_config(on_demand=policy)


async def _live(folder: Path, config: ContextConfig) -> tuple[Agent, Clock, list[CompactionEvent]]:
    agent = demo_agent(
        folder / "ws",
        model=DemoModel(context_window=WINDOW),
        context_config=config,
        session_log=SessionLog(folder / "log.sqlite"),
    )
    clock = Clock()
    agent._preparer.on_demand = LiveAsker(agent, clock)
    events: list[CompactionEvent] = []
    agent.subscribe(lambda e: events.append(e) if isinstance(e, CompactionEvent) else None)
    await agent(DEMO_PROMPT)
    await agent(SECOND_TASK)
    return agent, clock, events


def _replies(agent: Agent) -> Iterator[int]:
    return (n for n, m in enumerate(agent.history) if isinstance(m, AssistantMessage))


async def _replayed(agent: Agent, config: ContextConfig, clock: Clock) -> dict[int, str | None]:
    """Request number -> the rule that asked, for each request the replay compacted at."""
    transcript = agent.transcript()
    # Each reply's time is its request's send time, as the live clock read it.
    times = dict(zip(_replies(agent), clock.times, strict=True))
    return {
        step.number: step.asked
        async for step in replay(
            transcript.messages,
            context_window=WINDOW,
            counter=ApproximateCounter(),
            config=config,
            system=transcript.system,
            tools=transcript.tools,
            times=times,
        )
        if step.compaction is not None
    }


def _live_compactions(agent: Agent, events: list[CompactionEvent]) -> dict[int, str | None]:
    reasoning = [m for m in agent.manifests if m.purpose == "reasoning"]
    compacted = [
        n
        for n, m in enumerate(reasoning)
        if any(t.kind == "history_compaction" for t in m.transforms)
    ]
    assert all(e.trigger == "on_demand" for e in events)
    return dict(zip(compacted, [e.asked for e in events], strict=True))


@dataclass
class Run:
    """A live run of the demo agent under a config, and what it emitted."""

    config: ContextConfig
    agent: Agent
    clock: Clock
    events: list[CompactionEvent]


def _run(folder: Path, policy: OnDemandCompaction) -> Run:
    config = _config(policy)
    return Run(config, *asyncio.run(_live(folder, config)))


@pytest.fixture(scope="module")
def asking(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """A run whose every rule asks: the second task, every 5 requests, a 15-minute pause."""
    policy = OnDemandCompaction(at_task=True, every_requests=5, idle_seconds=300.0)
    return _run(tmp_path_factory.mktemp("asking"), policy)


async def test_a_live_run_compacts_where_a_replay_of_its_recording_does(asking: Run) -> None:
    live = _live_compactions(asking.agent, asking.events)
    # Every rule asked at least once: the second task, the request count, the long pause.
    assert set(live.values()) == {"task", "requests", "idle"}, live
    assert live.get(LONG_PAUSE) == "idle"
    assert await _replayed(asking.agent, asking.config, asking.clock) == live


async def test_the_control_a_rule_that_never_holds_compacts_nowhere(tmp_path: Path) -> None:
    config = _config(OnDemandCompaction(at_tokens=10**9))
    agent, clock, events = await _live(tmp_path, config)
    assert events == []
    assert not any(m.purpose == "summary" for m in agent.manifests)
    assert await _replayed(agent, config, clock) == {}


def test_the_session_log_says_which_rule_asked(asking: Run) -> None:
    store, key = asking.agent.log.store, asking.agent.log.key
    assert store is not None
    logged = [p for _, p in store.event_payloads(key, ["compaction"])]
    expected = [("on_demand", e.asked) for e in asking.events]
    assert [(p["trigger"], p["asked"]) for p in logged] == expected
    assert len(expected) >= 3


def test_each_summary_call_an_ask_makes_is_priced(asking: Run) -> None:
    manifests = asking.agent.manifests
    price = Price(input=3.0, output=15.0, cache_write=3.75, cache_read=0.3)
    costs = costs_of_manifests(manifests, price)
    summaries = [c for m, c in zip(manifests, costs, strict=True) if m.purpose == "summary"]
    # One summary call per compaction, each priced at the price given (the demo model bills
    # nothing: its input is the estimate, its output the summary the next request carries).
    assert len(summaries) == len(asking.events) >= 3
    calls = [m for m in manifests if m.purpose == "summary"]
    for manifest, cost in zip(calls, summaries, strict=True):
        assert cost.input_tokens == manifest.estimated_input_tokens > 0
        assert cost.output > 0
        dollars = (
            cost.uncached * 3.0
            + cost.cache_write * 3.75
            + cost.cache_read * 0.3
            + cost.output * 15.0
        ) / 1e6
        assert cost.cost == pytest.approx(dollars, rel=1e-12)
