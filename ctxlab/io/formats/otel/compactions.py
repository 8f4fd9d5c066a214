"""ctxlab's compaction events on OpenTelemetry spans: written by `ctxlab.io.to_otel`, read back
into ``meta["compaction_events"]`` when a trace is loaded.

The GenAI semantic conventions define no compaction event, so the event's name and attributes
are ctxlab's own: an event ``ctxlab.compaction`` on the span of the request the trigger was
evaluated for, one attribute ``ctxlab.compaction.<field>`` per field of
`ctxlab.io._compaction_events.EVENT_FIELDS` (the tokens by placement flattened as
``ctxlab.compaction.tokens_before.<placement>``, as OTel attributes are flat; a field with no
value is left unset and reads back as None).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ctxlab.io._compaction_events import EVENT_FIELDS
from ctxlab.io.formats.otel.spans import Span

__all__ = ["OTEL_EVENT", "PREFIX", "compaction_events_of", "otel_attributes", "raw_events"]

OTEL_EVENT = "ctxlab.compaction"
"""The event's name (ctxlab's own: the conventions have none for a compaction)."""

PREFIX = f"{OTEL_EVENT}."
_BY_PLACEMENT = ("tokens_before", "tokens_after")


def otel_attributes(event: Mapping[str, Any]) -> dict[str, Any]:
    """One compaction event as flat span-event attributes (None values included: the writer
    leaves them unset)."""
    out: dict[str, Any] = {}
    for name in EVENT_FIELDS:
        value = event.get(name)
        if name in _BY_PLACEMENT and isinstance(value, Mapping):
            for placement, tokens in value.items():
                out[f"{PREFIX}{name}.{placement}"] = tokens
        else:
            out[f"{PREFIX}{name}"] = value
    return out


def compaction_events_of(spans: Sequence[Span]) -> list[dict[str, Any]]:
    """The ``ctxlab.compaction`` events of ``spans`` as `otel_attributes` wrote them (each with
    the ``conversation`` of its span: a trace may hold several), in the order of their spans'
    starts and then of their requests — not of the file: Phoenix's REST answer lists spans
    newest first, and a session without a clock starts every span at 0."""
    events: list[tuple[int, int, dict[str, Any]]] = []
    for span in spans:
        for name, attrs in span.events:
            if name == OTEL_EVENT:
                event = _event(attrs)
                event["conversation"] = span.attributes.get("gen_ai.conversation.id")
                number = event["request"]
                request = number if type(number) is int else -1
                events.append((span.start or 0, request, event))
    events.sort(key=lambda e: e[:2])  # stable: events of one request keep their order
    return [event for _, _, event in events]


def raw_events(spans: Sequence[Span]) -> list[Any]:
    """The ``ctxlab.compaction`` events as the file holds them (their token counts are a
    replay's, not a bill: the census sets them aside)."""
    out: list[Any] = []
    for span in spans:
        raw = span.raw if isinstance(span.raw, Mapping) else {}
        events = raw.get("events")
        out += (
            [e for e in events if isinstance(e, Mapping) and e.get("name") == OTEL_EVENT]
            if isinstance(events, list)
            else []
        )
    return out


def _event(attrs: Mapping[str, Any]) -> dict[str, Any]:
    event: dict[str, Any] = {name: None for name in EVENT_FIELDS}
    for name in _BY_PLACEMENT:
        event[name] = {}
    for key, value in attrs.items():
        if not key.startswith(PREFIX):
            continue
        field, _, placement = key[len(PREFIX) :].partition(".")
        if field in _BY_PLACEMENT and placement:
            event[field][placement] = value
        elif field in EVENT_FIELDS and not placement:
            event[field] = value
    return event
