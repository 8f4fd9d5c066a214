"""Langfuse's spans (its SDK 3.x and later is built on OpenTelemetry): a model call is an
observation of type ``generation`` whose ``langfuse.observation.input`` holds the messages it
was sent (a list in the OpenAI chat shape, or ``{"messages": [...], "tools": [...]}`` as its
OpenAI integration records them), ``langfuse.observation.output`` the reply,
``langfuse.observation.usage_details`` the usage and ``langfuse.observation.model.name`` the
model; ``session.id`` groups a session's traces.

Read from the SDK's own output: ``tests/fixtures/langfuse/make_fixture.py`` traces a tool loop
with langfuse 5.2.0 and exports its spans. Usage details are the provider's own dict where an
integration passed it (OpenAI's ``prompt_tokens`` with ``prompt_tokens_details``, Anthropic's
``input_tokens`` with the cache fields) or Langfuse's keys, each priced apart (``input``,
``output``, ``input_cached_tokens`` / ``cache_read_input_tokens``, ``cache_creation_input_tokens``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxlab.io.formats._chat import openai_usage, tool_schemas
from ctxlab.io.formats.otel.messages import CallParts, genai_turns, json_value
from ctxlab.messages import ProviderUsage

__all__ = ["langfuse_call"]


_READ = ("input_cached_tokens", "cache_read_input_tokens", "cached_tokens", "cache_read")
_WRITE = ("cache_creation_input_tokens", "input_cache_creation", "cache_write")


def _usage(details: Any) -> ProviderUsage | None:
    if not isinstance(details, Mapping) or not details:
        return None
    if "prompt_tokens" in details:  # OpenAI's usage, as its integration passes it
        return openai_usage(details)

    def first(keys: tuple[str, ...]) -> Any:
        return next((details[k] for k in keys if details.get(k) is not None), None)

    # Langfuse's keys are priced apart: "input" does not hold the cache's tokens (nor does
    # Anthropic's input_tokens).
    return ProviderUsage(
        first(("input", "input_tokens")),
        first(("output", "output_tokens", "completion_tokens")),
        first(_READ),
        first(_WRITE),
    )


def langfuse_call(attrs: Mapping[str, Any]) -> CallParts | None:
    """Inputs, outputs, System text, tools and usage of a generation observation; None for
    any other span."""
    if attrs.get("langfuse.observation.type") != "generation":
        return None
    sent = json_value(attrs.get("langfuse.observation.input"))
    tools: Any = ()
    if isinstance(sent, Mapping):
        tools = sent.get("tools") or ()
        sent = sent.get("messages", [sent])
    if isinstance(sent, str):
        sent = [{"role": "user", "content": sent}]
    inputs, system = genai_turns(sent)
    outputs, _ = genai_turns(json_value(attrs.get("langfuse.observation.output")))
    schemas = tool_schemas(list(tools) if isinstance(tools, list) else [], "langfuse tools")
    usage = _usage(json_value(attrs.get("langfuse.observation.usage_details")))
    return inputs, outputs, "\n\n".join(s for s in system if s), schemas, usage
