"""A Lab's replay emits its compactions as the agent does (review of stop 63): one an on-demand
rule asked for is a `CompactionEvent` with ``trigger="on_demand"`` and ``asked`` the rule its
record names (the Lab marks it ``on_demand summary``); the control, a compaction at the trigger
line, stays ``automatic`` with no rule."""

from __future__ import annotations

from ctxlab import ApproximateCounter, ContextConfig
from ctxlab.config import OnDemandCompaction
from ctxlab.events import CompactionEvent
from ctxlab.sources._replay import ReplaySession
from tests.analysis.test_breakeven_whatif import session


async def _events(config: ContextConfig, window: int) -> list[CompactionEvent]:
    replaying = ReplaySession(
        session(),
        context_window=window,
        counter=ApproximateCounter(),
        config=config,
        view="replayed",
    )
    events: list[CompactionEvent] = []
    replaying.subscribe(lambda e: events.append(e) if isinstance(e, CompactionEvent) else None)
    await replaying.run()
    return events


async def test_an_asked_compaction_is_emitted_on_demand_with_its_rule() -> None:
    config = ContextConfig.preset("ctxlab").merge(on_demand=OnDemandCompaction(every_requests=8))
    events = await _events(config, 200_000)  # wide: only the rule compacts
    assert events
    assert {(e.trigger, e.asked, e.record.asked) for e in events} == {
        ("on_demand", "requests", "requests")
    }


async def test_the_control_the_trigger_lines_are_automatic() -> None:
    events = await _events(ContextConfig.preset("ctxlab"), 8_000)
    assert events
    assert {(e.trigger, e.asked, e.record.asked) for e in events} == {("automatic", None, None)}
