"""Letta agent files (``.af``): a record a message — of every agent, in the v2 file. The
fixtures, counted from the file; and the agent `CALLS_AND_PARTS` that
tests/io/test_letta_rules.py reads part by part, with its census's tables."""

from __future__ import annotations

from typing import Any

from tests.io.contracts import FIXTURES, each, ruled
from tests.io.contracts.count import ABSENT, Find, Length, Total


def agent_v1(*messages: Any, indices: Any = None, **agent: Any) -> dict[str, Any]:
    """A v1 agent file of these messages, all in context unless ``indices`` says otherwise."""
    positions = list(range(len(messages))) if indices is None else indices
    return {"messages": list(messages), "in_context_message_indices": positions, **agent}


def call(call_id: Any, name: Any = "send_message", arguments: Any = '{"m": "hi"}') -> Any:
    """A tool call of a message's ``tool_calls`` (OpenAI's shape, as Letta keeps it)."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


CALLS_AND_PARTS = ruled(
    agent_v1(
        {"role": "assistant", "content": "Booting.", "tool_calls": [call("boot")]},
        {"role": "tool", "tool_call_id": "boot", "content": "ok"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "text", "text": " "},
                "junk",
                {"type": "image", "source": {"type": "url", "url": "https://x/a.png"}},
                {"type": "image", "source": {"type": "base64", "data": "x"}},
                {"type": "image", "source": {"type": "base64", "url": "https://x/b.png"}},
                {"type": "image"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "reasoning", "reasoning": "hm", "signature": "s"},
                {"type": "reasoning", "signature": 5},
                {"type": "redacted_reasoning", "data": "ENC"},
                {"type": "omitted_reasoning"},
            ],
            # A call of no id, name or arguments names nothing to run or answer: left out.
            "tool_calls": [
                call("c1"),
                call(None, None, None),
                "junk",
                call("c3", "search", '{"q": 1}'),
            ],
        },
        {
            "role": "tool",
            "tool_returns": [
                {"tool_call_id": "c1", "func_response": "sent", "status": "success"},
                "junk",
            ],
        },
        {
            "role": "tool",
            "content": "",
            "tool_returns": [{"tool_call_id": "c3", "func_response": "found", "status": "error"}],
        },
        {"role": "approval", "content": "ok?"},
        {"role": "user", "content": [{"type": "image", "source": {"type": "url", "url": ""}}]},
        {"role": "user", "content": ""},
        {"role": "assistant", "content": []},
        "junk",
    ),
    "calls, returns and parts",
    "message",
    read={
        "assistant message": 3,
        "tool message": 3,
        "user message": 3,
        "approval message": 1,
        "unreadable message": 1,
    },
    skipped={
        "opening reply before any user message": 1,
        "result of an opening reply's call": 1,
        "unreadable part": 1,
        "omitted reasoning": 1,
        "tool call without an id, a name or arguments": 1,
        "approval message": 1,
        "empty message": 2,
        "unreadable message": 1,
        "image without data": 1,  # a message of only it: skipped once, for it
    },
)
"""An opening exchange, parts of each kind, calls and their returns, and what no request holds
(an approval, empty messages, an image of no URL, junk)."""

CONTRACT = [
    *each(
        sorted((FIXTURES / "letta").glob("*.af")),
        records=Total(
            Length(Find("agents.*"), "messages"), Length(Find(of={"agents": ABSENT}), "messages")
        ),
    ),
    CALLS_AND_PARTS,
]
