"""A "compact now" hint reaches the summary request."""

from __future__ import annotations

import pytest

from ctxlab import ApproximateCounter
from ctxlab.agent import Agent
from ctxlab.models import ScriptedModel, tool_call


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
