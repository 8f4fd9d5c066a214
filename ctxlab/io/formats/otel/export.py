"""Writing a `Transcript` (and a replay of it) as OpenTelemetry GenAI spans in OTLP JSON — the
shape the OTLP file exporter writes, Phoenix and Langfuse ingest, and `ctxlab.load` reads back
(the ``otel`` format).

Each reply is one ``chat`` span (span kind CLIENT) named ``chat {model}``, with the GenAI
semantic conventions' attributes (opentelemetry.io/docs/specs/semconv/gen-ai: the inference
span, the ``gen_ai.input.messages``/``gen_ai.output.messages`` ``{role, parts}`` shape):
``gen_ai.operation.name``, ``gen_ai.request.model``, ``gen_ai.conversation.id``,
``gen_ai.system_instructions``, ``gen_ai.tool.definitions`` (flat: ``{type, name,
description, parameters}``), the messages (each reply with its ``finish_reason``), and the
usage — ``gen_ai.usage.input_tokens`` (cache included, as the conventions count it),
``gen_ai.usage.output_tokens``, ``gen_ai.usage.cache_read.input_tokens`` and
``gen_ai.usage.cache_creation.input_tokens``.

Every evaluation of a replay's compaction trigger (`ctxlab.io.compaction_events`) is an event on
the span of the request it was made for. The conventions define no compaction event, so the
event and its attributes are ctxlab's own: ``ctxlab.compaction`` with ``ctxlab.compaction.*``
attributes (`OTEL_EVENT`, `otel_attributes`), fired or not.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxlab._version import __version__
from ctxlab.exceptions import UsageError
from ctxlab.io._compaction_events import PreparedStep, compaction_events
from ctxlab.io.formats.otel.compactions import OTEL_EVENT, otel_attributes
from ctxlab.messages import (
    AssistantMessage,
    ProviderUsage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.util._files import write_atomic
from ctxlab.util._path_args import path_argument

if TYPE_CHECKING:
    from ctxlab.io._transcript import Transcript

__all__ = ["to_otel", "write_otel"]

_CLIENT = 3
"""OTLP's ``SPAN_KIND_CLIENT``: an inference span's kind."""


def to_otel(
    transcript: Transcript,
    *,
    steps: Sequence[PreparedStep] = (),
    summary_costs: Mapping[int, float] | None = None,
) -> dict[str, Any]:
    """``transcript`` as OTLP JSON ``TracesData``: one span per reply, and on each the
    ``ctxlab.compaction`` events of ``steps`` (a replay of it: `ctxlab.replay`'s steps) made for
    that request — given no steps, the events the transcript was loaded with
    (``meta["compaction_events"]``). ``summary_costs``: each compaction's summary-call cost in dollars, by request
    number (a what-if's), written as ``ctxlab.compaction.summary_cost_usd``."""
    if not hasattr(transcript, "messages") or not hasattr(transcript, "meta"):
        msg = f"to_otel takes a Transcript (ctxlab.load's result), got {type(transcript).__name__}"
        raise UsageError(msg)
    replies = [i for i, m in enumerate(transcript.messages) if isinstance(m, AssistantMessage)]
    if not replies:
        msg = f"{transcript.name}: no reply to write a span for (OTel GenAI spans are requests)"
        raise UsageError(msg)
    trace = hashlib.sha256(transcript.name.encode("utf-8", "replace")).hexdigest()[:32]
    by_reply = _events_by_reply(transcript, steps, replies, summary_costs)
    starts = _starts(transcript, replies)
    spans = [
        _span(transcript, index, starts[index], trace, by_reply.get(index, ())) for index in replies
    ]
    resource = [_kv("service.name", "ctxlab"), _kv("ctxlab.source", transcript.meta.get("source"))]
    scope = {"name": "ctxlab", "version": __version__}
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": [a for a in resource if a is not None]},
                "scopeSpans": [{"scope": scope, "spans": spans}],
            }
        ]
    }


def write_otel(
    transcript: Transcript,
    path: str | os.PathLike[str],
    *,
    steps: Sequence[PreparedStep] = (),
    summary_costs: Mapping[int, float] | None = None,
) -> Path:
    """Write `to_otel`'s ``TracesData`` to ``path`` (JSON); returns the path."""
    target = path_argument(path, "path", what="the trace's file")
    data = to_otel(transcript, steps=steps, summary_costs=summary_costs)
    return write_atomic(target, json.dumps(data, ensure_ascii=False), what="trace")


