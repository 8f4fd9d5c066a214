"""Claude Code sessions: a line a record; the calls are the main thread's tool_use blocks, each
id once (which line's usage stands for a response is the engine's choice, issue 37: not
counted here)."""

from __future__ import annotations

from tests.io.contracts import FIXTURES, Case
from tests.io.contracts.count import FALSY, Count, Find, Lines

CONTRACT = [
    Case(
        FIXTURES / "sessions" / "claude_code_session.jsonl",
        records=Lines(),
        calls=Count(
            Find(
                "message.content.*",
                where={"type": "tool_use"},
                of={"type": "assistant", "isSidechain": FALSY},
            ),
            unique="id",
        ),
    )
]
