"""Seven behaviours that a hand-made breakage once slipped past the whole suite; each test here
fails when its behaviour is broken again."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest

from ctxlab import ApproximateCounter, ContextConfig, SessionLog
from ctxlab.agent import Agent
from ctxlab.exceptions import MaxStepsExceeded
from ctxlab.manifest import Thresholds
from ctxlab.models import ScriptedModel, tool_call


def test_the_trigger_is_capped_by_the_input_limit() -> None:
    # At trigger 0.9 of a 10k window, 9,000 > the 8,550 input limit: compaction must fire
    # before the output reservation is eaten.
    lines = Thresholds.compute(ContextConfig(trigger_ratio=0.9), 10_000)
    assert lines.trigger_tokens == lines.input_limit == 8_550


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


async def test_the_compact_now_hint_reaches_the_summary_request() -> None:
    pytest.importorskip("ipywidgets")
    from ctxlab.widgets import Lab

    def fetch(page: int) -> str:
        """Fetch a page."""
        return f"page {page} " + "text " * 200

    model = ScriptedModel(
        [*(tool_call("fetch", {"page": i}) for i in range(3)), "done"], context_window=4_000
    )
    agent = Agent(model=model, tools=[fetch], counter=ApproximateCounter())
    lab = Lab(agent)
    await lab.send("read")
    record = await lab.compact("Keep every page number.")
    assert record is not None
    assert model.summary_requests[-1].instructions == "Keep every page number."
    lab.close()


def test_every_config_panel_control_is_applied() -> None:
    pytest.importorskip("ipywidgets")
    from ctxlab.widgets import Lab

    agent = Agent(model=ScriptedModel([]), counter=ApproximateCounter())
    lab = Lab(agent)
    wanted = {
        "trigger_ratio": 0.7,
        "reserve_ratio": 0.05,
        "context_buffer_ratio": 0.3,
        "tool_result_limit": 1234,
        "max_image_num": 2,
        "compression_tool_enabled": True,
        "compression_fallback_to_truncation": False,
    }
    assert set(wanted) == set(lab.config.controls)
    for name, value in wanted.items():
        lab.config.controls[name].value = value
    lab.config.apply_button.click()
    assert {name: getattr(agent.context_config, name) for name in wanted} == wanted
    lab.close()


async def test_each_event_is_logged_once(tmp_path: Path) -> None:
    log = SessionLog(tmp_path / "log.sqlite")

    def fetch(page: int) -> str:
        """Fetch a page."""
        return f"page {page}"

    replies = [tool_call("fetch", {"page": 1}), "one", tool_call("fetch", {"page": 2}), "two"]
    agent = Agent(
        model=ScriptedModel(replies),
        tools=[fetch],
        counter=ApproximateCounter(),
        session_log=log,
        session_id="s",
    )
    await agent("first")
    await agent("second")
    events = log.events(agent.log.key)
    builds = events[events["kind"] == "context_build"]
    ids = [p["context_manifest"]["request_id"] for p in builds["payload"]]
    assert ids == [m.request_id for m in agent.manifests]  # each once, in order
    assert len(events[events["kind"] == "tool_result"]) == 2
