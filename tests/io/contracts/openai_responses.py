"""OpenAI Responses API items: a record an item."""

from __future__ import annotations

from tests.io.contracts import data
from tests.io.contracts.count import Count, Find

RESPONSES = [
    {"type": "message", "role": "user", "content": "List the files."},
    {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "c1", "output": "a.py"},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "a.py"}]},
]
CONTRACT = [
    data(
        RESPONSES,
        "responses items",
        records=Count(Find("*")),
        calls=Count(Find("*", where={"type": "function_call"})),
    )
]
