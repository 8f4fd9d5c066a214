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
                "input_token_details": {"cache_read": 100, "cache_creation": 15},
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
        usage = transcript.usage[1]
        # LangChain's input tokens include the cache's reads and writes: 120 = 5 + 100 + 15.
        assert (usage.input_tokens, usage.cache_read_input_tokens) == (5, 100)
        assert (usage.cache_creation_input_tokens, usage.total_input_tokens) == (15, 120)


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


def test_pydantic_ai_usage_splits_the_cache_out_of_the_input() -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai.messages import (
        ModelMessagesTypeAdapter,
        ModelRequest,
        ModelResponse,
        TextPart,
        UserPromptPart,
    )
    from pydantic_ai.usage import RequestUsage

    history = [
        ModelRequest(parts=[UserPromptPart("hello")]),
        ModelResponse(
            parts=[TextPart("hi")],
            usage=RequestUsage(
                input_tokens=1_000, output_tokens=7, cache_read_tokens=800, cache_write_tokens=150
            ),
        ),
    ]
    as_json = json.loads(ModelMessagesTypeAdapter.dump_json(history))
    usage = load(as_json).usage[1]
    # pydantic-ai's input tokens include the cache's reads and writes: 1,000 = 50 + 800 + 150.
    assert (usage.input_tokens, usage.cache_read_input_tokens) == (50, 800)
    assert (usage.cache_creation_input_tokens, usage.output_tokens) == (150, 7)


def test_pydantic_ai_part_kinds_of_2x_load_whole() -> None:
    from ctxlab.messages import ImageBlock, ToolResultBlock

    request = "request"
    messages = [
        {
            "kind": request,
            "parts": [
                {
                    "part_kind": "user-prompt",
                    "content": [
                        "Look:",
                        {"kind": "binary", "media_type": "image/png", "data": "iVBORw=="},
                        {"kind": "image-url", "url": "https://example.com/a.png"},
                        {"kind": "document-url", "url": "https://example.com/spec.pdf"},
                    ],
                }
            ],
        },
        {
            "kind": "response",
            "parts": [
                {"part_kind": "tool-call", "tool_name": "read", "args": {}, "tool_call_id": "c1"}
            ],
        },
        {
            "kind": request,
            "parts": [
                {
                    "part_kind": "tool-return",
                    "tool_name": "read",
                    "content": "boom",
                    "tool_call_id": "c1",
                    "outcome": "failed",
                },
                {"part_kind": "retry-feedback", "content": "Give an int.", "retry": {}},
                {"part_kind": "retry-prompt", "content": "Again.", "tool_name": None},
            ],
        },
    ]
    transcript = load(messages, format="pydantic_ai")
    first, _, last = transcript.messages
    kinds = [type(b).__name__ for b in first.content]
    assert kinds == ["TextBlock", "ImageBlock", "ImageBlock", "TextBlock"]
    assert isinstance(first.content[2], ImageBlock)
    assert first.content[3].text == "[document-url: https://example.com/spec.pdf]"
    result = last.content[0]
    assert isinstance(result, ToolResultBlock) and result.is_error is True
    assert [b.text for b in last.content[1:]] == ["Give an int.", "Again."]
    assert "repairs" not in transcript.meta
