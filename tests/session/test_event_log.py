"""Each event of a run is written to the session log once."""

from __future__ import annotations

from pathlib import Path

from ctxlab import ApproximateCounter, SessionLog
from ctxlab.agent import Agent
from ctxlab.models import ScriptedModel, tool_call


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
