"""Continue sessions: a record an item of the history. The fixtures, counted from the file; and
the session `EACH_ITEM` that tests/io/test_continue_rules.py reads item by item, with its
census's tables."""

from __future__ import annotations

from typing import Any

from tests.io.contracts import FIXTURES, each, ruled, written
from tests.io.contracts.count import Count, Find


def item(role: str, content: Any = "", **extra: Any) -> dict[str, Any]:
    """A history item holding a message of ``role`` (``message=``: more of its fields)."""
    message = {"role": role, "content": content, **extra.pop("message", {})}
    return {"message": message, **extra}


def call(call_id: Any, name: Any = "read", arguments: Any = '{"path": "a"}') -> dict[str, Any]:
    """A tool call of a message's ``toolCalls``."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


HISTORY = [
    item(
        "system",
        [
            {"type": "text", "text": "Be brief."},
            {"type": "image"},
            {"type": "text"},
            {"type": "text", "text": "Cite files."},
            {"type": "text"},
        ],
    ),
    item("system", "Use tools."),
    item("system", "  "),
    item(
        "user",
        [
            "junk",
            {"type": "text", "text": "fix it"},
            {"type": "text", "text": "  "},
            {"type": "imageUrl", "imageUrl": {"url": "data:image/png;base64,iVBORw0KGgo="}},
            {"type": "imageUrl", "imageUrl": {}},
        ],
        contextItems=[{"content": "```py a.py\nx=1\n```"}, {"content": " "}, "junk", {}],
        promptLogs=[{"prompt": "p"}, {"prompt": "q"}],
    ),
    item("thinking", "Reading a first.", message={"signature": "sig"}),
    item("thinking", [{"type": "text", "text": "More."}], message={"signature": 5}),
    item("thinking", "", message={"redactedThinking": "ENC"}),
    item("thinking", " "),
    item("critic", "hm"),
    "junk",
    item("user", "again"),
]
"""Items of each kind Continue writes, and what it does not send (empty, unreadable)."""
SESSION = {"title": "T", "workspaceDirectory": "/w", "chatModelTitle": "M"}
EACH_ITEM = ruled(
    written("s.json", {"sessionId": "s1", "history": HISTORY, **SESSION}),
    "each item",
    "history item",
    read={
        "system message": 3,
        "user message": 2,
        "thinking message": 4,
        "critic message": 1,
        "item without a message": 1,
    },
    skipped={
        "empty message": 2,
        "prompt log": 2,
        "message of role 'critic'": 1,
        "history item without a message": 1,
    },
)
CONTRACT = [
    *each(
        sorted((FIXTURES / "continue" / "sessions").glob("*-*.json")),
        records=Count(Find("history.*")),
    ),
    EACH_ITEM,
]
