"""Pydantic AI messages: a record a part of a request or a response."""

from __future__ import annotations

from tests.io.contracts import data
from tests.io.contracts.count import Count, Find

PYDANTIC_AI = [
    {
        "kind": "request",
        "parts": [
            {"part_kind": "system-prompt", "content": "Be brief."},
            {"part_kind": "user-prompt", "content": "List the files."},
        ],
    },
    {
        "kind": "response",
        "parts": [
            {"part_kind": "text", "content": "Listing."},
            {"part_kind": "tool-call", "tool_name": "ls", "args": {}, "tool_call_id": "c1"},
        ],
    },
    {
        "kind": "request",
        "parts": [
            {"part_kind": "tool-return", "tool_name": "ls", "content": "a.py", "tool_call_id": "c1"}
        ],
    },
]
CONTRACT = [
    data(
        PYDANTIC_AI,
        "pydantic_ai messages",
        records=Count(Find("*.parts.*")),
        calls=Count(Find("*.parts.*", where={"part_kind": "tool-call"})),
    )
]
