"""Copilot CLI session events: a line a record; the calls are the main thread's (no agentId)
tool requests; the outputs each call's usage where the file keeps it (older CLIs), else each
reply's output count. The fixtures, counted from the file; and the events `USAGE_STANDS` that
tests/io/test_copilot_usage.py reads, with its census's tables."""

from __future__ import annotations

from typing import Any

from tests.io.contracts import FIXTURES, each, ruled
from tests.io.contracts.count import FALSY, PRESENT, Field, Find, FirstOf, Length, Lines


def session_events(*kinds_and_data: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Session events of these kinds and data, each its own id."""
    return [
        {"type": kind, "data": data, "id": f"e{n}", "parentId": None}
        for n, (kind, data) in enumerate(kinds_and_data)
    ]


def reply_event(text: str, **data: Any) -> tuple[str, dict[str, Any]]:
    """A reply's event: its text, and more of its data."""
    return ("assistant.message", {"messageId": text, "content": text, **data})


USER = ("user.message", {"content": "go"})
"""A user's turn's event."""
USAGE = {"model": "m", "inputTokens": 100, "outputTokens": 5, "cacheReadTokens": 60}
USAGE_STANDS = ruled(
    session_events(
        ("assistant.usage", USAGE),  # no reply yet: not a reply's
        USER,
        reply_event("a", outputTokens=5),
        ("assistant.usage", {**USAGE, "cacheWriteTokens": 30}),
        ("assistant.usage", USAGE),  # no reply since the previous usage
        USER,
        reply_event("b", outputTokens=7),
    ),
    "usages that stand for their replies' outputs",
    "event",
    read={"assistant.usage": 3, "user.message": 2, "assistant.message": 2},
    usage_lost={
        "replaced by a later usage of the same reply": 1,
        "no reply since the previous usage": 2,
    },
)
"""Usages before any reply, replaced by a later one of the same reply, and of no reply since
the previous usage."""
MAIN = {"agentId": FALSY}
REPLY = {**MAIN, "type": "assistant.message"}
CONTRACT = [
    *each(
        sorted((FIXTURES / "copilot" / "session-state").glob("*/*.jsonl")),
        records=Lines(),
        calls=Length(Find("data", of=REPLY), "toolRequests"),
        outputs=FirstOf(
            Field(Find("data", of={**MAIN, "type": "assistant.usage"}), "outputTokens"),
            Field(Find("data", of=REPLY, where={"outputTokens": PRESENT}), "outputTokens"),
        ),
    ),
    USAGE_STANDS,
]
