"""OpenCode: an export (the session, each message and each of its parts) and a storage's
session (its file, its message files, and the part files of those messages). The fixtures,
counted from the file; and the export `FAILED_REPLIES` that tests/io/test_opencode_rules.py
reads, with its census's tables."""

from __future__ import annotations

from typing import Any

from tests.io.contracts import FIXTURES, Case, ruled
from tests.io.contracts.count import Count, Files, Find, Total


def export(*messages: Any) -> dict[str, Any]:
    """An export of session ``ses_1`` holding these messages."""
    return {"info": {"id": "ses_1", "projectID": "p"}, "messages": list(messages)}


def user(*parts: Any, **info: Any) -> dict[str, Any]:
    """A user message of these parts (``info``: more of its info)."""
    return {"info": {"role": "user", **info}, "parts": list(parts)}


def assistant(*parts: Any, **info: Any) -> dict[str, Any]:
    """A reply of these parts (``info``: more of its info)."""
    return {"info": {"role": "assistant", **info}, "parts": list(parts)}


def text(value: str, **extra: Any) -> dict[str, Any]:
    """A text part."""
    return {"type": "text", "text": value, **extra}


def finish(input: int = 10, output: int = 2, **more: Any) -> dict[str, Any]:
    """A step's finish part: its tokens."""
    return {"type": "step-finish", "tokens": {"input": input, "output": output, **more}}


START = {"type": "step-start"}
"""A step's start part."""
ABORTED = {"name": "MessageAbortedError"}
FAILED_REPLIES = ruled(
    export(
        user(text("go")),
        assistant(START, text("half"), finish(5, 1), error={"name": "APIError"}),
        # Aborted by the user after it wrote something: sent.
        assistant(START, text("partial"), finish(6, 1), error=ABORTED),
        # Aborted before any output (only its start and thinking): not sent.
        assistant(START, {"type": "reasoning", "text": "hm"}, error=ABORTED),
        # (OpenCode sends one whose parts are more than starts and thoughts: a step-finish too.)
        assistant(START, {"type": "reasoning", "text": "hm"}, finish(7, 1), error=ABORTED),
        assistant(text("ok"), error="not an error object"),
    ),
    "failed and aborted replies",
    "record",
    read={
        "info": 1,
        "message (user)": 1,
        "part (text)": 4,
        "message (assistant)": 5,
        "part (step-start)": 4,
        "part (step-finish)": 3,
        "part (reasoning)": 2,
    },
    skipped={
        "failed reply (not sent again)": 2,
        "part of a failed reply": 5,
    },
    usage_lost={
        "part of a failed reply: its step's usage": 1,
        "replaced: replies merged in a turn": 1,
    },
)
"""Replies failed, aborted after writing, aborted before any output (with or without a step's
finish), and one whose error is no error object."""
OPENCODE = FIXTURES / "opencode"
CONTRACT = [
    Case(
        OPENCODE / "export.json",
        records=Total(Count(Find("messages.*")), Count(Find("messages.*.parts.*")), plus=1),
    ),
    Case(
        next((OPENCODE / "storage" / "session").glob("*/*.json")),
        records=Total(
            Files("message/{stem}/*.json", root="../.."),
            Files("part/{stem}/*.json", root="../..", stems="message/*/*.json"),
            plus=1,
        ),
    ),
    FAILED_REPLIES,
]
