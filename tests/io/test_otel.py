"""OpenTelemetry traces recorded here from real instrumented runs: pydantic-ai (GenAI semantic
conventions) and a LangChain chat model under OpenInference's instrumentor."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxlab import CtxlabError
from ctxlab.io import detect_format, load
from ctxlab.messages import AssistantMessage, find_tool_pair_problems
from tests.helpers import validations
from tests.io.otlp import otlp_body, otlp_span

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("pydantic_ai")

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from pydantic_ai.messages import ModelMessage


def _tracer() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


async def _pydantic_ai_spans(runs: int = 1, history_processor: Any = None) -> list[ReadableSpan]:
    from pydantic_ai import Agent
    from pydantic_ai.capabilities.instrumentation import Instrumentation
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.test import TestModel

    provider, exporter = _tracer()
    capabilities: list[Any] = [
        Instrumentation(settings=InstrumentationSettings(tracer_provider=provider))
    ]
    if history_processor is not None:
        from pydantic_ai.capabilities.process_history import ProcessHistory

        capabilities.append(ProcessHistory(history_processor))
    agent = Agent(TestModel(), instructions="Be brief.", capabilities=capabilities)

    @agent.tool_plain
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    for number in range(runs):
        await agent.run(f"add {number} and 2")
    return list(exporter.get_finished_spans())


def _otlp_json(spans: list[ReadableSpan]) -> dict[str, Any]:
    """The OTLP/JSON body an OTLP/HTTP exporter (or the collector's file exporter) writes."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    return MessageToDict(encode_spans(spans))


def _chat_spans(spans: list[ReadableSpan]) -> list[ReadableSpan]:
    return [s for s in spans if (s.attributes or {}).get("gen_ai.operation.name") == "chat"]


async def test_a_pydantic_ai_trace_in_every_export_shape(tmp_path: Path) -> None:
    spans = await _pydantic_ai_spans()
    chats = _chat_spans(spans)
    assert len(chats) == 2
    otlp = tmp_path / "traces.jsonl"
    otlp.write_text(json.dumps(_otlp_json(spans)) + "\n")
    console = tmp_path / "console.json"
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter

    out = io.StringIO()
    ConsoleSpanExporter(out=out).export(spans)
    console.write_text(out.getvalue())
    assert detect_format(_otlp_json(spans)) == "otel"

    loaded = [load(spans), load(otlp), load(console), load(_otlp_json(spans))]
    first = loaded[0]
    assert first.system == "Be brief."
    assert [t.name for t in first.tools] == ["add"]
    assert first.tools[0].input_schema["required"] == ["a", "b"]
    assert [m.role for m in first.messages] == ["user", "assistant", "user", "assistant"]
    assert first.messages[0].content[0].text == "add 0 and 2"  # type: ignore[union-attr]
    assert find_tool_pair_problems(first.messages) == []
    # The usage of each chat span sits on the reply it produced.
    expected = [c.attributes["gen_ai.usage.input_tokens"] for c in chats]  # type: ignore[index]
    assert [first.usage[1].input_tokens, first.usage[3].input_tokens] == expected
    assert first.meta["requests"] == 2
    for other in loaded[1:]:
        assert other.messages == first.messages
        assert other.usage == first.usage
        assert other.tools == first.tools


async def test_a_trace_replays_without_an_invalid_request() -> None:
    transcript = load(await _pydantic_ai_spans())
    found = await validations(transcript, 4_000)  # one a request, under the trace's tools
    assert found and set(found) == {"passed"}
    replies = [i for i, m in enumerate(transcript.messages) if isinstance(m, AssistantMessage)]
    assert len(found) == len(replies)


async def test_two_runs_are_two_conversations() -> None:
    spans = await _pydantic_ai_spans(runs=2)
    first, second = load(spans), load(spans, episode=1)
    assert first.meta["conversations"] == 2
    assert first.messages[0].content[0].text == "add 0 and 2"  # type: ignore[union-attr]
    assert second.messages[0].content[0].text == "add 1 and 2"  # type: ignore[union-attr]
    with pytest.raises(CtxlabError, match="no conversation 2"):
        load(spans, episode=2)


async def test_a_history_rewritten_by_the_framework_keeps_the_durable_history() -> None:
    def last_two(messages: list[ModelMessage]) -> list[ModelMessage]:
        return messages[-2:] if len(messages) > 2 else messages

    transcript = load(await _pydantic_ai_spans(history_processor=last_two))
    # The second request dropped the prompt; the transcript still holds the whole run.
    assert transcript.meta["rewritten_requests"] == [1]
    assert [m.role for m in transcript.messages] == ["user", "assistant", "user", "assistant"]
    assert find_tool_pair_problems(transcript.messages) == []


def test_otel_input_tokens_include_the_cached_ones() -> None:
    attributes = {
        "gen_ai.input.messages": [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}],
        "gen_ai.output.messages": [
            {"role": "assistant", "parts": [{"type": "text", "content": "hello"}]}
        ],
        "gen_ai.usage.input_tokens": 1000,
        "gen_ai.usage.output_tokens": 7,
        "gen_ai.usage.cache_read.input_tokens": 800,
        "gen_ai.usage.cache_creation.input_tokens": 150,
    }
    usage = load(otlp_body(otlp_span(attributes))).usage[1]
    assert (usage.input_tokens, usage.cache_read_input_tokens) == (50, 800)
    assert usage.cache_creation_input_tokens == 150
    assert usage.total_input_tokens == 1000


