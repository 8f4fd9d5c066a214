"""The Vercel AI SDK's spans, as the SDK itself writes them (``tests/fixtures/vercel_ai``:
``make_fixture.mjs`` ran ``generateText`` of ai 5.0.277 with telemetry on, through its own mock
model, and exported the spans as OTLP JSON): one request per model-call span, nothing of the
outer or tool spans doubled, the tool result paired, usage per reply — and the 4.x and 5.x part
shapes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab import load
from ctxlab.exceptions import MessageFormatError
from ctxlab.messages import ToolResultBlock, ToolUseBlock
from tests.strategies import SETTINGS, json_value, typed

FIXTURE = Path(__file__).parents[1] / "fixtures" / "vercel_ai" / "vercel_ai_otlp.json"


def _raw_spans() -> list[dict[str, Any]]:
    data = json.loads(FIXTURE.read_text())
    return [s for r in data["resourceSpans"] for ss in r["scopeSpans"] for s in ss["spans"]]


def test_the_sdks_own_export_loads_whole() -> None:
    transcript = load(FIXTURE)
    assert transcript.meta["source"] == "otel" and transcript.meta["requests"] == 2
    assert transcript.system == "You report the weather."
    assert [t.name for t in transcript.tools] == ["weather"]
    assert transcript.tools[0].input_schema["required"] == ["city"]
    roles = [m.role for m in transcript.messages]
    assert roles == ["user", "assistant", "user", "assistant"]
    (call,) = transcript.messages[1].tool_uses
    assert isinstance(call, ToolUseBlock) and call.input == {"city": "Lisbon"}
    (result,) = transcript.messages[2].tool_results
    assert isinstance(result, ToolResultBlock) and result.tool_use_id == "call_1"
    assert json.loads(result.text) == {"city": "Lisbon", "celsius": 21, "sky": "sunny"}
    assert transcript.messages[3].content[0].text == "It is 21 °C and sunny in Lisbon."
    billed = {i: (u.input_tokens, u.output_tokens) for i, u in transcript.usage.items()}
    assert billed == {1: (120, 18), 3: (170, 12)}
    # Independent count from the raw file: model-call spans are the requests, no more.
    calls = [s for s in _raw_spans() if s["name"] == "ai.generateText.doGenerate"]
    assert len(calls) == sum(m.role == "assistant" for m in transcript.messages)


def _span(messages: list[dict[str, Any]], **more: Any) -> dict[str, Any]:
    attributes = {
        "ai.operationId": "ai.streamText.doStream",
        "ai.prompt.messages": json.dumps(messages),
        **more,
    }
    return {
        "name": "ai.streamText.doStream",
        "context": {"trace_id": "0xaa", "span_id": "0x01"},
        "start_time": "2026-01-01T00:00:00Z",
        "attributes": attributes,
    }


def test_the_4x_part_shapes_load() -> None:
    messages = [
        {"role": "user", "content": "Run it."},
        {
            "role": "assistant",
            "content": [
                {"type": "reasoning", "text": "I should run the tests."},
                {
                    "type": "tool-call",
                    "toolCallId": "t1",
                    "toolName": "bash",
                    "args": {"cmd": "pytest"},
                },
            ],
        },
        {
            "role": "tool",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": "t1",
                    "toolName": "bash",
                    "result": "2 failed",
                    "isError": True,
                }
            ],
        },
    ]
    span = _span(
        messages,
        **{
            "ai.response.text": "Two tests fail.",
            "ai.usage.promptTokens": 300,
            "ai.usage.completionTokens": 9,
        },
    )
    transcript = load([span], format="otel")
    thinking, use = transcript.messages[1].content
    assert type(thinking).__name__ == "ThinkingBlock" and use.input == {"cmd": "pytest"}
    (result,) = transcript.messages[2].tool_results
    assert result.is_error is True and result.text == "2 failed"
    assert transcript.messages[3].content[0].text == "Two tests fail."
    assert transcript.usage[3].input_tokens == 300


def test_the_outer_and_tool_spans_are_not_calls() -> None:
    outer = _span([{"role": "user", "content": "hi"}], **{"ai.response.text": "hello"})
    outer["attributes"]["ai.operationId"] = "ai.streamText"
    with pytest.raises(MessageFormatError, match=r"ai\.prompt\.messages"):
        load([outer], format="otel")


@SETTINGS
@given(st.lists(json_value, max_size=4), json_value, json_value)
def test_any_ai_attributes_load_or_raise_a_typed_error(
    messages: list[Any], calls: Any, usage: Any
) -> None:
    span = _span(
        messages,
        **{"ai.response.toolCalls": json.dumps(calls), "ai.usage.promptTokens": usage},
    )
    typed(lambda: load([span], format="otel"))
