"""A span as ctxlab reads it — start time, trace, name, attributes, events, ids — and the
readers of the values span exports wrap (OTLP's ``AnyValue``, snake_case keys, times in every
unit, nested attributes): what every span shape of `ctxlab.io.formats.otel.spans` shares."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

__all__ = ["FLAT_DEPTH", "LATEST", "Span", "any_value", "first", "flat", "key_values", "nanos"]


@dataclass
class Span:
    start: int
    trace: str
    name: str
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    id: str = ""
    parent: str = ""
    """The span's id and its parent's (which agent a model call ran in)."""
    raw: Any = field(default=None, compare=False, repr=False)
    """The span as the file holds it (what a span set aside holds, for the file's inventory)."""


def any_value(value: Any) -> Any:
    # OTLP JSON wraps every attribute value: {"stringValue": ...}, {"intValue": "12"} (int64 as a
    # string), {"arrayValue": {"values": [...]}}, {"kvlistValue": {"values": [{key, value}]}}.
    if not isinstance(value, Mapping):
        return value
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError, OverflowError):  # NaN, infinity, text: kept as it came
            return value["intValue"]
    if "arrayValue" in value:
        return [any_value(v) for v in (value["arrayValue"] or {}).get("values") or []]
    if "kvlistValue" in value:
        return key_values((value["kvlistValue"] or {}).get("values") or [])
    if "bytesValue" in value:
        return value["bytesValue"]
    snake = {k: v for k, v in value.items() if k in _SNAKE and v is not None}
    if snake:  # Phoenix's OTLP answer: protobuf's snake_case names
        return any_value({_SNAKE[k]: v for k, v in snake.items()})
    return None


_SNAKE = {
    "string_value": "stringValue",
    "bool_value": "boolValue",
    "double_value": "doubleValue",
    "int_value": "intValue",
    "array_value": "arrayValue",
    "kvlist_value": "kvlistValue",
    "bytes_value": "bytesValue",
}


def key_values(items: Any) -> dict[str, Any]:
    if isinstance(items, Mapping):  # the SDK's JSON: already a plain mapping
        return dict(items)
    return {
        str(item.get("key")): any_value(item.get("value"))
        for item in items or ()
        if isinstance(item, Mapping)
    }


LATEST = 2**63 - 1
"""The latest start time a span can have, in nanoseconds (OTLP's fixed64; the year 2262)."""


def nanos(value: Any, scale: int = 1) -> int:
    """A start time as nanoseconds since 1970: a number (of ``scale`` nanoseconds: Jaeger
    counts microseconds), a string of digits, or an ISO 8601 time; 0 when missing. A
    `ValueError` names a value that is no time — infinite, negative, past the year 2262, text
    that is no date — rather than an ``OverflowError`` from deep inside."""
    if value is None or value == "":
        return 0
    if isinstance(value, str) and value.isascii() and value.isdecimal() and len(value) <= 20:
        value = int(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        if math.isfinite(value) and 0 <= value * scale <= LATEST:
            return int(value * scale)
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
            return int(moment.timestamp() * 1e9)
        except (ValueError, OverflowError, OSError):
            pass
    shown = repr(value) if not isinstance(value, str) else repr(value[:40])
    msg = (
        f"a span's start time is {shown}: not a time (nanoseconds since 1970, or an ISO 8601 "
        "date); export the trace again"
    )
    raise ValueError(msg)


FLAT_DEPTH = 64
"""How deep nested attributes are flattened; below, a value is kept whole under its key (no
instrumentation nests a dozen levels, and recursion without a bound breaks at about 1,000)."""


def flat(attributes: Mapping[str, Any], prefix: str = "", depth: int = 0) -> dict[str, Any]:
    """Nested attributes (Phoenix: ``{"llm": {"input_messages": [{"message": ...}]}}``) as the
    flat dotted keys OTLP carries (``llm.input_messages.0.message.role``); flat ones as they are."""
    out: dict[str, Any] = {}
    for key, value in attributes.items():
        name = f"{prefix}{key}"
        if depth >= FLAT_DEPTH:
            out[name] = value
        elif isinstance(value, Mapping):
            out.update(flat(value, f"{name}.", depth + 1))
        elif (
            prefix
            and isinstance(value, list)
            and value
            and all(isinstance(v, Mapping) for v in value)
        ):
            for index, item in enumerate(value):
                out.update(flat(item, f"{name}.{index}.", depth + 1))
        else:
            out[name] = value
    return out


def first(record: Mapping[str, Any], *keys: str) -> Any:
    return next((record[k] for k in keys if record.get(k) not in (None, "")), None)
