"""Copilot CLI session events: a line a record; the calls are the main thread's (no agentId)
tool requests; the outputs each call's usage where the file keeps it (older CLIs), else each
reply's output count."""

from __future__ import annotations

from tests.io.contracts import FIXTURES, each
from tests.io.contracts.count import FALSY, PRESENT, Field, Find, FirstOf, Length, Lines

MAIN = {"agentId": FALSY}
REPLY = {**MAIN, "type": "assistant.message"}
CONTRACT = each(
    sorted((FIXTURES / "copilot" / "session-state").glob("*/*.jsonl")),
    records=Lines(),
    calls=Length(Find("data", of=REPLY), "toolRequests"),
    outputs=FirstOf(
        Field(Find("data", of={**MAIN, "type": "assistant.usage"}), "outputTokens"),
        Field(Find("data", of=REPLY, where={"outputTokens": PRESENT}), "outputTokens"),
    ),
)
