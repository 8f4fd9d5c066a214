"""The Vercel AI SDK's model-call spans read attribute by attribute (``ctxlab/io/formats/otel/vercel.py``):
which spans are calls, each prompt part as the model saw it (text, reasoning, calls and their
4.x and 5.x results, images, files), the reply's text and calls, the tools, and the usage with
the cache out of the input count."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.io.formats.otel.vercel import vercel_call
from ctxlab.messages import ProviderUsage

PNG = "iVBORw0KGgo="


def _call(messages: Any, **attrs: Any) -> Any:
    return vercel_call(
        {"ai.operationId": "ai.generateText.doGenerate", "ai.prompt.messages": messages, **attrs}
    )


def test_only_a_model_calls_span_is_a_call() -> None:
    for operation in (
        "ai.generateText.doGenerate",
        "ai.streamText.doStream",
        "ai.generateObject.doGenerate",
        "ai.streamObject.doStream",
    ):
        assert vercel_call({"ai.operationId": operation, "ai.prompt.messages": "[]"}) is not None
    assert vercel_call({"ai.operationId": "ai.generateText", "ai.prompt.messages": "[]"}) is None
    assert vercel_call({"ai.operationId": "ai.streamText.doStream"}) is None  # no prompt


def test_each_part_as_the_model_saw_it() -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "system", "content": ""},
        {"role": "system", "content": "Use tools."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "text", "text": " "},
                {"type": "text"},
                {"type": "image", "image": "data:image/png;base64," + PNG},
                {"type": "image", "image": PNG, "mediaType": "image/gif"},
                {"type": "image", "image": PNG, "mimeType": "image/jpeg"},
                {"type": "image", "image": PNG},
                {"type": "image", "image": "https://x/a.png"},
                {"type": "image", "image": 5},
                {"type": "file", "mediaType": "application/pdf", "data": "x"},
                {"type": "file"},
                {"type": "audio"},
                "junk",
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "reasoning", "text": "hm"},
                {"type": "tool-call", "toolCallId": "c1", "toolName": "search", "input": {"q": 1}},
                {"type": "tool-call", "toolCallId": "c2", "toolName": "f", "args": '{"a": 2}'},
                {"type": "tool-call", "input": [1, 2]},
            ],
        },
        {
            "role": "tool",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": "c1",
                    "output": {"type": "text", "value": "found"},
                },
                {
                    "type": "tool-result",
                    "toolCallId": "c2",
                    "output": {"type": "error-text", "value": "no"},
                },
                {"type": "tool-result", "toolCallId": "c3", "result": "old", "isError": True},
                {"type": "tool-result", "toolCallId": "c4", "output": {"value": "v"}},
                {"type": "tool-result", "output": "whose?"},
            ],
        },
        {"role": "user", "content": "again"},
        {"role": "user", "content": 5},
    ]
    inputs, outputs, system, schemas, usage = _call(json.dumps(messages))
    assert system == "Be brief.\n\nUse tools."
    assert inputs == [
        (
            "user",
            [
                {"type": "text", "text": "look"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": PNG},
                },
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/gif", "data": PNG},
                },
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/jpeg", "data": PNG},
                },
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": PNG},
                },
                {"type": "image", "source": {"type": "url", "url": "https://x/a.png"}},
                {"type": "text", "text": "[file: application/pdf]"},
                {"type": "text", "text": "[file: unknown type]"},
            ],
        ),
        (
            "assistant",
            [
                {"type": "thinking", "thinking": "hm"},
                {"type": "tool_use", "id": "c1", "name": "search", "input": {"q": 1}},
                {"type": "tool_use", "id": "c2", "name": "f", "input": {"a": 2}},
                {"type": "tool_use", "id": "", "name": "tool", "input": {"input": [1, 2]}},
            ],
        ),
        (
            "user",
            [
                {"type": "tool_result", "tool_use_id": "c1", "content": "found", "is_error": None},
                {"type": "tool_result", "tool_use_id": "c2", "content": "no", "is_error": True},
                {"type": "tool_result", "tool_use_id": "c3", "content": "old", "is_error": True},
                {
                    "type": "tool_result",
                    "tool_use_id": "c4",
                    "content": '{"value": "v"}',
                    "is_error": None,
                },
                {"type": "tool_result", "tool_use_id": "", "content": "whose?", "is_error": None},
            ],
        ),
        ("user", [{"type": "text", "text": "again"}]),
    ]
    assert outputs == [] and schemas == () and usage is None


def test_the_reply_tools_and_usage() -> None:
    calls = [{"toolCallId": "c9", "toolName": "grep", "input": '{"p": "x"}'}, "junk"]
    tools = [
        json.dumps({"type": "function", "name": "grep", "inputSchema": {"type": "object"}}),
        "x",
    ]
    _, outputs, _, schemas, usage = _call(
        "[]",
        **{
            "ai.response.text": "Done.",
            "ai.response.toolCalls": json.dumps(calls),
            "ai.prompt.tools": tools,
            "ai.usage.inputTokens": 100,
            "ai.usage.outputTokens": 7,
            "ai.usage.cachedInputTokens": 60,
        },
    )
    assert outputs == [
        (
            "assistant",
            [
                {"type": "text", "text": "Done."},
                {"type": "tool_use", "id": "c9", "name": "grep", "input": {"p": "x"}},
            ],
        )
    ]
    assert [s.name for s in schemas] == ["grep"]
    assert usage == ProviderUsage(40, 7, 60, 0)
    # 4.x names; a blank reply adds nothing; no usage at all is none.
    _, outputs, _, _, usage = _call(
        "[]",
        **{"ai.response.text": "  ", "ai.usage.promptTokens": 9, "ai.usage.completionTokens": 2},
    )
    assert outputs == [] and usage == ProviderUsage(9, 2)
    assert _call("[]", **{"ai.usage.completionTokens": 2})[4] == ProviderUsage(0, 2)
    assert _call("[]", **{"ai.usage.promptTokens": 3})[4] == ProviderUsage(3, 0)


@pytest.mark.parametrize("kind", ["error-text", "error-json", "text", "json", "content"])
def test_a_5x_results_type_says_whether_it_failed(kind: str) -> None:
    part = {"type": "tool-result", "toolCallId": "c", "output": {"type": kind, "value": "v"}}
    inputs, *_ = _call(json.dumps([{"role": "tool", "content": [part]}]))
    assert inputs[0][1][0]["is_error"] is (True if kind.startswith("error") else None)


@settings(database=None, max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.integers(0, 10**6), st.integers(0, 10**6))
def test_the_cache_is_taken_out_of_the_input(total: int, cached: int, output: int) -> None:
    usage = _call(
        "[]",
        **{
            "ai.usage.inputTokens": total,
            "ai.usage.outputTokens": output,
            "ai.usage.cachedInputTokens": cached,
        },
    )[4]
    assert usage == ProviderUsage(max(total - cached, 0), output, cached, 0)
