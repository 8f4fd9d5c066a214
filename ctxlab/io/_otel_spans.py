"""Reading OpenTelemetry span exports, whatever their shape: OTLP JSON (``TracesData`` /
OTLP/HTTP bodies, attribute values wrapped as ``AnyValue``), the SDK's own span JSON
(``ReadableSpan.to_json()``) — as plain spans: start time, trace, name, attributes, events.
What the spans mean for a conversation is `ctxlab.io._otel`'s business."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ctxlab.exceptions import MessageFormatError

__all__ = ["Span", "is_otel", "spans_of"]


@dataclass
class Span:
    start: int
    trace: str
    name: str
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def is_otel(value: Any) -> bool:
    """Whether a decoded document (or first JSON Lines record) is an OTLP or SDK span export."""
    if isinstance(value, Mapping):
        if isinstance(value.get("resourceSpans") or value.get("resource_spans"), list):
            return True
        return isinstance(value.get("attributes"), Mapping) and isinstance(
            value.get("context"), Mapping
        )
    return bool(value) and isinstance(value, list) and is_otel(value[0])


# --- reading spans --------------------------------------------------------------------------


def _any_value(value: Any) -> Any:
    # OTLP JSON wraps every attribute value: {"stringValue": ...}, {"intValue": "12"} (int64 as a
    # string), {"arrayValue": {"values": [...]}}, {"kvlistValue": {"values": [{key, value}]}}.
    if not isinstance(value, Mapping):
        return value
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        return int(value["intValue"])
    if "arrayValue" in value:
        return [_any_value(v) for v in (value["arrayValue"] or {}).get("values") or []]
    if "kvlistValue" in value:
        return _key_values((value["kvlistValue"] or {}).get("values") or [])
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


def _key_values(items: Any) -> dict[str, Any]:
    if isinstance(items, Mapping):  # the SDK's JSON: already a plain mapping
        return dict(items)
    return {
        str(item.get("key")): _any_value(item.get("value"))
        for item in items or ()
        if isinstance(item, Mapping)
    }


def _nanos(value: Any) -> int:
    if isinstance(value, int | float):
        return int(value)
    if isinstance(value, str) and value:
        if value.isdigit():
            return int(value)
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1e9)
    return 0


def _otlp_span(span: Mapping[str, Any]) -> Span:
    return Span(
        start=_nanos(span.get("startTimeUnixNano") or span.get("start_time_unix_nano")),
        trace=str(span.get("traceId") or span.get("trace_id") or ""),
        name=str(span.get("name") or ""),
        attributes=_key_values(span.get("attributes")),
        events=[
            (str(e.get("name")), _key_values(e.get("attributes")))
            for e in span.get("events") or ()
            if isinstance(e, Mapping)
        ],
    )


def _sdk_span(span: Mapping[str, Any]) -> Span:
    context = span.get("context") or {}
    return Span(
        start=_nanos(span.get("start_time")),
        trace=str(context.get("trace_id") or ""),
        name=str(span.get("name") or ""),
        attributes=dict(span.get("attributes") or {}),
        events=[
            (str(e.get("name")), dict(e.get("attributes") or {}))
            for e in span.get("events") or ()
            if isinstance(e, Mapping)
        ],
    )


def spans_of(data: Any, where: str) -> list[Span]:
    records = data if isinstance(data, list) else [data]
    spans: list[Span] = []
    for number, record in enumerate(records):
        if not isinstance(record, Mapping):
            msg = f"{where} record {number}: expected an OTLP TracesData object or a span"
            raise MessageFormatError(msg)
        resource_spans = record.get("resourceSpans", record.get("resource_spans"))
        if resource_spans is None:
            spans.append(_sdk_span(record))
            continue
        for resource in resource_spans or ():
            for scope in resource.get("scopeSpans") or resource.get("scope_spans") or ():
                spans.extend(_otlp_span(s) for s in scope.get("spans") or ())
    return spans
