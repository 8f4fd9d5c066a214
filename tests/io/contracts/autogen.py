"""AutoGen saved states: every list of messages in the state — each llm_context's, each
buffer, each team thread."""

from __future__ import annotations

from tests.io.contracts import FIXTURES, each
from tests.io.contracts.count import Count, Find, Total

CONTRACT = each(
    sorted((FIXTURES / "autogen").glob("*.json")),
    records=Total(
        Count(Find("**.llm_context.messages.*")),
        Count(Find("**.message_buffer.*")),
        Count(Find("**.message_thread.*")),
    ),
)