def test_content_on_the_operation_details_event() -> None:
    span = otlp_span({"gen_ai.operation.name": "chat"})
    messages = [{"role": "user", "parts": [{"type": "text", "content": "from the event"}]}]
    span["events"] = [
        {
            "name": "gen_ai.client.inference.operation.details",
            "attributes": [
                {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(messages)}}
            ],
        }
    ]
    transcript = load(otlp_body(span))
    assert transcript.messages[0].content[0].text == "from the event"  # type: ignore[union-attr]


def test_a_trace_without_content_says_what_to_enable() -> None:
    with pytest.raises(CtxlabError, match="message content enabled"):
        load(
            otlp_body(otlp_span({"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 5}))
        )


def test_a_langchain_model_under_openinference() -> None:
    pytest.importorskip("openinference.instrumentation.langchain")
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
    from openinference.instrumentation.langchain import LangChainInstrumentor

    provider, exporter = _tracer()
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        call = {"id": "c1", "name": "add", "args": {"a": 1, "b": 2}}
        replies = iter([AIMessage(content="", tool_calls=[call]), AIMessage(content="3")])
        model = GenericFakeChatModel(messages=replies)
        history: list[Any] = [SystemMessage("Be brief."), HumanMessage("add 1 and 2")]
        history.append(model.invoke(history))
        history.append(ToolMessage("3", tool_call_id="c1"))
        model.invoke(history)
    finally:
        instrumentor.uninstrument()
    spans = list(exporter.get_finished_spans())
    # Two invocations, two traces: the second continues the first's conversation.
    transcript = load(_otlp_json(spans))
    assert transcript.meta["conversations"] == 1
    assert transcript.system == "Be brief."
    assert [m.role for m in transcript.messages] == ["user", "assistant", "user", "assistant"]
    tool_use = transcript.messages[1].content[0]
    assert (tool_use.name, tool_use.input) == ("add", {"a": 1, "b": 2})  # type: ignore[union-attr]
    assert transcript.messages[2].content[0].content == "3"  # type: ignore[union-attr]


part = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "tool_call", "tool_call_response", "reasoning", "blob"])},
    optional={
        "content": st.text(max_size=5) | st.integers(),
        "id": st.text(max_size=3) | st.none(),
        "name": st.text(max_size=3),
        "arguments": st.text(max_size=5) | st.dictionaries(st.text(max_size=2), st.integers()),
        "response": st.text(max_size=3) | st.integers(),
        "modality": st.just("image"),
    },
)
turn = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "tool", "system", "x"])},
    optional={"parts": st.lists(part, max_size=3)},
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.lists(turn, max_size=4), st.lists(turn, max_size=2)), max_size=4),
    st.integers(-5, 10**6),
)
def test_any_genai_span_content_loads_or_raises_a_typed_error(
    requests: list[tuple[list[Any], list[Any]]], tokens: int
) -> None:
    spans = [
        otlp_span(
            {
                "gen_ai.input.messages": inputs,
                "gen_ai.output.messages": outputs,
                "gen_ai.usage.input_tokens": tokens,
            },
            start=number,
        )
        for number, (inputs, outputs) in enumerate(requests)
    ]
    try:
        transcript = load(otlp_body(*spans))
    except CtxlabError as exc:
        assert str(exc).strip()
        return
    assert find_tool_pair_problems(transcript.messages) == []


def _chat(conversation: str, said: str, answered: str, start: int, trace: str) -> dict[str, Any]:
    return otlp_span(
        {
            "gen_ai.conversation.id": conversation,
            "gen_ai.input.messages": [
                {"role": "user", "parts": [{"type": "text", "content": said}]}
            ],
            "gen_ai.output.messages": [
                {"role": "assistant", "parts": [{"type": "text", "content": answered}]}
            ],
        },
        start,
        trace,
    )