def _events_by_reply(
    transcript: Transcript,
    steps: Sequence[PreparedStep],
    replies: Sequence[int],
    costs: Mapping[int, float] | None,
) -> dict[int, list[dict[str, Any]]]:
    # The replay's events (or, given no replay, those the transcript was loaded with), each on
    # the span of the reply it names; an event that names none is the n-th request's.
    listed = transcript.meta.get("compaction_events")
    events = (
        compaction_events(steps, summary_costs=costs)
        if steps
        else [e for e in listed if isinstance(e, Mapping)]
        if isinstance(listed, list)
        else []
    )
    out: dict[int, list[dict[str, Any]]] = {}
    for event in events:
        index = event.get("reply")
        if not isinstance(index, int) or index not in replies:
            number = event.get("request")
            number = number if isinstance(number, int) and 0 <= number < len(replies) else -1
            index = replies[number]
        out.setdefault(index, []).append(dict(event))
    return out


def _starts(transcript: Transcript, replies: Sequence[int]) -> dict[int, int]:
    """Each reply's span start in nanoseconds: its time. A reader orders spans by their start,
    so a reply the recording did not date takes the start before it (0, "no start", before
    the first dated one) rather than a time of its own."""
    starts: dict[int, int] = {}
    last = 0
    for index in replies:
        time = transcript.times.get(index)
        if time is not None:
            last = round(time * 1_000_000_000)
        starts[index] = last
    return starts


def _span(
    transcript: Transcript, index: int, start: int, trace: str, events: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    reply = transcript.messages[index]
    model = str(transcript.models[0]) if transcript.models else "unknown"
    attrs = [
        _kv("gen_ai.operation.name", "chat"),
        _kv("gen_ai.request.model", model),
        _kv("gen_ai.conversation.id", transcript.name),
        _kv("gen_ai.input.messages", json.dumps(_messages(transcript.messages[:index]))),
        _kv("gen_ai.output.messages", json.dumps(_messages([reply]))),
    ]
    if transcript.system:
        instructions = [{"type": "text", "content": transcript.system}]
        attrs.append(_kv("gen_ai.system_instructions", json.dumps(instructions)))
    if transcript.tools:
        # The conventions' definition: flat, its name at the top (a reader that validates it,
        # as Phoenix does, drops a list in Chat Completions' nested ``function`` shape).
        tools = [
            {
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": t.input_schema,
            }
            for t in transcript.tools
        ]
        attrs.append(_kv("gen_ai.tool.definitions", json.dumps(tools)))
    usage = transcript.usage.get(index)
    if usage is not None:
        attrs += _usage(usage)
    return {
        "traceId": trace,
        "spanId": hashlib.sha256(f"{trace}:{index}".encode()).hexdigest()[:16],
        "name": f"chat {model}",
        "kind": _CLIENT,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start),
        "attributes": [a for a in attrs if a is not None],
        "events": [
            {
                "timeUnixNano": str(start),
                "name": OTEL_EVENT,
                "attributes": [
                    a for k, v in otel_attributes(event).items() if (a := _kv(k, v)) is not None
                ],
            }
            for event in events
        ],
    }


def _usage(usage: ProviderUsage) -> list[dict[str, Any] | None]:
    # The conventions count cached tokens inside the input tokens.
    return [
        _kv("gen_ai.usage.input_tokens", usage.total_input_tokens),
        _kv("gen_ai.usage.output_tokens", usage.output_tokens),
        _kv("gen_ai.usage.cache_read.input_tokens", usage.cache_read_input_tokens),
        _kv("gen_ai.usage.cache_creation.input_tokens", usage.cache_creation_input_tokens),
    ]


def _messages(messages: Sequence[UserMessage | AssistantMessage]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in messages:
        parts: list[dict[str, Any]] = []
        for block in message.content:
            if isinstance(block, TextBlock):
                parts.append({"type": "text", "content": block.text})
            elif isinstance(block, ThinkingBlock):
                parts.append({"type": "reasoning", "content": block.thinking})
            elif isinstance(block, ToolUseBlock):
                parts.append(
                    {
                        "type": "tool_call",
                        "id": block.id,
                        "name": block.name,
                        "arguments": block.input,
                    }
                )
            elif isinstance(block, ToolResultBlock):
                parts.append(
                    {
                        "type": "tool_call_response",
                        "id": block.tool_use_id,
                        "response": block.text,
                    }
                )
            else:
                parts.append({"type": block.type})  # not modelled by the conventions: named
        if isinstance(message, AssistantMessage):
            # The conventions require an output message's ``finish_reason`` (a reader that
            # validates them, as Phoenix does, drops a list without it); a transcript keeps no
            # stop reason, so it is ctxlab's own reading (`stop_reason_of`): ``tool_call`` when
            # the reply calls tools, else ``stop``. A reply repeated in a later request's input
            # carries it too: the same reply, in the same shape.
            reason = "tool_call" if message.tool_uses else "stop"
            out.append({"role": message.role, "parts": parts, "finish_reason": reason})
        else:
            out.append({"role": message.role, "parts": parts})
    return out


def _kv(key: str, value: Any) -> dict[str, Any] | None:
    """One OTLP JSON ``KeyValue`` (None for a value of None: the attribute is left unset)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}  # int64 as a JSON string
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"stringValue": str(value)}}
