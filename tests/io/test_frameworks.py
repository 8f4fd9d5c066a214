"""Histories made by the real libraries (LangChain, pydantic-ai), as dicts and as objects."""

from __future__ import annotations

import json

import pytest

from ctxlab.io import detect_format, load
from ctxlab.messages import find_tool_pair_problems


def test_langchain_objects_and_their_dicts() -> None:
    messages = pytest.importorskip("langchain_core.messages")
    history = [
        messages.SystemMessage("Be brief."),
        messages.HumanMessage("2 + 3?"),
        messages.AIMessage(
            content="",
            tool_calls=[{"name": "add", "args": {"a": 2, "b": 3}, "id": "call_1"}],
            usage_metadata={
                "input_tokens": 120,
                "output_tokens": 9,
                "total_tokens": 129,
                "input_token_details": {"cache_read": 100},
            },
        ),
        messages.ToolMessage("5", tool_call_id="call_1"),
        messages.AIMessage("5."),
    ]
    as_dicts = json.loads(json.dumps(messages.messages_to_dict(history)))
    assert detect_format(as_dicts) == "langchain"
    for source in (history, as_dicts):
        transcript = load(source)
        assert transcript.system == "Be brief."
        assert [m.role for m in transcript.messages] == ["user", "assistant", "user", "assistant"]
        assert find_tool_pair_problems(transcript.messages) == []
        assert transcript.usage[1].cache_read_input_tokens == 100


async def test_a_pydantic_ai_run_with_its_test_model() -> None:
    pydantic_ai = pytest.importorskip("pydantic_ai")
    from pydantic_ai.messages import ModelMessagesTypeAdapter
    from pydantic_ai.models.test import TestModel

    agent = pydantic_ai.Agent(TestModel(), system_prompt="Be brief.")

    @agent.tool_plain
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    run = await agent.run("2 + 3?")  # (run_sync leaves an event loop open)
    as_json = json.loads(ModelMessagesTypeAdapter.dump_json(run.all_messages()))
    assert detect_format(as_json) == "pydantic_ai"
    for source in (run.all_messages(), as_json):
        transcript = load(source)
        assert transcript.system == "Be brief."
        assert find_tool_pair_problems(transcript.messages) == []
        uses = [b for m in transcript.messages for b in getattr(m, "tool_uses", ())]
        assert [u.name for u in uses] == ["add"]
        assert sorted(transcript.usage) == [1, 3]  # a usage per model response
