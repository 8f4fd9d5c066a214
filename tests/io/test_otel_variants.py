"""The trace exports users keep, beyond OTLP and the SDK's JSON: Phoenix's span JSON, any-agent's
trace, Tempo's OTLP (older field names) with OpenLLMetry's indexed attributes, and Jaeger's JSON.
Each loads into the same conversation (the shapes follow each tool's documented export:
Arize-ai/phoenix span JSON with ``span_kind``; mozilla-ai/any-agent ``AgentTrace.model_dump``;
grafana/tempo's ``batches`` / ``instrumentationLibrarySpans``; traceloop/openllmetry's
``gen_ai.prompt.N.*``; jaegertracing's ``/api/traces`` JSON)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ctxlab.io import detect_format, load
from ctxlab.messages import find_tool_pair_problems

ASK, CALL_ID, ANSWER = "What is 2 + 3?", "call_1", "It is 5."


def _phoenix() -> list[dict[str, Any]]:
    # Phoenix keeps the span kind beside the attributes, and nests them.
    return [
        {
            "name": "ChatOpenAI",
            "context": {"trace_id": "t1", "span_id": "s1"},
            "span_kind": "LLM",
            "start_time": "2026-01-05T10:00:00+00:00",
            "attributes": {
                "llm": {
                    "model_name": "gpt-4o",
                    "input_messages": [
                        {"message": {"role": "system", "content": "Be brief."}},
                        {"message": {"role": "user", "content": ASK}},
                    ],
                    "output_messages": [{"message": {"role": "assistant", "content": ANSWER}}],
                    "token_count": {"prompt": 20, "completion": 4},
                }
            },
        }
    ]


def _any_agent() -> dict[str, Any]:
    # any-agent: {"spans": [...]}, messages as {role, content} JSON, the output in gen_ai.output.
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": ASK}]
    return {
        "spans": [
            {
                "name": "call_llm gpt-4o",
                "kind": "internal",
                "context": {"trace_id": 7, "span_id": 8},
                "start_time": 1_700_000_000_000_000_000,
                "attributes": {
                    "gen_ai.operation.name": "call_llm",
                    "gen_ai.input.messages": json.dumps(messages),
                    "gen_ai.output": ANSWER,
                    "gen_ai.output.type": "text",
                    "gen_ai.usage.input_tokens": 20,
                    "gen_ai.usage.output_tokens": 4,
                },
            }
        ],
        "final_output": ANSWER,
    }


def _openllmetry_attributes() -> dict[str, Any]:
    return {
        "gen_ai.system": "openai",
        "gen_ai.prompt.0.role": "system",
        "gen_ai.prompt.0.content": "Be brief.",
        "gen_ai.prompt.1.role": "user",
        "gen_ai.prompt.1.content": ASK,
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": ANSWER,
        "gen_ai.usage.input_tokens": 20,
        "gen_ai.usage.output_tokens": 4,
    }


def _tempo() -> dict[str, Any]:
    attributes = [
        {"key": k, "value": {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}}
        for k, v in _openllmetry_attributes().items()
    ]
    span = {
        "traceId": "AAA=",
        "spanId": "BBB=",
        "name": "openai.chat",
        "startTimeUnixNano": "1",
        "attributes": attributes,
    }
    return {"batches": [{"resource": {}, "instrumentationLibrarySpans": [{"spans": [span]}]}]}


def _jaeger() -> dict[str, Any]:
    tags = [
        {"key": k, "type": "int64" if isinstance(v, int) else "string", "value": v}
        for k, v in _openllmetry_attributes().items()
    ]
    span = {
        "traceID": "abc",
        "spanID": "def",
        "operationName": "openai.chat",
        "startTime": 1,
        "tags": tags,
        "logs": [],
    }
    return {"data": [{"traceID": "abc", "spans": [span], "processes": {}}]}


@pytest.mark.parametrize("export", [_phoenix, _any_agent, _tempo, _jaeger])
def test_each_export_loads_the_same_conversation(export: Any) -> None:
    data = export()
    assert detect_format(data) == "otel"
    transcript = load(data)
    texts = [(m.role, m.content[0].text) for m in transcript.messages]  # type: ignore[union-attr]
    assert texts == [("user", ASK), ("assistant", ANSWER)]
    assert transcript.system == "Be brief."
    assert transcript.usage[1].input_tokens + transcript.usage[1].cache_read_input_tokens == 20
    assert transcript.usage[1].output_tokens == 4


def test_openllmetry_tool_calls_pair_with_their_results() -> None:
    attributes = {
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": ASK,
        "gen_ai.prompt.1.role": "assistant",
        "gen_ai.prompt.1.tool_calls.0.id": CALL_ID,
        "gen_ai.prompt.1.tool_calls.0.name": "add",
        "gen_ai.prompt.1.tool_calls.0.arguments": '{"a": 2, "b": 3}',
        "gen_ai.prompt.2.role": "tool",
        "gen_ai.prompt.2.tool_call_id": CALL_ID,
        "gen_ai.prompt.2.content": "5",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": ANSWER,
    }
    span = {
        "name": "openai.chat",
        "context": {"trace_id": "t"},
        "attributes": attributes,
        "start_time": 1,
    }
    transcript = load([span])
    (use,) = transcript.messages[1].tool_uses  # type: ignore[union-attr]
    (result,) = transcript.messages[2].tool_results  # type: ignore[union-attr]
    assert (use.id, use.name, use.input) == (CALL_ID, "add", {"a": 2, "b": 3})
    assert (result.tool_use_id, result.text) == (CALL_ID, "5")
    assert find_tool_pair_problems(transcript.messages) == []
