"""Copilot CLI session events: a line a record; the calls are the main thread's (no agentId)
tool requests; the outputs each call's usage where the file keeps it (older CLIs), else each
reply's output count. The fixtures, counted from the file; and the events that
tests/io/test_copilot_usage.py reads (`USAGE_STANDS`, `REASONING_ONCE`, `COMPACTION_CALL`), with
their census's tables."""

from __future__ import annotations

from typing import Any

from tests.io.contracts import FIXTURES, Case, each, ruled
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


def events_case(label: str, *events: tuple[str, dict[str, Any]], **tables: Any) -> Case:
    """A case of these session events (`session_events`), written here for the rules a rule
    test exercises: its census counts in events, its ``read`` table and others (`ruled`)."""
    return ruled(session_events(*events), label, "event", **tables)


USER = ("user.message", {"content": "go"})
"""A user's turn's event."""
USAGE = {"model": "m", "inputTokens": 100, "outputTokens": 5, "cacheReadTokens": 60}
USAGE_STANDS = events_case(
    "usages that stand for their replies' outputs",
    ("assistant.usage", USAGE),  # no reply yet: not a reply's
    USER,
    reply_event("a", outputTokens=5),
    ("assistant.usage", {**USAGE, "cacheWriteTokens": 30}),
    ("assistant.usage", USAGE),  # no reply since the previous usage
    USER,
    reply_event("b", outputTokens=7),
    read={"assistant.usage": 3, "user.message": 2, "assistant.message": 2},
    usage_lost={
        "replaced by a later usage of the same reply": 1,
        "no reply since the previous usage": 2,
    },
)
"""Usages before any reply, replaced by a later one of the same reply, and of no reply since
the previous usage."""
REASONING_ONCE = events_case(
    "reasoning events and texts, each thought once",
    USER,
    ("assistant.reasoning", {"reasoningId": "r1", "content": "Look first."}),
    reply_event("a", reasoningText="Look first.", encryptedContent="x"),
    USER,
    reply_event("b", reasoningText="Then answer."),
    ("assistant.reasoning", {"reasoningId": "r2", "content": " "}),
    read={"user.message": 2, "assistant.reasoning": 2, "assistant.message": 2},
    skipped={
        "reasoning text also recorded as its reasoning event": 1,
        "encrypted reasoning (session-bound, not readable)": 1,
        "empty reasoning": 1,
    },
)
"""A thought recorded as its event and as its reply's text, one as the reply's text alone, an
encrypted one and an empty event."""
SPENT = {"inputTokens": 900, "outputTokens": 80, "cacheReadTokens": 500, "cacheWriteTokens": 9}
"""A compaction call's own usage, as the event reports it."""
COMPACTION_CALL = events_case(
    "a compaction's own call",
    USER,
    reply_event("a"),
    (
        "session.compaction_complete",
        {"success": True, "summaryContent": "<summary>S</summary>", "compactionTokensUsed": SPENT},
    ),
    ("session.compaction_complete", {"success": False, "compactionTokensUsed": SPENT}),
    ("system.notification", {"content": "<system_notification>done</system_notification>"}),
    ("session.usage_checkpoint", {"totalNanoAiu": 21_893_915_000}),
    read={
        "user.message": 1,
        "assistant.message": 1,
        "session.compaction_complete": 2,
        "system.notification": 1,
        "session.usage_checkpoint": 1,
    },
    skipped={"compaction that failed": 1},
    usage_lost={
        "a compaction call's (in meta['compactions'])": 1,
        "a compaction call that gave no summary": 1,
    },
)
"""A compaction with its call's usage, one that failed, a notification and the session's
premium-request checkpoint."""
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
    REASONING_ONCE,
    COMPACTION_CALL,
]
