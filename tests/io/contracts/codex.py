"""Codex CLI rollouts: a line a record; the calls are the function, custom and shell call
items; a request's output is each new token count's last usage (a count sent again with the
next request's rate limits is not new)."""

from __future__ import annotations

from tests.io.contracts import FIXTURES, each
from tests.io.contracts.count import PRESENT, Count, Field, Find, Lines

CALL_TYPES = ("function_call", "custom_tool_call", "local_shell_call")
CONTRACT = each(
    sorted((FIXTURES / "codex").glob("rollout-*.jsonl")),
    records=Lines(),
    calls=Count(Find(where={"type": "response_item", "payload.type": CALL_TYPES})),
    outputs=Field(
        Find(
            where={
                "type": "event_msg",
                "payload.type": "token_count",
                "payload.info.last_token_usage": PRESENT,
            }
        ),
        "payload.info.last_token_usage.output_tokens",
        new_of="payload.info",
    ),
)
