"""The Vercel AI SDK's spans (``experimental_telemetry``): each model call is an
``ai.generateText.doGenerate`` / ``ai.streamText.doStream`` span (``ai.operationId``) whose
``ai.prompt.messages`` holds the request as the SDK's language-model prompt (JSON: ``system``,
``user``, ``assistant`` and ``tool`` messages of ``text``, ``image``, ``file``, ``tool-call``,
``tool-result`` and ``reasoning`` parts), with ``ai.prompt.tools``, ``ai.response.text``,
``ai.response.toolCalls`` and usage (``ai.usage.promptTokens``/``completionTokens``, 4.x and
5.x; ``inputTokens``/``outputTokens``/``cachedInputTokens`` where written).

Read from the SDK's own output: ``tests/fixtures/vercel_ai/make_fixture.mjs`` records a run of
``generateText`` (ai 5.0.277, its ``MockLanguageModelV2``) and exports its spans as OTLP JSON. The
outer ``ai.generateText`` span and the ``ai.toolCall`` spans repeat what the model-call spans
hold, so they are not read as calls.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxlab.io._build import as_mapping, image_block
from ctxlab.io.formats._chat import arguments_of, tool_schemas
from ctxlab.io.formats.otel.messages import CallParts, Turn, as_text, json_value
from ctxlab.messages import ProviderUsage

__all__ = ["MODEL_CALLS", "vercel_call"]

MODEL_CALLS = frozenset(
    {
        "ai.generateText.doGenerate",
        "ai.streamText.doStream",
        "ai.generateObject.doGenerate",
        "ai.streamObject.doStream",
    }
)
"""The ``ai.operationId`` of the spans that are one model call each."""


def _part(part: Mapping[str, Any]) -> dict[str, Any] | None:
    kind = part.get("type")
    if kind in ("text", "reasoning"):
        text = as_text(part.get("text", ""))
        if not text.strip():
            return None
        return (
            {"type": "text", "text": text}
            if kind == "text"
            else {"type": "thinking", "thinking": text}
        )
    if kind == "tool-call":
        raw = part.get("input", part.get("args"))
        return {
            "type": "tool_use",
            "id": str(part.get("toolCallId") or ""),
            "name": str(part.get("toolName") or "tool"),
            "input": arguments_of(raw) if not isinstance(raw, list) else {"input": raw},
        }
    if kind == "tool-result":
        output = part.get("output", part.get("result"))
        error = False
        if isinstance(output, Mapping) and "value" in output and "type" in output:
            # 5.x: {type: text | json | error-text | error-json | content, value}
            error = str(output["type"]).startswith("error")
            output = output["value"]
        return {
            "type": "tool_result",
            "tool_use_id": str(part.get("toolCallId") or ""),
            "content": as_text(output),
            "is_error": error or bool(part.get("isError")) or None,
        }
    if kind == "image" and isinstance(part.get("image"), str):
        image = part["image"]
        media = str(part.get("mediaType") or part.get("mimeType") or "image/png")
        url = image if image.startswith(("http", "data:")) else f"data:{media};base64,{image}"
        return image_block(url)
    if kind == "file":
        return {"type": "text", "text": f"[file: {part.get('mediaType') or 'unknown type'}]"}
    return None


def _turns(messages: Any) -> tuple[list[Turn], list[str]]:
    turns: list[Turn] = []
    system: list[str] = []
    for message in messages if isinstance(messages, list) else ():
        message = as_mapping(message)
        role, content = message.get("role"), message.get("content")
        if role == "system":
            system.append(as_text(content))
            continue
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        parts = parts if isinstance(parts, list) else []
        blocks = [b for p in parts if isinstance(p, Mapping) and (b := _part(p)) is not None]
        if blocks:
            turns.append(("assistant" if role == "assistant" else "user", blocks))
    return turns, system


def _usage(attrs: Mapping[str, Any]) -> ProviderUsage | None:
    total = attrs.get("ai.usage.inputTokens", attrs.get("ai.usage.promptTokens"))
    output = attrs.get("ai.usage.outputTokens", attrs.get("ai.usage.completionTokens"))
    if total is None and output is None:
        return None
    # The input count includes the cached tokens (as OpenAI's does).
    return ProviderUsage.with_cache_inside(total, output, attrs.get("ai.usage.cachedInputTokens"))


def vercel_call(attrs: Mapping[str, Any]) -> CallParts | None:
    """Inputs, outputs, System text, tools and usage of a model-call span; None for any other
    span."""
    if attrs.get("ai.operationId") not in MODEL_CALLS or "ai.prompt.messages" not in attrs:
        return None
    inputs, system = _turns(json_value(attrs.get("ai.prompt.messages")))
    reply: list[dict[str, Any]] = []
    text = attrs.get("ai.response.text")
    if isinstance(text, str) and text.strip():
        reply.append({"type": "text", "text": text})
    for call in json_value(attrs.get("ai.response.toolCalls")) or ():
        if isinstance(call, Mapping):
            block = _part({"type": "tool-call", **call})
            if block is not None:
                reply.append(block)
    raw_tools = attrs.get("ai.prompt.tools")
    tools = [json_value(t) for t in raw_tools] if isinstance(raw_tools, list) else []
    schemas = tool_schemas([t for t in tools if isinstance(t, Mapping)], "ai.prompt.tools")
    outputs: list[Turn] = [("assistant", reply)] if reply else []
    return inputs, outputs, "\n\n".join(s for s in system if s), schemas, _usage(attrs)
