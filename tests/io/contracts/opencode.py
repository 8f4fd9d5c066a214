"""OpenCode: an export (the session, each message and each of its parts) and a storage's
session (its file, its message files, and the part files of those messages)."""

from __future__ import annotations

from tests.io.contracts import FIXTURES, Case
from tests.io.contracts.count import Count, Files, Find, Total

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
]
