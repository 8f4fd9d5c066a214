"""OpenTelemetry traces: every LLM span is one request, so any instrumented agent opens as a
`Transcript`.

Read: OTLP JSON (the file exporter's JSON Lines of ``TracesData``, an OTLP/HTTP JSON body), the
SDK's own span JSON (``ReadableSpan.tojson_value()``, what the console exporter prints) and SDK span
objects (read into plain spans by `ctxlab.io.formats.otel.spans`). Two conventions carry the content:

- the OpenTelemetry GenAI semantic conventions: ``gen_ai.system_instructions``,
  ``gen_ai.tool.definitions``, ``gen_ai.input.messages`` / ``gen_ai.output.messages`` as
  ``{role, parts}`` (``text``, ``tool_call``, ``tool_call_response`` parts), the
  ``gen_ai.usage.*`` counts — on the span or on its
  ``gen_ai.client.inference.operation.details`` event (pydantic-ai, the OpenAI Agents SDK, ...);
- OpenInference (``openinference.span.kind = LLM``): flat ``llm.input_messages.{i}.message.*``,
  ``llm.output_messages.*``, ``llm.tools.{i}.tool.json_schema``, ``llm.token_count.*``
  (LangChain/LangGraph, LlamaIndex, ... through OpenInference's instrumentors).

Both count cached tokens inside the input tokens; ctxlab's `ProviderUsage` keeps them apart (as
Anthropic does), so they are subtracted here.

Every span holds the whole conversation it sent; the transcript is the durable history: what a
request adds to the previous one's input and output. A request whose input does not extend the
previous one (the framework compacted or trimmed its history) is counted in ``meta`` as a
rewrite, and only its new tail joins the transcript.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._build import ConversationBuilder
from ctxlab.io.formats._chat import tool_schemas
from ctxlab.io.formats.otel.agents import AGENTS_KEY, RESPONSES_ONLY, agents_call
from ctxlab.io.formats.otel.conversations import Call, agents_of, conversations, history_of
from ctxlab.io.formats.otel.langfuse import langfuse_call
from ctxlab.io.formats.otel.messages import (
    Turn,
    as_text,
    genai_turns,
    indexed,
    indexed_prompts,
    json_value,
)
from ctxlab.io.formats.otel.spans import Span, is_otel, spans_of
from ctxlab.io.formats.otel.vercel import vercel_call
from ctxlab.messages import ProviderUsage
from ctxlab.messages._request import ToolSchema

__all__ = ["from_otel", "is_otel"]

_DETAILS_EVENT = "gen_ai.client.inference.operation.details"


# --- one LLM span as a request ----------------------------------------------------------------


def _genai_call(span: Span, group: str) -> Call | None:
    attrs = dict(span.attributes)
    for name, event_attrs in span.events:
        if name == _DETAILS_EVENT:
            attrs = {**event_attrs, **attrs}
    indexed_prompts(attrs)
    if "gen_ai.input.messages" not in attrs and "gen_ai.output.messages" not in attrs:
        return None
    inputs, system = genai_turns(json_value(attrs.get("gen_ai.input.messages")))
    outputs, _ = genai_turns(json_value(attrs.get("gen_ai.output.messages")))
    instructions = json_value(attrs.get("gen_ai.system_instructions"))
    if isinstance(instructions, str):
        system.insert(0, instructions)
    elif isinstance(instructions, list):
        texts = [as_text(p.get("content", "")) for p in instructions if isinstance(p, Mapping)]
        system[:0] = texts
    return Call(
        start=span.start,
        group=str(attrs.get("gen_ai.conversation.id") or group),
        system="\n\n".join(s for s in system if s),
        tools=tool_schemas(
            json_value(attrs.get("gen_ai.tool.definitions")), "gen_ai.tool.definitions"
        ),
        inputs=inputs,
        outputs=outputs,
        usage=_usage(
            attrs,
            "gen_ai.usage.input_tokens",
            "gen_ai.usage.output_tokens",
            "gen_ai.usage.cache_read.input_tokens",
            "gen_ai.usage.cache_creation.input_tokens",
        ),
    )


def _usage(
    attrs: Mapping[str, Any], total: str, output: str, read: str, write: str
) -> ProviderUsage | None:
    if total not in attrs and output not in attrs:
        return None
    # Input tokens include the cached ones in both conventions.
    try:
        return ProviderUsage.with_cache_inside(
            attrs.get(total), attrs.get(output), attrs.get(read), attrs.get(write)
        )
    except ValueError as exc:
        raise ValueError(f"{exc} (span attributes {total}, {output}, {read}, {write})") from exc


def _openinference_turns(attrs: Mapping[str, Any], prefix: str) -> tuple[list[Turn], list[str]]:
    turns: list[Turn] = []
    system: list[str] = []
    for message in indexed(attrs, prefix):
        role = message.get("message.role")
        content = message.get("message.content")
        texts = [content] if isinstance(content, str) and content else []
        texts += [
            str(part.get("message_content.text", ""))
            for part in indexed(message, "message.contents.")
            if part.get("message_content.type", "text") == "text"
        ]
        if role == "system":
            system.extend(texts)
            continue
        if role == "tool":
            call_id = str(message.get("message.tool_call_id") or "")
            turns.append(
                (
                    "user",
                    [{"type": "tool_result", "tool_use_id": call_id, "content": "\n".join(texts)}],
                )
            )
            continue
        blocks: list[dict[str, Any]] = [{"type": "text", "text": t} for t in texts]
        for call in indexed(message, "message.tool_calls."):
            arguments = json_value(call.get("tool_call.function.arguments"))
            blocks.append(
                {
                    "type": "tool_use",
                    "id": str(call.get("tool_call.id") or ""),
                    "name": str(call.get("tool_call.function.name") or "tool"),
                    "input": arguments if isinstance(arguments, dict) else {"arguments": arguments},
                }
            )
        turns.append(("assistant" if role in ("assistant", "model", "ai") else "user", blocks))
    return turns, system


def _framework_call(span: Span, group: str) -> Call | None:
    attrs = span.attributes
    found = vercel_call(attrs) or langfuse_call(attrs) or agents_call(attrs)
    if found is None:
        return None
    inputs, outputs, system, tools, usage = found
    session = attrs.get("ai.telemetry.metadata.sessionId") or attrs.get("session.id")
    return Call(span.start, str(session or group), system, tools, inputs, outputs, usage)


def _openinference_call(span: Span, group: str) -> Call | None:
    attrs = span.attributes
    if attrs.get("openinference.span.kind") != "LLM":
        return None
    inputs, system = _openinference_turns(attrs, "llm.input_messages.")
    outputs, _ = _openinference_turns(attrs, "llm.output_messages.")
    schemas = [json_value(t.get("tool.json_schema")) for t in indexed(attrs, "llm.tools.")]
    return Call(
        start=span.start,
        group=str(attrs.get("session.id") or group),
        system="\n\n".join(s for s in system if s),
        tools=tool_schemas([s for s in schemas if isinstance(s, Mapping)], "llm.tools"),
        inputs=inputs,
        outputs=outputs,
        usage=_usage(
            attrs,
            "llm.token_count.prompt",
            "llm.token_count.completion",
            "llm.token_count.prompt_details.cache_read",
            "llm.token_count.prompt_details.cache_write",
        ),
    )


def from_otel(
    data: Any, where: str, episode: int = 0
) -> tuple[ConversationBuilder, str, tuple[ToolSchema, ...], dict[str, Any]]:
    """The conversation, System text, tool schemas and notes of one conversation of a trace
    export (``episode`` picks it, in order of first request)."""
    # One pass: read the spans' calls, group them, then build the chosen conversation with a
    # census of every span (kept whole: the steps share the span list and the groups).
    spans = spans_of(data, where)
    calls = _model_calls(spans, where)
    groups = conversations(calls)
    chosen = _episode(groups, episode, where)
    builder = ConversationBuilder(where, unit="span")
    _set_apart(builder, spans, calls, chosen)
    rewritten, tools = history_of(builder, chosen)
    meta: dict[str, Any] = {
        "requests": len(chosen),
        "conversations": len(groups),
        "agents": [
            {"episode": n, "agent": g[0].agent or None, "requests": len(g)}
            for n, g in enumerate(groups)
        ],
    }
    if rewritten:
        meta["rewritten_requests"] = rewritten
    system = next((c.system for c in reversed(chosen) if c.system), "")
    return builder, system, tools, meta


def _model_calls(spans: list[Span], where: str) -> list[Call]:
    """Every span that is a model call, as a `Call`, in the spans' order; an error when none is."""
    calls: list[Call] = []
    agents = agents_of(spans)
    for span in spans:
        trace = f"trace:{span.trace}"
        # The Vercel AI SDK's and Langfuse's model-call spans may carry gen_ai.* usage, their
        # messages in attributes of their own: read first.
        call = (
            _framework_call(span, trace)
            or _genai_call(span, trace)
            or _openinference_call(span, trace)
        )
        if call is not None:
            call.agent, call.span = agents.get(span.id, ""), span.id
            call.at = span.start or None  # nanoseconds; 0: the span says no start
            calls.append(call)
    if not calls and any(
        isinstance(d := s.attributes.get(AGENTS_KEY), Mapping) and d.get("type") == "response"
        for s in spans
    ):
        msg = f"{where}: {RESPONSES_ONLY}"
        raise MessageFormatError(msg)
    if not calls:
        msg = (
            f"{where}: no LLM span with content (gen_ai.input.messages / gen_ai.output.messages, "
            "OpenInference llm.input_messages, or the AI SDK's ai.prompt.messages); record the "
            "trace with message content enabled"
        )
        raise MessageFormatError(msg)
    return calls


def _episode(groups: list[list[Call]], episode: int, where: str) -> list[Call]:
    """The calls of conversation ``episode``; an error naming the range when there is none."""
    if not 0 <= episode < len(groups):
        msg = (
            f"{where}: no conversation {episode}: the trace holds {len(groups)} (episode=0 to "
            f"episode={len(groups) - 1})"
        )
        raise MessageFormatError(msg)
    return groups[episode]


def _set_apart(
    builder: ConversationBuilder, spans: list[Span], calls: list[Call], chosen: list[Call]
) -> None:
    """Count in the census the spans the chosen conversation does not read."""
    # What the spans set apart hold (a run's totals, a tool's arguments, another conversation)
    # is set aside with them.
    model_calls = {call.span for call in calls}
    apart = [s.raw for s in spans if s.id not in model_calls or not s.id]
    builder.record("span of no model call", len(spans) - len(calls), raw=apart)
    builder.skip("span of no model call")
    chosen_spans = {call.span for call in chosen}
    others = [s.raw for s in spans if s.id in model_calls and s.id not in chosen_spans]
    builder.record("model call span", len(calls) - len(chosen), raw=others)
    builder.skip("in another conversation (episode=N opens it)")
