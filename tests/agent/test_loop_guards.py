"""The loop's guards: max_steps, tool approval, sync tools off the event loop."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from ctxlab import ApproximateCounter
from ctxlab.agent import Agent
from ctxlab.exceptions import MaxStepsExceeded
from ctxlab.models import ScriptedModel, tool_call


async def test_max_steps_allows_exactly_that_many_requests() -> None:
    ran: list[int] = []

    def work(n: int) -> str:
        """Work."""
        ran.append(n)
        return "more"

    model = ScriptedModel([tool_call("work", {"n": i}) for i in range(10)])
    agent = Agent(model=model, tools=[work], counter=ApproximateCounter(), max_steps=3)
    with pytest.raises(MaxStepsExceeded):
        await agent("go")
    assert len(model.requests) == 3 and ran == [0, 1, 2]


async def test_ask_without_an_approver_is_denied_and_the_model_sees_why() -> None:
    ran: list[str] = []

    def delete_all() -> str:
        """Delete everything."""
        ran.append("deleted")
        return "gone"

    model = ScriptedModel([tool_call("delete_all"), "ok"])
    agent = Agent(
        model=model, tools=[delete_all], counter=ApproximateCounter(), permission=lambda u: "ask"
    )
    await agent("clean up")
    assert ran == []
    result = model.requests[1].messages[-1].content[0]
    assert result.is_error and "Permission denied" in result.text  # type: ignore[union-attr]
    assert "no approver" in result.text  # type: ignore[union-attr]


async def test_a_sync_tool_runs_off_the_event_loop() -> None:
    seen: dict[str, object] = {}

    def slow() -> str:
        """A slow blocking tool."""
        seen["thread"] = threading.current_thread()
        time.sleep(0.3)
        return "done"

    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    agent = Agent(
        model=ScriptedModel([tool_call("slow"), "ok"]), tools=[slow], counter=ApproximateCounter()
    )
    task = asyncio.ensure_future(ticker())
    await agent("go")
    task.cancel()
    assert seen["thread"] is not threading.main_thread()
    assert ticks >= 10  # the loop kept running while the tool slept
