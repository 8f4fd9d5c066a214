"""Anthropic Messages API messages: a record a message."""

from __future__ import annotations

from tests.io.contracts import data
from tests.io.contracts.count import Count, Find

ANTHROPIC = [
    {"role": "user", "content": "List the files."},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "ls", "input": {}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "a.py"}]},
    {"role": "assistant", "content": "One file: a.py."},
]
CONTRACT = [
    data(
        ANTHROPIC,
        "anthropic messages",
        records=Count(Find("*")),
        calls=Count(Find("*.content.*", where={"type": "tool_use"})),
    )
]
