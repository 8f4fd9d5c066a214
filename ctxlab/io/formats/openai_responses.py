"""OpenAI Responses API items (``input`` lists) — `ctxlab.io.formats._openai_responses`."""

from __future__ import annotations

from ctxlab.io._format import SessionFormat
from ctxlab.io.formats._messages import messages_reader
from ctxlab.io.formats._openai_responses import from_openai_responses, is_openai_responses

FORMAT = SessionFormat(
    name="openai_responses",
    tool="OpenAI Responses API input items",
    learned_from="the OpenAI API reference (responses: message, function_call, "
    "function_call_output, reasoning items)",
    priority=220,
    never="Chat Completions messages: items with a Responses type",
    records=is_openai_responses,
    read=messages_reader(from_openai_responses),
    census="items",
    messages=True,
)
