"""OTLP JSON written by the OTel importer's tests: a span of attributes, each value encoded as
the collector's JSON encodes it, and the document of spans that holds them."""

from __future__ import annotations

import json
from typing import Any


def otlp_span(
    attributes: dict[str, Any],
    start: int = 1,
    trace: str = "5b8efff798038103d269b633813fc60c",
    span_id: str = "eee19b7ec3c1b174",
) -> dict[str, Any]:
    """A ``chat`` span starting at ``start`` (Unix nanoseconds): an int attribute as an
    ``intValue``, a string as a ``stringValue``, anything else as a ``stringValue`` of its JSON
    (as the GenAI conventions record messages)."""

    def value(v: Any) -> dict[str, Any]:
        if isinstance(v, int):
            return {"intValue": str(v)}
        return {"stringValue": v if isinstance(v, str) else json.dumps(v)}

    return {
        "traceId": trace,
        "spanId": span_id,
        "name": "chat",
        "startTimeUnixNano": str(start),
        "attributes": [{"key": k, "value": value(v)} for k, v in attributes.items()],
    }


def otlp_body(*spans: dict[str, Any]) -> dict[str, Any]:
    """The OTLP document of these spans: one resource, one scope."""
    return {"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}
