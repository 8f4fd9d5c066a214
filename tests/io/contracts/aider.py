"""Aider chat histories: a record a line (blank ones too); no tool calls; the outputs the
tokens received of each ``> Tokens:`` line of the first run."""

from __future__ import annotations

from tests.io.contracts import FIXTURES, Case
from tests.io.contracts.count import Lines, Matched, Total

STARTED = "# aider chat started at"
CONTRACT = [
    Case(
        FIXTURES / "aider" / ".aider.chat.history.md",
        records=Lines(blank=True),
        calls=Total(),
        outputs=Matched(r"^> Tokens:.* (\d+) received", after=STARTED, before=STARTED),
    )
]
