"""Span files of the Vercel AI SDK and of Phoenix (OpenInference) in the shapes they are kept in
beside OTLP are detected — no ``format=`` needed — and read into the same conversation:

- the AI SDK's spans as OpenTelemetry JS holds them (``traceId``, ``id``, ``parentId``,
  ``timestamp`` in microseconds, ``startTime`` as ``[seconds, nanoseconds]``, attributes as a
  plain object) and as its test tracer writes them (``{name, attributes, events}``), each made
  from the SDK's own OTLP export (``tests/fixtures/vercel_ai``, written by ai 5.0.277);
- Phoenix's REST answers, from Phoenix's own router (Arize-ai/phoenix
  ``src/phoenix/server/api/routers/v1/spans.py``): a page of its span JSON
  (``{"data": [...], "next_cursor"}``) and of OTLP spans with snake_case keys and values.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxlab import load
from ctxlab.io import detect_format
from ctxlab.io.formats.otel.values import any_value as _any_value
from tests.io.shown import added_up

FIXTURE = Path(__file__).parents[1] / "fixtures" / "vercel_ai" / "vercel_ai_otlp.json"


def _otlp_spans() -> list[dict[str, Any]]:
    data = json.loads(FIXTURE.read_text())
    return [s for r in data["resourceSpans"] for ss in r["scopeSpans"] for s in ss["spans"]]


def _attributes(span: dict[str, Any]) -> dict[str, Any]:
    return {a["key"]: _any_value(a["value"]) for a in span["attributes"]}


def _js_spans(start: str) -> list[dict[str, Any]]:
    # As OpenTelemetry JS's ReadableSpan holds a span, and its console exporter prints it.
    spans = []
    for span in _otlp_spans():
        nanos = int(span["startTimeUnixNano"])
        moment: Any = (
            [nanos // 1_000_000_000, nanos % 1_000_000_000]
            if start == "startTime"
            else nanos // 1_000
        )
        spans.append(
            {
                "traceId": span["traceId"],
                "parentId": span.get("parentSpanId"),
                "name": span["name"],
                "id": span["spanId"],
                "kind": 0,
                start: moment,
                "attributes": _attributes(span),
                "status": {"code": 0},
                "events": [],
                "links": [],
            }
        )
    return spans


def _test_tracer_spans() -> list[dict[str, Any]]:
    # The AI SDK's tests record spans as {name, attributes, events}: no id, no time.
    return [{"name": s["name"], "attributes": _attributes(s), "events": []} for s in _otlp_spans()]


def _phoenix_page() -> dict[str, Any]:
    # GET /v1/projects/{project}/spans: Phoenix's span JSON, attributes flat.
    def span(number: int, inputs: list[dict[str, str]], said: str, tokens: int) -> Any:
        attributes: dict[str, Any] = {
            "openinference.span.kind": "LLM",
            "llm.model_name": "gpt-4o",
            "llm.token_count.prompt": tokens,
            "llm.token_count.completion": 4,
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.content": said,
        }
        for index, message in enumerate(inputs):
            attributes[f"llm.input_messages.{index}.message.role"] = message["role"]
            attributes[f"llm.input_messages.{index}.message.content"] = message["content"]
        return {
            "id": f"U3Bhbjo{number}",
            "name": "ChatOpenAI",
            "context": {"trace_id": "t1", "span_id": f"s{number}"},
            "span_kind": "LLM",
            "parent_id": None,
            "start_time": f"2026-01-05T10:00:0{number}+00:00",
            "end_time": f"2026-01-05T10:00:0{number}+00:00",
            "status_code": "OK",
            "status_message": "",
            "attributes": attributes,
            "events": [],
        }

    first = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2 + 3?"}]
    second = [*first, {"role": "assistant", "content": "5."}, {"role": "user", "content": "x2?"}]
    return {
        "data": [span(1, first, "5.", 20), span(2, second, "10.", 30)],
        "next_cursor": None,
    }


def _phoenix_otlp_page() -> dict[str, Any]:
    # GET /v1/projects/{project}/spans/otlpv1: OTLP spans, protobuf's snake_case names.
    def value(v: Any) -> dict[str, Any]:
        return {"int_value": v} if isinstance(v, int) else {"string_value": v}

    spans = []
    for number, item in enumerate(_phoenix_page()["data"], 1):
        spans.append(
            {
                "name": item["name"],
                "trace_id": "dDE=",
                "span_id": f"czE{number}",
                "start_time_unix_nano": str(1_700_000_000_000_000_000 + number),
                "kind": "SPAN_KIND_INTERNAL",
                "attributes": [
                    {"key": k, "value": value(v)} for k, v in item["attributes"].items()
                ],
                "status": {"code": 1},
            }
        )
    return {"data": spans, "next_cursor": None}


def _vercel_expected(transcript: Any) -> None:
    assert transcript.meta["source"] == "otel" and transcript.meta["requests"] == 2
    assert transcript.system == "You report the weather."
    assert [m.role for m in transcript.messages] == ["user", "assistant", "user", "assistant"]
    assert transcript.messages[1].tool_uses[0].input == {"city": "Lisbon"}
    assert transcript.messages[3].content[0].text == "It is 21 °C and sunny in Lisbon."
    billed = {i: (u.input_tokens, u.output_tokens) for i, u in transcript.usage.items()}
    assert billed == {1: (120, 18), 3: (170, 12)}
    added_up(transcript)


@pytest.mark.parametrize(
    "spans",
    [lambda: _js_spans("timestamp"), lambda: _js_spans("startTime"), _test_tracer_spans],
)
@pytest.mark.parametrize("lines", [False, True])
def test_the_ai_sdks_spans_are_detected(tmp_path: Path, spans: Any, lines: bool) -> None:
    data = spans()
    assert detect_format(data) == "otel"
    path = tmp_path / ("spans.jsonl" if lines else "spans.json")
    text = "".join(json.dumps(s) + "\n" for s in data) if lines else json.dumps(data)
    path.write_text(text)
    _vercel_expected(load(path))


@pytest.mark.parametrize("page", [_phoenix_page, _phoenix_otlp_page])
def test_phoenixs_rest_pages_are_detected(tmp_path: Path, page: Any) -> None:
    data = page()
    assert detect_format(data) == "otel"
    for path, text in (
        (tmp_path / "page.json", json.dumps(data)),
        (tmp_path / "pages.jsonl", json.dumps(data) + "\n" + json.dumps({**data, "data": []})),
    ):
        path.write_text(text)
        transcript = load(path)
        texts = [(m.role, m.content[0].text) for m in transcript.messages]
        assert texts == [
            ("user", "2 + 3?"),
            ("assistant", "5."),
            ("user", "x2?"),
            ("assistant", "10."),
        ]
        assert transcript.system == "Be brief."
        assert {i: u.total_input_tokens for i, u in transcript.usage.items()} == {1: 20, 3: 30}


@pytest.mark.parametrize(
    "record",
    [
        {"role": "user", "content": "hi", "attributes": {"llm.model_name": "x"}, "name": "n"},
        {"name": "a form", "attributes": {"colour": "red"}},
        {"attributes": {"gen_ai.system": "openai"}},
    ],
)
def test_what_is_no_span_is_not_taken_for_one(record: dict[str, Any]) -> None:
    from ctxlab.io.formats.otel.spans import is_otel

    assert not is_otel(record)
