"""OpenTelemetry trace exports (GenAI semantic conventions, OpenInference, Langfuse and the
OpenAI Agents SDK's exports): every LLM span one request (`ctxlab.io.formats.otel.parse` says what is read
and where it was learned). Asked first: a span export is known by its shape alone."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ctxlab.io._format import SessionFormat
from ctxlab.io._readers import built_transcript
from ctxlab.io._transcript import Transcript
from ctxlab.io.formats.otel.compactions import compaction_events_of, raw_events
from ctxlab.io.formats.otel.parse import from_otel
from ctxlab.io.formats.otel.spans import is_otel, spans_of


def _read(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    builder, system, tools, notes = from_otel(data, where, episode)
    spans = spans_of(data, where)
    events = compaction_events_of(spans)
    if events:
        notes["compaction_events"] = events  # ctxlab's own (`ctxlab.io.to_otel`)
        builder.set_aside(raw_events(spans), "ctxlab's compaction events (a replay's counts)")
    return built_transcript(name, builder, {**meta, **notes}, system, tools)


def _plain(items: Sequence[Any]) -> Sequence[Any] | None:
    # SDK spans (an in-memory exporter's ``get_finished_spans()``): their own JSON.
    if type(items[0]).__module__.startswith("opentelemetry") and hasattr(items[0], "to_json"):
        return [json.loads(item.to_json()) for item in items]
    return None


FORMAT = SessionFormat(
    name="otel",
    tool="OpenTelemetry trace exports: OTLP JSON, SDK span JSON, Jaeger, Phoenix, Langfuse, "
    "OpenAI Agents SDK",
    learned_from="the OpenTelemetry GenAI semantic conventions and OpenInference (see "
    "ctxlab.io.formats.otel.parse)",
    priority=0,
    never="a chat format's messages: only spans, or span exports, are claimed",
    document=is_otel,
    records=is_otel,
    read=_read,
    plain=_plain,
    episodes=True,
    census="spans",
)
