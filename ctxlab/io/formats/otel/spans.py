"""Reading OpenTelemetry span exports, whatever their shape — as plain spans: start time,
trace, name, attributes, events. What the spans mean for a conversation is
`ctxlab.io.formats.otel.parse`'s business.

- OTLP JSON (``TracesData`` / OTLP/HTTP bodies, values wrapped as ``AnyValue``), also as Tempo
  exports it (``batches`` of ``instrumentationLibrarySpans``, OTLP's older field names);
- the SDK's span JSON (``ReadableSpan.to_json()``), and the span JSON of tools built on it:
  Phoenix (the kind in a top-level ``span_kind``, attributes nested: ``{"llm": {...}}``),
  any-agent (``{"spans": [...]}``, its ``AgentSpan.model_dump()``);
- Jaeger's JSON (``{"data": [{"traceID", "spans": [{"tags": [{key, type, value}]}]}]}``);
- Phoenix's REST answers (``GET /v1/projects/{project}/spans``: ``{"data": [span JSON, ...],
  "next_cursor"}``; ``.../spans/otlpv1``: the spans as OTLP with snake_case keys and values,
  ``{"key", "value": {"string_value": ...}}``);
- spans written by other SDKs or by hand, with no ``context``: OpenTelemetry JS's
  (``traceId``, ``id``, ``parentId`` or ``parentSpanId``, ``timestamp`` in microseconds or a
  ``startTime`` as ``[seconds, nanoseconds]``), or the Vercel AI SDK's test tracer's
  (``{name, attributes, events}``) — a span is known by its ``attributes`` beside a span id,
  a trace id or a start time, or beside a ``name`` when the attributes are an LLM convention's
  (``gen_ai.*``, ``llm.*``, ``ai.*``, ``openinference.*``, ...).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io.formats.otel.agents import AGENTS_KEY, agents_items
from ctxlab.io.formats.otel.values import Span, first, flat, key_values, nanos

__all__ = ["Span", "is_otel", "spans_of"]


def _langfuse_observations(value: Any) -> list[Mapping[str, Any]] | None:
    """The observations of a Langfuse API export — ``GET /api/public/v2/observations``
    (``{"data": [...]}``), a trace with its ``observations``, or a list of observations — or
    None when ``value`` is none of these."""
    if isinstance(value, Mapping):
        for key in ("data", "observations"):
            found = _langfuse_observations(value.get(key))
            if found is not None:
                return found
        return None
    if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value[:20]):
        head = value[0]
        if "startTime" in head and "type" in head and ("traceId" in head or "input" in head):
            return value
    return None


def _langfuse_span(observation: Mapping[str, Any], session: Any) -> Span:
    # An observation of the API as the span the SDK wrote for it (see io/_otel_langfuse.py).
    attributes: dict[str, Any] = {
        "langfuse.observation.type": str(observation.get("type") or "").lower(),
        "session.id": observation.get("sessionId") or session,
    }
    usage = observation.get("usageDetails") or observation.get("usage")
    for name, value in (
        ("input", observation.get("input")),
        ("output", observation.get("output")),
        ("usage_details", usage),
    ):
        if value is not None:
            attributes[f"langfuse.observation.{name}"] = json.dumps(value, default=str)
    return Span(
        start=nanos(observation.get("startTime")),
        trace=str(observation.get("traceId") or ""),
        name=str(observation.get("name") or ""),
        attributes=attributes,
        id=str(observation.get("id") or ""),
        parent=str(observation.get("parentObservationId") or ""),
        raw=observation,
    )


def is_otel(value: Any) -> bool:
    """Whether a decoded document (or first JSON Lines record) is a span export of one of the
    shapes this module reads (a Langfuse API export of observations and the OpenAI Agents SDK's
    trace export among them)."""
    if _langfuse_observations(value) is not None or agents_items(value) is not None:
        return True
    if isinstance(value, Mapping) and value.get("object") in ("trace", "trace.span"):
        return True  # the first line of an Agents SDK export written one item a line
    if isinstance(value, Mapping):
        for key in ("resourceSpans", "resource_spans", "batches"):
            if isinstance(value.get(key), list):
                return True
        if _is_jaeger(value) or _phoenix_page(value) is not None:
            return True
        spans = value.get("spans")
        if isinstance(spans, list) and spans and not isinstance(value.get("messages"), list):
            return is_otel(spans[0])
        return _is_span(value)
    return bool(value) and isinstance(value, list) and is_otel(value[0])


_SPAN_KEYS = frozenset(
    {
        "span_id",
        "spanId",
        "trace_id",
        "traceId",
        "parent_id",
        "parentId",
        "parentSpanId",
        "parent_span_id",
        "span_kind",
        "start_time",
        "startTime",
        "start_time_unix_nano",
        "startTimeUnixNano",
    }
)
"""Keys that only a span carries beside its attributes (its ids, its start, Phoenix's kind)."""
_CONVENTIONS = frozenset({"gen_ai", "llm", "ai", "openinference", "langfuse", "traceloop"})
"""The first word of the attributes of the LLM conventions ctxlab reads (flat or nested)."""


def _is_span(value: Mapping[str, Any]) -> bool:
    """A span of the SDK's JSON, Phoenix's, or another SDK's (see the module): attributes, and
    a span's ids or start — or a name, when the attributes are an LLM convention's."""
    attributes = value.get("attributes")
    if "role" in value or "messages" in value:
        return False  # a chat message with attributes of its own, not a span
    if isinstance(attributes, list):  # OTLP's key-value list, with a span's ids
        return (
            bool(attributes)
            and all(isinstance(a, Mapping) and "key" in a for a in attributes[:20])
            and bool(_SPAN_KEYS & value.keys())
        )
    if not isinstance(attributes, Mapping):
        return False
    if isinstance(value.get("context"), Mapping) or _SPAN_KEYS & value.keys():
        return True
    return isinstance(value.get("name"), str) and any(
        str(key).split(".", 1)[0] in _CONVENTIONS for key in list(attributes)[:200]
    )


def _phoenix_page(value: Mapping[str, Any]) -> list[Any] | None:
    """The spans of a page of Phoenix's REST answer (``{"data": [span, ...], "next_cursor"}``),
    else None."""
    data = value.get("data")
    if (
        isinstance(data, list)
        and data
        and isinstance(data[0], Mapping)
        and "traceID" not in data[0]  # Jaeger's
        and _is_span(data[0])
    ):
        return data
    return None


def _is_jaeger(value: Mapping[str, Any]) -> bool:
    data = value.get("data")
    return (
        isinstance(data, list)
        and bool(data)
        and isinstance(data[0], Mapping)
        and "traceID" in data[0]
        and isinstance(data[0].get("spans"), list)
    )


# --- reading spans --------------------------------------------------------------------------


def _otlp_span(span: Mapping[str, Any]) -> Span:
    return Span(
        start=nanos(span.get("startTimeUnixNano") or span.get("start_time_unix_nano")),
        trace=str(span.get("traceId") or span.get("trace_id") or ""),
        name=str(span.get("name") or ""),
        attributes=key_values(span.get("attributes")),
        events=[
            (str(e.get("name")), key_values(e.get("attributes")))
            for e in span.get("events") or ()
            if isinstance(e, Mapping)
        ],
        id=str(span.get("spanId") or span.get("span_id") or ""),
        parent=str(span.get("parentSpanId") or span.get("parent_span_id") or ""),
        raw=span,
    )


def _sdk_span(span: Mapping[str, Any]) -> Span:
    context = span.get("context")
    context = context if isinstance(context, Mapping) else {}
    attributes = flat(span.get("attributes") or {})
    kind = span.get("span_kind")
    if isinstance(kind, str) and "openinference.span.kind" not in attributes:
        attributes["openinference.span.kind"] = kind  # Phoenix keeps it beside the attributes
    parent = span.get("parentSpanContext")  # OpenTelemetry JS 2.x
    return Span(
        start=_start(span),
        trace=str(first(context, "trace_id") or first(span, "trace_id", "traceId") or ""),
        name=str(span.get("name") or ""),
        attributes=attributes,
        events=[
            (str(e.get("name")), dict(e.get("attributes") or {}))
            for e in span.get("events") or ()
            if isinstance(e, Mapping)
        ],
        id=str(first(context, "span_id") or first(span, "span_id", "spanId", "id") or ""),
        parent=str(
            first(span, "parent_id", "parentId", "parentSpanId", "parent_span_id")
            or (parent.get("spanId") if isinstance(parent, Mapping) else None)
            or ""
        ),
        raw=span,
    )


def _start(span: Mapping[str, Any]) -> int:
    """A span's start in nanoseconds: the SDK's ``start_time``, OpenTelemetry JS's
    ``startTime`` (``[seconds, nanoseconds]``) or ``timestamp`` (microseconds)."""
    value = first(span, "start_time", "startTime")
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        return nanos(value[0] * 1_000_000_000 + value[1])
    if value is None and span.get("timestamp") is not None:
        return nanos(span.get("timestamp"), 1_000)
    return nanos(value)


def _jaeger_spans(record: Mapping[str, Any]) -> list[Span]:
    spans: list[Span] = []
    for trace in record.get("data") or ():
        if not isinstance(trace, Mapping):
            continue
        for span in trace.get("spans") or ():
            if not isinstance(span, Mapping):
                continue
            tags = {
                str(t.get("key")): t.get("value")
                for t in span.get("tags") or ()
                if isinstance(t, Mapping)
            }
            logs = [
                (
                    "log",
                    {
                        str(f.get("key")): f.get("value")
                        for f in log.get("fields") or ()
                        if isinstance(f, Mapping)
                    },
                )
                for log in span.get("logs") or ()
                if isinstance(log, Mapping)
            ]
            spans.append(
                Span(
                    start=nanos(span.get("startTime"), 1_000),  # microseconds
                    trace=str(span.get("traceID") or trace.get("traceID") or ""),
                    name=str(span.get("operationName") or ""),
                    attributes=tags,
                    events=logs,
                    id=str(span.get("spanID") or ""),
                    raw=span,
                    parent=next(
                        (
                            str(r.get("spanID"))
                            for r in span.get("references") or ()
                            if isinstance(r, Mapping) and r.get("refType") == "CHILD_OF"
                        ),
                        "",
                    ),
                )
            )
    return spans


def spans_of(data: Any, where: str) -> list[Span]:
    items = agents_items(data)
    if items is not None:
        return [
            Span(
                nanos(i.get("started_at")),
                str(i.get("trace_id")),
                "",
                {AGENTS_KEY: data},
                id=str(i.get("id") or ""),
                parent=str(i.get("parent_id") or ""),
                raw=i,
            )
            for i in items
            if isinstance(data := i.get("span_data"), Mapping)
        ]
    observations = _langfuse_observations(data)
    if observations is not None:
        session = data.get("sessionId") if isinstance(data, Mapping) else None
        return [_langfuse_span(o, session) for o in observations if isinstance(o, Mapping)]
    if (
        isinstance(data, Mapping)
        and isinstance(data.get("spans"), list)
        and "resourceSpans" not in data
    ):
        data = data["spans"]  # any-agent's trace: {"spans": [...]}
    records = data if isinstance(data, list) else [data]
    spans: list[Span] = []
    for number, record in enumerate(records):
        if not isinstance(record, Mapping):
            msg = f"{where} record {number}: expected an OTLP TracesData object or a span"
            raise MessageFormatError(msg)
        spans.extend(_record_spans(record))
    return spans


def _record_spans(record: Mapping[str, Any]) -> list[Span]:
    """The spans of one record: a Jaeger answer, a page of Phoenix's, an OTLP ``TracesData``,
    or one span (OTLP's, with its attributes as key-value pairs, or the SDK's JSON)."""
    if _is_jaeger(record):
        return _jaeger_spans(record)
    page = _phoenix_page(record)
    if page is not None:
        return [s for item in page if isinstance(item, Mapping) for s in _record_spans(item)]
    resource_spans = record.get(
        "resourceSpans", record.get("resource_spans", record.get("batches"))
    )
    if resource_spans is None:
        if isinstance(record.get("attributes"), list):
            return [_otlp_span(record)]
        return [_sdk_span(record)]
    spans: list[Span] = []
    for resource in resource_spans or ():
        scopes = (
            resource.get("scopeSpans")
            or resource.get("scope_spans")
            or resource.get("instrumentationLibrarySpans")  # OTLP before 0.15 (Tempo)
            or ()
        )
        for scope in scopes:
            spans.extend(_otlp_span(s) for s in scope.get("spans") or ())
    return spans
