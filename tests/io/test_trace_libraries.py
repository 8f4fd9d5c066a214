"""One tool loop traced by three real libraries — OpenLLMetry's OpenAI instrumentation
(``openllmetry/``), Langfuse's SDK (``langfuse/``) and the OpenAI Agents SDK
(``openai_agents/``), each fixture made by its library with the script beside it — loads as the
same conversation with the same bill from each."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxlab import load
from ctxlab.messages import ProviderUsage

FIXTURES = Path(__file__).parents[1] / "fixtures"
TRACES = {
    "openllmetry": FIXTURES / "openllmetry" / "openai_spans.json",
    "langfuse": FIXTURES / "langfuse" / "langfuse_spans.json",
    "openai_agents": FIXTURES / "openai_agents" / "chat_trace.json",
}


@pytest.mark.parametrize("library", list(TRACES))
def test_each_librarys_trace_is_the_same_conversation(library: str) -> None:
    transcript = load(TRACES[library])
    assert transcript.meta["source"] == "otel" and transcript.meta["requests"] == 2
    assert transcript.system == "You look up order status."
    texts = [
        [getattr(b, "text", None) or getattr(b, "name", None) for b in m.content]
        for m in transcript.messages
    ]
    assert texts[0] == ["Where is order 1138?"]
    assert texts[1] == ["Let me check.", "order_status"]
    assert texts[3] == ["Order 1138 shipped on 28 November (DHL 4471)."]
    (result,) = transcript.messages[2].tool_results
    assert result.tool_use_id == "call_7" and "shipped 2026-11-28" in result.text
    # 182 input tokens of which 64 cached: the same bill whichever library recorded it.
    assert transcript.usage == {1: ProviderUsage(118, 21, 64, 0), 3: ProviderUsage(231, 17, 0, 0)}
