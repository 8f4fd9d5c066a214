"""Each event of a run is written to the session log once."""

from __future__ import annotations

from pathlib import Path

from ctxlab.models import tool_call
from tests.session.logged import logged_agent


async def test_each_event_is_logged_once(tmp_path: Path) -> None:
    def fetch(page: int) -> str:
        """Fetch a page."""
        return f"page {page}"

    replies = [tool_call("fetch", {"page": 1}), "one", tool_call("fetch", {"page": 2}), "two"]
    agent, log = await logged_agent(tmp_path, replies, [fetch], "first", "second")
    events = log.events(agent.log.key)
    builds = events[events["kind"] == "context_build"]
    ids = [p["context_manifest"]["request_id"] for p in builds["payload"]]
    assert ids == [m.request_id for m in agent.manifests]  # each once, in order
    assert len(events[events["kind"] == "tool_result"]) == 2
