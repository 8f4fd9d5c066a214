"""Goose sessions: the JSON Lines of older versions (a record a line) and an export (the
session, then its messages). The fixtures, counted from the file; and the sessions
tests/io/test_goose_rules.py reads item by item (`EACH_ITEM`, `NOTHING_SENT`), with their
census's tables."""

from __future__ import annotations

from typing import Any

from tests.io.contracts import FIXTURES, Case, ruled, written
from tests.io.contracts.count import Count, Find, Lines, Total

META = {"working_dir": "/w", "description": "fix it", "message_count": 2}
"""A session's metadata line."""


def message(role: str, *content: Any, **extra: Any) -> dict[str, Any]:
    """A message line of ``role`` holding the content items given."""
    return {"id": None, "role": role, "created": 1, "content": list(content), **extra}


def text(value: str) -> dict[str, Any]:
    """A text content item."""
    return {"type": "text", "text": value}


EACH_ITEM = ruled(
    written(
        "s.jsonl",
        [
            {**META, "id": "g1", "name": 5, "input_tokens": 120, "total_tokens": "130"},
            message(
                "user",
                text("look"),
                text("  "),
                {"type": "image", "data": "iVBORw0KGgo="},
                {"type": "image", "data": "R0lGOD", "mimeType": "image/gif"},
                {"type": "image", "data": 5},
                {"type": "toolConfirmationRequest"},
                "junk",
            ),
            message(
                "assistant",
                {"type": "thinking", "thinking": "hm", "signature": "s"},
                {"type": "thinking"},
                {"type": "redactedThinking", "data": "ENC"},
                {"type": "redactedThinking"},
                {
                    "type": "toolRequest",
                    "id": "t1",
                    "toolCall": {
                        "status": "success",
                        "value": {"name": "shell", "arguments": {"c": 1}},
                    },
                },
                {
                    "type": "toolRequest",
                    "id": "t2",
                    "toolCall": {"status": "error", "error": "bad json"},
                },
                {"type": "toolRequest", "id": "t3", "toolCall": {"value": {"arguments": [1]}}},
            ),
            message(
                "user",
                {
                    "type": "toolResponse",
                    "id": "t1",
                    "toolResult": {"status": "success", "value": [text("a"), text("b"), {"x": 1}]},
                },
                {
                    "type": "toolResponse",
                    "id": "t2",
                    "toolResult": {"status": "error", "error": "no"},
                },
                {"type": "toolResponse", "id": "t3", "toolResult": {"status": "error"}},
            ),
        ],
    ),
    "each item",
    "line",
    read={"session metadata": 1, "user message": 2, "assistant message": 1},
    skipped={
        "image item": 1,
        "toolConfirmationRequest item": 1,
        "unreadable item": 1,
        "redactedThinking item": 1,
    },
)
"""Items of each kind, as the model saw them, and those it did not (an image of no bytes, a
confirmation request, junk, a redacted thought without data)."""
NOTHING_SENT = ruled(
    written(
        "s.jsonl",
        [
            message("user", {"type": "text", "text": None}),
            message("user", {"type": "image", "data": ""}),  # an image without its bytes
            message("assistant", {"type": "toolRequest", "toolCall": {"value": {"name": "x"}}}),
            message(
                "user",
                {"type": "toolResponse", "toolResult": {"status": "success", "value": [text("r")]}},
            ),
        ],
    ),
    "what no request can hold",
    "line",
    read={"user message": 3, "assistant message": 1},
    skipped={
        "message without content for the model": 1,
        # Each a message of only that part: skipped once, for it.
        "image without data": 1,
        "tool result without a call id": 1,
    },
)
"""Messages of nothing a request can hold: a text of no text, an image of no bytes, a result
without a call id."""

CONTRACT = [
    Case(FIXTURES / "goose" / "20250514_103000.jsonl", records=Lines()),
    Case(FIXTURES / "goose" / "export.json", records=Total(Count(Find("conversation.*")), plus=1)),
    EACH_ITEM,
    NOTHING_SENT,
]
