"""pydantic-ai message JSON (``ModelMessagesTypeAdapter``) — `ctxlab.io.formats._frameworks`."""

from __future__ import annotations

from ctxlab.io._format import SessionFormat
from ctxlab.io.formats._frameworks import from_pydantic_ai, is_pydantic_ai, pydantic_ai_plain
from ctxlab.io.formats._messages import messages_reader

FORMAT = SessionFormat(
    name="pydantic_ai",
    tool="pydantic-ai messages (ModelMessagesTypeAdapter JSON)",
    learned_from="pydantic-ai's ModelMessagesTypeAdapter JSON (ModelRequest, ModelResponse parts)",
    priority=200,
    never="Gemini contents: messages with kind request/response and parts",
    records=is_pydantic_ai,
    read=messages_reader(from_pydantic_ai),
    census="messages",
    messages=True,
    plain=pydantic_ai_plain,
)
