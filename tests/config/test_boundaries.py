"""A config that skipped validation is checked again at every boundary."""

from __future__ import annotations

import pytest

from ctxlab import ApproximateCounter
from ctxlab.agent import Agent
from ctxlab.models import ScriptedModel


async def test_a_config_that_skipped_validation_never_reaches_a_preparation() -> None:
    from ctxlab import ContextConfig, WorkingState, prepare
    from ctxlab.exceptions import UsageError

    bad = ContextConfig().model_copy(update={"trigger_ratio": 5.0})
    state = WorkingState.of([{"role": "user", "content": "hi"}])
    with pytest.raises(UsageError, match="trigger_ratio"):
        await prepare(state, context_window=1000, counter=ApproximateCounter(), config=bad)
    with pytest.raises(UsageError, match="trigger_ratio"):
        Agent(model=ScriptedModel([]), context_config=bad)
    agent = Agent(model=ScriptedModel(["ok"]), counter=ApproximateCounter())
    with pytest.raises(UsageError, match="reserve_ratio"):
        agent.context_config = ContextConfig().model_copy(update={"reserve_ratio": 0.95})
    with pytest.raises(UsageError):
        await agent.compress_context(context_config=bad)
    assert (await agent("still fine")).content[0].text == "ok"  # type: ignore[union-attr]
