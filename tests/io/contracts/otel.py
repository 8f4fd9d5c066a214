"""OpenTelemetry traces: a record a span, whatever the export's shape — an OTLP body, the
Agents SDK's items, or a list of SDK spans."""

from __future__ import annotations

from tests.io.contracts import FIXTURES, Case
from tests.io.contracts.count import PRESENT, Count, Find

CONTRACT = [
    Case(
        FIXTURES / "vercel_ai" / "vercel_ai_otlp.json",
        records=Count(Find("resourceSpans.*.scopeSpans.*.spans.*")),
    ),
    Case(FIXTURES / "langfuse" / "langfuse_spans.json", records=Count(Find("*"))),
    Case(
        FIXTURES / "openai_agents" / "chat_trace.json",
        records=Count(Find("data.*", where={"span_data": PRESENT})),
    ),
    Case(FIXTURES / "openllmetry" / "openai_spans.json", records=Count(Find("*"))),
]
