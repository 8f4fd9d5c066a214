"""Span exports read as plain spans, each shape of ``ctxlab/io/formats/otel/spans.py`` by the whole
span a reader gets (start in nanoseconds, trace, name, attributes, events, id and parent):
OTLP JSON (camelCase, snake_case, Tempo's batches), the SDK's span JSON (Phoenix's nested
attributes), any-agent's ``{"spans"}``, Jaeger, Langfuse observations; which documents are
span exports; and the refusals."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from ctxlab.exceptions import MessageFormatError
from ctxlab.io.formats.otel.agents import AGENTS_KEY
from ctxlab.io.formats.otel.spans import Span, is_otel, spans_of


def _kv(key: str, value: dict[str, Any]) -> dict[str, Any]:
    return {"key": key, "value": value}


def test_otlp_json_with_every_wrapped_value() -> None:
    span = {
        "traceId": "t1",
        "spanId": "s2",
        "parentSpanId": "s1",
        "name": "chat m",
        "startTimeUnixNano": "1700000000000000001",
        "attributes": [
            _kv("s", {"stringValue": "x"}),
            _kv("b", {"boolValue": False}),
            _kv("d", {"doubleValue": 0.5}),
            _kv("i", {"intValue": "12"}),
            _kv("bad", {"intValue": "NaN"}),
            _kv("a", {"arrayValue": {"values": [{"stringValue": "p"}, {"intValue": 3}]}}),
            _kv("empty", {"arrayValue": None}),
            _kv("kv", {"kvlistValue": {"values": [_kv("k", {"stringValue": "v"})]}}),
            _kv("nokv", {"kvlistValue": None}),
            _kv("bytes", {"bytesValue": "AAE="}),
            _kv("plain", 7),  # not wrapped: as it is
            _kv("unknown", {"fooValue": 1}),
            "junk",
        ],
        "events": [{"name": "e", "attributes": [_kv("n", {"intValue": "1"})]}, "junk"],
    }
    data = {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}
    assert is_otel(data)
    assert spans_of(data, "f") == [
        Span(
            start=1700000000000000001,
            trace="t1",
            name="chat m",
            attributes={
                "s": "x",
                "b": False,
                "d": 0.5,
                "i": 12,
                "bad": "NaN",
                "a": ["p", 3],
                "empty": [],
                "kv": {"k": "v"},
                "nokv": {},
                "bytes": "AAE=",
                "plain": 7,
                "unknown": None,
            },
            events=[("e", {"n": 1})],
            id="s2",
            parent="s1",
        )
    ]


def test_otlp_snake_case_and_tempos_batches() -> None:
    snake = {
        "trace_id": "t",
        "span_id": "s",
        "parent_span_id": "p",
        "name": "n",
        "start_time_unix_nano": 5,
        "attributes": {"k": 1},  # already a plain mapping
    }
    expected = Span(5, "t", "n", {"k": 1}, [], "s", "p")
    assert spans_of({"resource_spans": [{"scope_spans": [{"spans": [snake]}]}]}, "f") == [expected]
    tempo = {"batches": [{"instrumentationLibrarySpans": [{"spans": [snake]}]}]}
    assert is_otel(tempo) and spans_of(tempo, "f") == [expected]
    # A resource without scopes, a scope without spans: nothing, and no error.
    assert spans_of({"resourceSpans": [{}, {"scopeSpans": [{}]}]}, "f") == []
    assert spans_of({"resourceSpans": []}, "f") == []
    assert spans_of([{"resourceSpans": [{"scopeSpans": [{"spans": [{}]}]}]}], "f") == [
        Span(0, "", "", {}, [], "", "")
    ]


def test_the_sdks_span_json_and_phoenixs_nested_attributes() -> None:
    span = {
        "name": "llm",
        "context": {"trace_id": "0xt", "span_id": "0xs"},
        "parent_id": "0xp",
        "start_time": "2026-01-02T03:04:05Z",
        "span_kind": "LLM",
        "attributes": {
            "llm": {"input_messages": [{"message": {"role": "user"}}], "model_name": "m"},
            "tags": ["a", "b"],
            "top": [{"x": 1}],  # a list at the top level is kept whole
        },
        "events": [{"name": "ev", "attributes": {"k": "v"}}, {"name": "bare"}, 3],
    }
    assert is_otel(span)
    assert spans_of(span, "f") == [
        Span(
            start=1767323045000000000,
            trace="0xt",
            name="llm",
            attributes={
                "llm.input_messages.0.message.role": "user",
                "llm.model_name": "m",
                "tags": ["a", "b"],
                "top": [{"x": 1}],
                "openinference.span.kind": "LLM",
            },
            events=[("ev", {"k": "v"}), ("bare", {})],
            id="0xs",
            parent="0xp",
        )
    ]
    # A kind among the attributes stands; a kind that is not text is not one.
    kept = {"context": {}, "attributes": {"openinference.span.kind": "TOOL"}, "span_kind": "LLM"}
    assert spans_of(kept, "f")[0].attributes == {"openinference.span.kind": "TOOL"}
    assert spans_of({"context": {}, "attributes": {}, "span_kind": 3}, "f")[0].attributes == {}
    # any-agent: {"spans": [...]}
    assert spans_of({"spans": [span]}, "f") == spans_of(span, "f")
    assert is_otel({"spans": [span]})
    assert not is_otel({"spans": [span], "messages": []})


def test_jaeger_json() -> None:
    data = {
        "data": [
            {
                "traceID": "T",
                "spans": [
                    "junk",
                    {
                        "spanID": "b",
                        "operationName": "chat",
                        "startTime": 1_700_000_000_000_000,  # microseconds
                        "tags": [{"key": "k", "type": "string", "value": "v"}, "junk"],
                        "logs": [{"fields": [{"key": "f", "value": 1}, 2]}, "junk", {}],
                        "references": [
                            "junk",
                            {"refType": "FOLLOWS_FROM", "spanID": "x"},
                            {"refType": "CHILD_OF", "spanID": "a"},
                        ],
                    },
                    {"traceID": "own", "spanID": "c"},
                    "junk",
                ],
            },
            "junk",  # what is no trace or no span is passed over, not the end of the list
            {"traceID": "T2", "spans": [{"spanID": "d"}]},
        ]
    }
    assert is_otel(data)
    assert spans_of(data, "f") == [
        Span(
            1_700_000_000_000_000_000,
            "T",
            "chat",
            {"k": "v"},
            [("log", {"f": 1}), ("log", {})],
            "b",
            "a",
        ),
        Span(0, "own", "", {}, [], "c", ""),
        Span(0, "T2", "", {}, [], "d", ""),
    ]


def test_langfuse_observations() -> None:
    observation = {
        "id": "o2",
        "traceId": "t",
        "parentObservationId": "o1",
        "type": "GENERATION",
        "name": "chat",
        "startTime": "1970-01-01T00:00:01Z",
        "input": [{"role": "user"}],
        "output": {"role": "assistant"},
        "usage": {"input": 3},
    }
    expected = Span(
        start=1_000_000_000,
        trace="t",
        name="chat",
        attributes={
            "langfuse.observation.type": "generation",
            "session.id": "sess",
            "langfuse.observation.input": '[{"role": "user"}]',
            "langfuse.observation.output": '{"role": "assistant"}',
            "langfuse.observation.usage_details": '{"input": 3}',
        },
        id="o2",
        parent="o1",
    )
    for shape in (
        {"data": [observation], "sessionId": "sess"},
        {"observations": [observation], "sessionId": "sess"},
    ):
        assert is_otel(shape)
        assert spans_of(shape, "f") == [expected]
    # usageDetails before usage; the observation's own session first.
    own = {**observation, "usageDetails": {"output": 1}, "sessionId": "mine"}
    (span,) = spans_of([own], "f")
    assert span.attributes["langfuse.observation.usage_details"] == '{"output": 1}'
    assert span.attributes["session.id"] == "mine"
    # An observation without input or output keeps no such attribute.
    bare = {"startTime": 0, "type": "SPAN", "traceId": "t"}
    assert spans_of([bare], "f")[0].attributes == {
        "langfuse.observation.type": "span",
        "session.id": None,
    }


@pytest.mark.parametrize(
    "value",
    [
        {"data": []},
        {"data": [{"traceID": "t"}]},  # no spans
        {"data": ["x"]},
        {"observations": [{"startTime": 0, "type": "x"}]},  # neither trace id nor input
        {"attributes": {}, "context": "x"},
        {"attributes": [], "context": {}},
        {"spans": []},
        [],
        "text",
        {"resourceSpans": {}},
    ],
)
def test_what_is_not_a_span_export(value: Any) -> None:
    assert not is_otel(value)


@pytest.mark.parametrize(
    "value",
    [
        {"resource_spans": []},
        {"batches": []},
        [{"resourceSpans": []}],
        {"object": "trace"},
        {"object": "trace.span"},
        {"observations": [{"startTime": 0, "type": "x", "input": 1}]},
    ],
)
def test_what_is_a_span_export(value: Any) -> None:
    assert is_otel(value)


def test_start_times_as_each_export_writes_them() -> None:
    def start(value: Any) -> int:
        return spans_of({"context": {}, "start_time": value}, "f")[0].start

    assert start(None) == 0
    assert start("") == 0
    assert start(12) == 12
    assert start(1.5) == 1
    assert start("12") == 12
    assert start("2026-01-02T03:04:05+00:00") == 1767323045000000000
    assert start(2**63 - 1) == 2**63 - 1
    for bad in (2**63, -1, float("inf"), True, "yesterday", "9" * 21, [1]):
        with pytest.raises(ValueError, match=r"a span's start time is .*: not a time"):
            start(bad)


def test_a_record_that_is_no_object_is_refused_naming_it() -> None:
    with pytest.raises(MessageFormatError) as raised:
        spans_of([{"context": {}}, 3], "trace.json")
    assert str(raised.value) == (
        "trace.json record 1: expected an OTLP TracesData object or a span"
    )


def test_an_agents_sdk_export_as_spans_of_its_span_data() -> None:
    generation = {"type": "generation", "model": "m"}
    data = {
        "data": [
            {"object": "trace", "id": "trace_1"},  # the trace itself: no span data
            {
                "object": "trace.span",
                "id": "span_2",
                "trace_id": "trace_1",
                "parent_id": "span_1",
                "started_at": "1970-01-01T00:00:02Z",
                "span_data": generation,
            },
            {"object": "trace.span", "span_data": {"type": "agent"}},
        ]
    }
    assert is_otel(data) and is_otel(data["data"])
    assert spans_of(data, "f") == [
        Span(2_000_000_000, "trace_1", "", {AGENTS_KEY: generation}, [], "span_2", "span_1"),
        Span(0, "None", "", {AGENTS_KEY: {"type": "agent"}}, [], "", ""),
    ]


def test_what_a_span_lacks_is_empty_text_not_a_placeholder() -> None:
    empty = Span(0, "", "", {}, [], "", "")
    assert spans_of({"context": {}}, "f") == [empty]  # the SDK's
    assert spans_of({"data": [{"traceID": "", "spans": [{}]}]}, "f") == [empty]  # Jaeger's
    (observation,) = spans_of([{"startTime": None, "type": None, "input": 1}], "f")
    assert (observation.trace, observation.name, observation.id, observation.parent) == (
        "",
        "",
        "",
        "",
    )
    assert observation.attributes["langfuse.observation.type"] == ""


def test_an_export_with_resource_spans_and_spans_reads_the_resource_spans() -> None:
    otlp = {"traceId": "t", "name": "otlp"}
    data = {"resourceSpans": [{"scopeSpans": [{"spans": [otlp]}]}], "spans": [{"name": "x"}]}
    assert [s.name for s in spans_of(data, "f")] == ["otlp"]
    # Records of several shapes, one after the other: each read.
    jaeger = {"data": [{"traceID": "T", "spans": [{"operationName": "j"}]}]}
    assert [s.name for s in spans_of([jaeger, data], "f")] == ["j", "otlp"]


def test_nested_attributes_flatten_to_a_bound_then_stay_whole() -> None:
    deep: dict[str, Any] = {"leaf": 1}
    for _ in range(70):
        deep = {"a": deep}
    (span,) = spans_of({"context": {}, "attributes": deep}, "f")
    ((key, value),) = span.attributes.items()
    assert key == ".".join(["a"] * 65)  # 64 levels flattened, the 65th kept whole
    assert value == {"a": {"a": {"a": {"a": {"a": {"leaf": 1}}}}}}
    # A list's items count one level each, as a mapping's values do.
    listed: dict[str, Any] = {"x": [{"y": {"z": {"w": {"v": 1}}}}]}
    for _ in range(62):
        listed = {"a": listed}
    (span,) = spans_of({"context": {}, "attributes": listed}, "f")
    assert span.attributes == {".".join(["a"] * 62) + ".x.0.y.z": {"w": {"v": 1}}}


def test_a_langfuse_value_json_cannot_write_is_written_as_its_text() -> None:
    when = datetime(2026, 1, 2, tzinfo=UTC)
    observation = {"startTime": 0, "type": "SPAN", "traceId": "t", "input": {"at": when}}
    (span,) = spans_of([observation], "f")
    assert span.attributes["langfuse.observation.input"] == '{"at": "2026-01-02 00:00:00+00:00"}'


def test_the_shape_of_observations_is_judged_on_the_first_twenty() -> None:
    observation = {"startTime": 0, "type": "SPAN", "traceId": "t"}
    assert is_otel([observation] * 20 + ["junk"])
    assert not is_otel([observation] * 19 + ["junk"])
    assert len(spans_of([observation] * 20 + ["junk"], "f")) == 20


def test_a_start_time_refused_is_named_in_the_message() -> None:
    def start(value: Any) -> int:
        return spans_of({"context": {}, "start_time": value}, "f")[0].start

    assert start("0" * 18 + "12") == 12  # twenty digits
    with pytest.raises(ValueError) as raised:
        start(-5)
    assert str(raised.value) == (
        "a span's start time is -5: not a time (nanoseconds since 1970, or an ISO 8601 date); "
        "export the trace again"
    )
    with pytest.raises(ValueError) as raised:
        start("x" * 50)
    assert str(raised.value).startswith(f"a span's start time is {'x' * 40!r}: not a time")