def test_a_conversation_id_groups_calls_across_traces_and_splits_one_trace() -> None:
    # Each call sends only its new message (the framework keeps the history server-side), so
    # only the conversation id can join the two calls of chat A, made in different traces.
    body = otlp_body(
        _chat("chat-A", "first for A", "answer A1", 1, "a" * 32),
        _chat("chat-B", "first for B", "answer B1", 2, "a" * 32),
        _chat("chat-A", "second for A", "answer A2", 3, "b" * 32),
    )
    first, second = load(body), load(body, episode=1)
    assert first.meta["conversations"] == 2
    texts = [m.content[0].text for m in first.messages]  # type: ignore[union-attr]
    assert texts == ["first for A", "answer A1", "second for A", "answer A2"]
    assert [m.content[0].text for m in second.messages] == ["first for B", "answer B1"]  # type: ignore[union-attr]


def test_a_trace_that_extends_an_earlier_history_continues_its_conversation() -> None:
    # No conversation id: the second invocation's request repeats the first's exchange.
    def chat(inputs: list[tuple[str, str]], answer: str, start: int, trace: str) -> dict[str, Any]:
        messages = [{"role": r, "parts": [{"type": "text", "content": t}]} for r, t in inputs]
        output = [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
        attributes = {"gen_ai.input.messages": messages, "gen_ai.output.messages": output}
        return otlp_span(attributes, start, trace)

    body = otlp_body(
        chat([("user", "hi")], "hello", 1, "c" * 32),
        chat([("user", "other chat")], "sure", 2, "d" * 32),
        chat(
            [("user", "hi"), ("assistant", "hello"), ("user", "and now?")], "now this", 3, "e" * 32
        ),
    )
    transcript = load(body)
    assert transcript.meta["conversations"] == 2
    texts = [m.content[0].text for m in transcript.messages]  # type: ignore[union-attr]
    assert texts == ["hi", "hello", "and now?", "now this"]


def _turns(
    inputs: list[str], answer: str, start: int, trace: str, agent: str = ""
) -> dict[str, Any]:
    # A span of its own id (agents are found by span), its inputs alternating user/assistant.
    roles = ["user", "assistant"]
    messages = [
        {"role": roles[i % 2], "parts": [{"type": "text", "content": t}]}
        for i, t in enumerate(inputs)
    ]
    output = [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
    attributes: dict[str, Any] = {
        "gen_ai.input.messages": messages,
        "gen_ai.output.messages": output,
    }
    if agent:
        attributes["gen_ai.agent.name"] = agent
    return otlp_span(attributes, start, trace, span_id=f"{start:016x}")


def _texts(transcript: Any) -> list[str]:
    return [m.content[0].text for m in transcript.messages]


def test_a_trace_that_extends_several_conversations_continues_the_longest() -> None:
    # The helper agent (its own trace) begins with the main chat's first exchange; the main
    # chat goes on; a later trace holds the main chat whole, and the helper's start only.
    body = otlp_body(
        _turns(["hi"], "hello", 1, "c" * 32),
        _turns(["hi"], "hello", 2, "d" * 32, agent="helper"),
        _turns(["hi", "hello", "more"], "ok", 3, "c" * 32),
        _turns(["hi", "hello", "more", "ok", "next"], "done", 4, "e" * 32),
    )
    main, helper = load(body), load(body, episode=1)
    assert main.meta["conversations"] == 2
    # The third call extends its own trace's history and the helper's, equally: its own.
    # The fourth holds the main chat's four turns, the helper's two: the main chat.
    assert _texts(main) == ["hi", "hello", "more", "ok", "next", "done"]
    assert _texts(helper) == ["hi", "hello"]
    # Whatever order the spans are written in.
    assert _texts(
        load(otlp_body(*reversed(body["resourceSpans"][0]["scopeSpans"][0]["spans"])))
    ) == (_texts(main))


def test_a_trace_that_extends_two_equal_histories_continues_the_latest_begun() -> None:
    body = otlp_body(
        _turns(["hi"], "hello", 1, "c" * 32),
        _turns(["hi"], "hello", 2, "d" * 32, agent="helper"),
        _turns(["hi", "hello", "and then?"], "then this", 3, "e" * 32),
    )
    first, helper = load(body), load(body, episode=1)
    assert _texts(first) == ["hi", "hello"]
    assert _texts(helper) == ["hi", "hello", "and then?", "then this"]
