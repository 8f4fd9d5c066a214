"""The OpenAI Agents SDK's traces, as its exporter sends them (``{"data": [...]}`` of each trace's
and span's ``export()``; one item a line in a JSON Lines file of a custom processor).

A model call on the Chat Completions API is a ``generation`` span: its ``input`` the messages
sent (OpenAI chat shape, the instructions as a system message), its ``output`` the reply, its
``usage`` the SDK's (``input_tokens`` holding the cached ones, ``input_tokens_details``). A call on
the Responses API — the SDK's default model — is a ``response`` span, which the SDK exports with
its response id and usage only: no message to read.

Read from the SDK's own output: ``tests/fixtures/openai_agents/make_fixture.py`` runs an agent
with openai-agents 0.24.0 against the project's local model server and keeps the export.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxlab.io.formats.otel.messages import CallParts, genai_turns
from ctxlab.messages import ProviderUsage

__all__ = ["AGENTS_KEY", "RESPONSES_ONLY", "agents_call", "agents_items"]

AGENTS_KEY = "openai_agents.span_data"
"""The attribute under which a span of the SDK's export carries its ``span_data``."""

RESPONSES_ONLY = (
    "its model calls are OpenAI Agents SDK response spans, which the SDK exports with their "
    "response ids only (no messages): trace the agent on OpenAIChatCompletionsModel, or load "
    "the run's items (result.to_input_list(), format='openai_responses')"
)


def agents_items(value: Any) -> list[Mapping[str, Any]] | None:
    """The items of an Agents SDK export (``{"data": [...]}`` or a list of them), or None."""
    items = value.get("data") if isinstance(value, Mapping) else value
    if not isinstance(items, list) or not items:
        return None
    head = [i for i in items[:10] if isinstance(i, Mapping)]
    if head and all(i.get("object") in ("trace", "trace.span") for i in head):
        return [i for i in items if isinstance(i, Mapping)]
    return None


def _usage(usage: Any) -> ProviderUsage | None:
    if not isinstance(usage, Mapping):
        return None
    details = usage.get("input_tokens_details")
    details = details if isinstance(details, Mapping) else {}
    return ProviderUsage.with_cache_inside(
        usage.get("input_tokens"),
        usage.get("output_tokens"),
        details.get("cached_tokens"),
        details.get("cache_write_tokens"),
    )


def agents_call(attrs: Mapping[str, Any]) -> CallParts | None:
    """Inputs, outputs, System text, tools and usage of a generation span; None otherwise."""
    data = attrs.get(AGENTS_KEY)
    if not isinstance(data, Mapping) or data.get("type") != "generation":
        return None
    inputs, system = genai_turns(data.get("input"))
    outputs, _ = genai_turns(data.get("output"))
    return inputs, outputs, "\n\n".join(s for s in system if s), (), _usage(data.get("usage"))
