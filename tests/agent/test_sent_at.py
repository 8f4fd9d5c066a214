"""The agent stamps each request it sends with the wall clock (``ContextManifest.sent_at``),
summary calls included, and no request it never sent: the clock a live session's cache expires
on (`ctxlab.analysis.costs_of_manifests`)."""

from __future__ import annotations

import time

from ctxlab import ApproximateCounter
from ctxlab.agent import Agent
from ctxlab.models import ScriptedModel, tool_call


def fetch(page: int) -> str:
    """Fetch a page."""
    return f"page {page} " + "text " * 200


async def test_every_sent_request_carries_when_it_was_sent() -> None:
    model = ScriptedModel(
        [*(tool_call("fetch", {"page": i}) for i in range(3)), "done"], context_window=4_000
    )
    agent = Agent(model=model, tools=[fetch], counter=ApproximateCounter())
    before = time.time()
    await agent.call("read")
    await agent.compress_context(instructions="keep the page numbers", force=True)
    after = time.time()
    manifests = agent.manifests
    sent = [m for m in manifests if m.validation == "passed"]
    assert {m.purpose for m in sent} >= {"reasoning", "summary"}
    stamps = [m.sent_at for m in sent]
    assert all(s is not None and before <= s <= after for s in stamps)
    assert stamps == sorted(stamps)  # in the order they were sent
