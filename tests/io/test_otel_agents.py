"""The OpenAI Agents SDK's traces, as the SDK exports them (``tests/fixtures/openai_agents``:
``make_fixture.py`` ran an agent on openai-agents 0.24.0 against the local model server): a run
on the Chat Completions model loads whole from its generation spans — as one document or one
item a line — and a run on the Responses model, whose spans hold no messages, is refused saying
why and what to do instead."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxlab import load
from ctxlab.exceptions import MessageFormatError
from ctxlab.messages import ProviderUsage

FIXTURE = Path(__file__).parents[1] / "fixtures" / "openai_agents" / "chat_trace.json"


def _check(path: Path) -> None:
    transcript = load(path)
    assert transcript.meta["source"] == "otel" and transcript.meta["requests"] == 2
    assert transcript.system == "You look up order status."
    assert [m.role for m in transcript.messages] == ["user", "assistant", "user", "assistant"]
    (call,) = transcript.messages[1].tool_uses
    assert (call.id, call.input) == ("call_7", {"order": 1138})
    (result,) = transcript.messages[2].tool_results
    assert result.text == "order 1138: shipped 2026-11-28, DHL 4471"
    # The SDK's input tokens hold the cached ones: 182 - 64 uncached.
    assert transcript.usage == {1: ProviderUsage(118, 21, 64, 0), 3: ProviderUsage(231, 17, 0, 0)}


def test_a_chat_completions_run_loads_whole() -> None:
    _check(FIXTURE)
    # Independent count from the raw export: one request per generation span.
    items = json.loads(FIXTURE.read_text())["data"]
    assert sum((i.get("span_data") or {}).get("type") == "generation" for i in items) == 2


def test_one_item_a_line_loads_the_same(tmp_path: Path) -> None:
    items = json.loads(FIXTURE.read_text())["data"]
    lines = tmp_path / "trace.jsonl"
    lines.write_text("\n".join(json.dumps(i) for i in items) + "\n")
    _check(lines)


def test_a_responses_run_is_refused_saying_why() -> None:
    # ResponseSpanData.export() of the SDK: the response id and usage, no messages.
    export = {
        "data": [
            {"object": "trace", "id": "trace_1", "workflow_name": "Agent workflow"},
            {
                "object": "trace.span",
                "id": "span_1",
                "trace_id": "trace_1",
                "started_at": "2026-12-01T10:00:00+00:00",
                "span_data": {"type": "response", "response_id": "resp_1", "usage": None},
            },
        ]
    }
    with pytest.raises(MessageFormatError, match=r"response ids only .*OpenAIChatCompletionsModel"):
        load(export)
