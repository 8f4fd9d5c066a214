"""A what-if's compactions named by what started them (review of stop 63): one an on-demand
rule asked for is ``on_demand`` in the break-even table, as its record says
(`CompactionRecord.asked`), not ``automatic``; the control, the trigger line's, stays
``automatic``."""

from __future__ import annotations

from ctxlab import ApproximateCounter, ContextConfig, WhatIf
from ctxlab.config import OnDemandCompaction
from tests.analysis.test_breakeven_whatif import session


async def _labels(config: ContextConfig, window: int) -> tuple[list[str | None], list[str]]:
    what = WhatIf(session(), {"c": config}, context_window=window, counter=ApproximateCounter())
    await what.run()
    asked = [s.asked for s in what.runs["c"].prepared if s.compaction is not None]
    return asked, list(what.compactions("c")["compaction"])


async def test_an_asked_compaction_is_named_on_demand() -> None:
    config = ContextConfig.preset("ctxlab").merge(on_demand=OnDemandCompaction(every_requests=8))
    # A wide window: the trigger line never fires, only the rule compacts.
    asked, labels = await _labels(config, 200_000)
    assert asked and set(asked) == {"requests"}
    assert labels == ["on_demand summary"] * len(asked)


async def test_the_control_the_trigger_lines_stay_automatic() -> None:
    asked, labels = await _labels(ContextConfig.preset("ctxlab"), 8_000)
    assert asked and set(asked) == {None}
    assert labels == ["automatic summary"] * len(asked)
