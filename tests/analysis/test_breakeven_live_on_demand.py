"""A live agent's compactions on demand in the break-even table (review of stop 64): the
manifests an agent sent (`manifest_break_evens`: the Budget view, a fork's outcome rows) name
a compaction an on-demand rule asked for ``on_demand``, as the event did — the manifest's
transform carries the rule (`ctxlab.manifest.asked_by`). The control: the trigger line's compactions
stay ``automatic``."""

from __future__ import annotations

from pathlib import Path

from ctxlab.agent._on_demand import LiveAsker
from ctxlab.analysis._breakeven_of import manifest_break_evens
from ctxlab.analysis._cache_rules import CacheRules
from ctxlab.analysis._price import Price
from ctxlab.config import OnDemandCompaction
from ctxlab.demo import DEMO_PROMPT, demo_agent, demo_config
from ctxlab.events import CompactionEvent
from ctxlab.models import DemoModel
from tests.agent.test_on_demand_live import SECOND_TASK, Clock

PRICE = Price(input=3.0, output=15.0, cache_write=3.75, cache_read=0.3)


async def _labels(folder: Path, window: int, **config: object) -> tuple[list[str], list[str]]:
    """The live run's events (trigger, rule) and its break-even rows' labels."""
    agent = demo_agent(
        folder / "ws",
        model=DemoModel(context_window=window),
        context_config=demo_config(**config),
    )
    agent._preparer.on_demand = LiveAsker(agent, Clock())
    events: list[CompactionEvent] = []
    agent.subscribe(lambda e: events.append(e) if isinstance(e, CompactionEvent) else None)
    await agent(DEMO_PROMPT)
    await agent(SECOND_TASK)
    evens = manifest_break_evens(agent.manifests, PRICE, CacheRules("anthropic"))
    return [f"{e.trigger} {e.asked}" for e in events], [e.label for e in evens]


async def test_a_live_agents_asked_compaction_is_named_on_demand(tmp_path: Path) -> None:
    policy = OnDemandCompaction(at_task=True, every_requests=5)
    # A wide window: the trigger line never fires, only the rules compact.
    events, labels = await _labels(tmp_path, 200_000, on_demand=policy)
    assert len(events) >= 2 and set(events) == {"on_demand task", "on_demand requests"}
    assert labels == ["on_demand summary"] * len(events)


async def test_the_control_the_trigger_lines_stay_automatic(tmp_path: Path) -> None:
    events, labels = await _labels(tmp_path, 6_000)
    assert events and set(events) == {"automatic None"}
    assert labels == ["automatic summary"] * len(events)
